# The two set-up commands (see README.md):
#   make demo   install what is missing, build, run the quickstart simulation
#   make test   install what is missing, build with ASan+UBSan, run every test with ctest
JOBS ?= $(shell nproc)

.PHONY: deps build demo test bench clean

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON >/dev/null
	@cmake --build build -j $(JOBS) --target tessera

demo: build
	./build/src/tessera sim examples/quickstart.yaml

test: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON \
	  -DTESSERA_BENCH=OFF >/dev/null
	@cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

bench: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON >/dev/null
	@cmake --build build -j $(JOBS)

clean:
	rm -rf build build-asan
