# The two set-up commands (see README.md):
#   make demo   install what is missing, build, run the quickstart simulation
#   make test   install what is missing, build every target in Release, build with ASan+UBSan,
#               run every test with ctest (warnings are errors in both builds)
JOBS ?= $(shell nproc)
# ccache (installed by scripts/install-deps.sh) keeps compiled objects between builds and between
# clones: paths are taken relative to the clone's root, so CI's fresh clone reuses a warm cache.
CCACHE := $(shell command -v ccache 2>/dev/null)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_LAUNCHER := $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))

.PHONY: deps build demo test release-check bench clean k8s-apiserver k8s-controllers \
  dra-celcorpus

deps:
	@scripts/install-deps.sh

# A user's build: warnings are not errors (TESSERA_WERROR off), so that a compiler newer or
# older than CI's cannot break it with a warning.
build: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON -DTESSERA_WERROR=OFF \
	  $(CMAKE_LAUNCHER) >/dev/null
	@cmake --build build -j $(JOBS) --target tessera

demo: build
	./build/src/tessera sim examples/quickstart.yaml

# CI (.ci/run) and developers: every target in Release once (the -O3 build users get, where GCC
# warns of things a Debug build does not see), then the ASan+UBSan build the tests run in; both
# with warnings as errors.
test: deps release-check
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON \
	  -DTESSERA_BENCH=OFF -DTESSERA_WERROR=ON $(CMAKE_LAUNCHER) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@$(MAKE) --no-print-directory k8s-apiserver
	@$(MAKE) --no-print-directory k8s-controllers
	@$(MAKE) --no-print-directory dra-celcorpus
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# The Kubernetes control plane of the integration tests: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler built from Go modules (scripts/k8s/controlplane/),
# 1.37 (the newest, every test) and 1.34 (the oldest supported, a smoke subset), cached in
# ~/.cache/tessera-k8s. In CI (CI=true) a control plane that cannot be built fails `make test`;
# on a developer's machine the integration tests then skip, and say so here.
K8S_VERSIONS ?= 1.37 1.34
k8s-apiserver:
	@for v in $(K8S_VERSIONS); do \
	  TESSERA_K8S_VERSION=$$v nice -n 5 scripts/k8s/build-apiserver.sh >/dev/null && continue; \
	  if [ "$$CI" = "true" ]; then \
	    echo "make test: the Kubernetes $$v control plane could not be built (see above)"; exit 1; fi; \
	  echo "***************************************************************************"; \
	  echo "*** Kubernetes $$v could not be built (see above): the Kubernetes        ***"; \
	  echo "*** integration tests on it will be SKIPPED.                            ***"; \
	  echo "***************************************************************************"; \
	done

# The job controllers the integration tests run (tests/k8s/job_controllers_test.cc): JobSet,
# LeaderWorkerSet, KubeRay, Kubeflow Trainer v2 and MPI operator managers built from Go modules
# (scripts/k8s/controllers/), cached in
# ~/.cache/tessera-k8s/controllers/bin. As for the control plane: CI=true fails when one cannot
# be built; elsewhere their tests skip.
k8s-controllers:
	@if ! nice -n 5 scripts/k8s/build-controllers.sh >/dev/null; then \
	  if [ "$$CI" = "true" ]; then \
	    echo "make test: a job controller could not be built (see above)"; exit 1; fi; \
	  echo "***************************************************************************"; \
	  echo "*** A job controller could not be built (see above): its integration    ***"; \
	  echo "*** tests will be SKIPPED.                                              ***"; \
	  echo "***************************************************************************"; \
	fi

# The generator of the DRA CEL conformance corpus over k8s.io/dynamic-resource-allocation/cel
# (scripts/dra/celcorpus), cached in ~/.cache/tessera-k8s/dra/bin; ctest cli.dra_cel_corpus
# checks tests/data/dra/cel_corpus.json against it. CI=true fails when it cannot be built;
# elsewhere that test skips.
dra-celcorpus:
	@if ! nice -n 5 scripts/dra/build-celcorpus.sh >/dev/null; then \
	  if [ "$$CI" = "true" ]; then \
	    echo "make test: the DRA CEL corpus generator could not be built (see above)"; exit 1; fi; \
	  echo "***************************************************************************"; \
	  echo "*** The DRA CEL corpus generator could not be built (see above): the    ***"; \
	  echo "*** corpus check cli.dra_cel_corpus will be SKIPPED.                     ***"; \
	  echo "***************************************************************************"; \
	fi

# Every target of the `build` directory, the benchmarks among them, in Release.
bench: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON -DTESSERA_WERROR=OFF \
	  $(CMAKE_LAUNCHER) >/dev/null
	@cmake --build build -j $(JOBS)

# Every target (tests and benchmarks included) in Release with warnings as errors: what `make
# test` builds first, so that a warning only -O3 gives cannot reach a user's build.
release-check: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON -DTESSERA_WERROR=ON \
	  $(CMAKE_LAUNCHER) >/dev/null
	@cmake --build build -j $(JOBS)

clean:
	rm -rf build build-asan
