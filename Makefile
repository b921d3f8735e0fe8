# The two set-up commands (see README.md):
#   make demo   install what is missing, build, run the quickstart simulation
#   make test   install what is missing, build with ASan+UBSan, run every test with ctest
JOBS ?= $(shell nproc)

.PHONY: deps build demo test bench clean k8s-apiserver

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
	@$(MAKE) --no-print-directory k8s-apiserver
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# kube-apiserver and kube-scheduler v1.20 built from Debian's kubernetes source package for the
# Kubernetes integration tests (cached in ~/.cache/tessera-k8s; minutes the first time only).
# A failed build does not fail `make test`: the integration tests then skip, and say so here.
k8s-apiserver:
	@nice -n 5 scripts/k8s/build-apiserver.sh --with-scheduler || { \
	  echo "***************************************************************************"; \
	  echo "*** kube-apiserver could not be built (see above): the Kubernetes       ***"; \
	  echo "*** integration tests (k8s_integration_test) will be SKIPPED.           ***"; \
	  echo "***************************************************************************"; }

bench: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON >/dev/null
	@cmake --build build -j $(JOBS)

clean:
	rm -rf build build-asan
