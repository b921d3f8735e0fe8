#!/usr/bin/env bash
# Builds kube-apiserver (and, with --with-scheduler or TESSERA_K8S_SCHEDULER=1, kube-scheduler)
# v1.20.2 from Debian bookworm's `kubernetes` source package, for Tessera's integration tests and
# benchmarks. Binaries land in $TESSERA_K8S_CACHE/bin (default ~/.cache/tessera-k8s/bin) and are
# reused on later
# runs; the Go build cache stays in $K8S_CACHE/gocache, so a rebuild after a cache hit is quick.
#
# The facts this recipe encodes (see docs/kubernetes.md):
#  - the tree builds in GOPATH mode (GO111MODULE=off, $GOPATH/src/k8s.io/kubernetes) with
#    Debian's Go 1.19;
#  - pkg/generated/openapi/zz_generated.openapi.go is not in the tarball: it is generated with the
#    vendored openapi-gen over every package tagged `+k8s:openapi-gen=`, as upstream's
#    Makefile.generated_files does;
#  - the vendored github.com/modern-go/reflect2 1.0.1 crashes at run time under Go 1.18+, so
#    Debian's golang-github-modern-go-reflect2-dev (1.0.2) sources replace it.
# Exit status: 0 when the binaries are there, non-zero (with the reason on stderr) otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# The cache lives outside the work tree by default, so that a fresh clone (CI) reuses it.
K8S_CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
export K8S_CACHE="${K8S_CACHE:-$ROOT/.cache/k8s}"
export TESSERA_K8S_CACHE="$K8S_CACHE"
BIN="$K8S_CACHE/bin"
WANT=(kube-apiserver)
if [ "${1:-}" = "--with-scheduler" ] || [ "${TESSERA_K8S_SCHEDULER:-0}" = "1" ]; then
  WANT+=(kube-scheduler)
fi
RECIPE_VERSION=1  # bump when the recipe changes so that cached binaries are rebuilt

have_all=true
for b in "${WANT[@]}"; do
  if [ ! -x "$BIN/$b" ] || [ "$(cat "$BIN/$b.recipe" 2>/dev/null)" != "$RECIPE_VERSION" ]; then
    have_all=false
  fi
done
if $have_all; then
  exit 0
fi

for tool in go apt-get dpkg-source; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-apiserver: '$tool' is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
done
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2
if [ ! -f "$REFLECT2/reflect2.go" ]; then
  echo "build-apiserver: $REFLECT2 is missing (package golang-github-modern-go-reflect2-dev)" >&2
  exit 1
fi

TREE="$("$ROOT/scripts/k8s/fetch-source.sh")"
export GOPATH="$K8S_CACHE/gopath"
export GO111MODULE=off GOFLAGS= CGO_ENABLED=0
export GOCACHE="$K8S_CACHE/gocache"
mkdir -p "$GOPATH/src/k8s.io" "$BIN" "$GOCACHE"
KROOT="$GOPATH/src/k8s.io/kubernetes"
if [ "$(readlink "$KROOT" 2>/dev/null)" != "$TREE" ]; then
  rm -f "$KROOT"
  ln -s "$TREE" "$KROOT"
fi
cd "$KROOT"
# Go derives the import path from $PWD, which must be the GOPATH path, not the link's target.
export PWD="$KROOT"

if [ ! -f vendor/github.com/modern-go/reflect2/.tessera-debian ]; then
  echo "build-apiserver: replacing vendored reflect2 1.0.1 with Debian's $(basename "$REFLECT2")" >&2
  rm -rf vendor/github.com/modern-go/reflect2
  mkdir -p vendor/github.com/modern-go/reflect2
  cp -r "$REFLECT2"/. vendor/github.com/modern-go/reflect2/
  rm -f vendor/github.com/modern-go/reflect2/go.mod
  touch vendor/github.com/modern-go/reflect2/.tessera-debian
fi

OPENAPI_OUT=pkg/generated/openapi/zz_generated.openapi.go
if [ ! -s "$OPENAPI_OUT" ]; then
  echo "build-apiserver: generating $OPENAPI_OUT with the vendored openapi-gen" >&2
  go build -o "$K8S_CACHE/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  # The same package set as upstream's Makefile.generated_files (KUBE_OPENAPI_TAG_FILES): Go
  # directories of the tree, staging/src named as vendor/, minus code-generator and
  # sample-apiserver, that have a file with a `+k8s:openapi-gen=` tag in column 0.
  dirs=$(find -H . \( -path ./_\* -o -path ./.\* -o -path ./vendor \) -prune -o \
           -type f -name '*.go' -print \
         | sed 's|^\./staging/src|vendor|; s|^\./||' \
         | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
         | xargs grep -l '^// *+k8s:openapi-gen=' \
         | xargs -n1 dirname | LC_ALL=C sort -u \
         | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
  if [ -z "$dirs" ]; then
    echo "build-apiserver: found no +k8s:openapi-gen packages" >&2
    exit 1
  fi
  "$K8S_CACHE/openapi-gen" --logtostderr -i "$dirs" \
    -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
    -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
    -r "$K8S_CACHE/openapi-violations.report" >"$K8S_CACHE/openapi-gen.log" 2>&1 || {
      tail -20 "$K8S_CACHE/openapi-gen.log" >&2
      rm -f "$OPENAPI_OUT"
      exit 1
    }
fi

VPKG=k8s.io/kubernetes/vendor/k8s.io/component-base/version
LDFLAGS="-s -w -X $VPKG.gitVersion=v1.20.2 -X $VPKG.gitMajor=1 -X $VPKG.gitMinor=20"
LDFLAGS+=" -X $VPKG.gitTreeState=clean -X $VPKG.buildDate=1970-01-01T00:00:00Z"
for b in "${WANT[@]}"; do
  if [ -x "$BIN/$b" ] && [ "$(cat "$BIN/$b.recipe" 2>/dev/null)" = "$RECIPE_VERSION" ]; then
    continue
  fi
  echo "build-apiserver: go build ./cmd/$b (a few minutes on 2 cores; cached afterwards)" >&2
  start=$(date +%s)
  go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/$b.tmp" "./cmd/$b"
  mv "$BIN/$b.tmp" "$BIN/$b"
  echo "$RECIPE_VERSION" >"$BIN/$b.recipe"
  echo "build-apiserver: $b built in $(( $(date +%s) - start ))s" >&2
done
