#!/usr/bin/env bash
# Builds the Kubernetes control plane that Tessera's integration tests and benchmarks run on:
# kube-apiserver, kube-controller-manager, kube-scheduler and etcd, from the Go module proxy, at the
# version pinned by scripts/k8s/controlplane/v<MINOR>/go.mod (a wrapper module that requires
# k8s.io/kubernetes and replaces its staging modules, as Kubernetes' own consumers do).
#
#   TESSERA_K8S_VERSION=1.37 (default, the newest) | 1.34 (the oldest supported)
#
# Binaries land in $TESSERA_K8S_CACHE/v<MINOR>/bin (default ~/.cache/tessera-k8s/v1.37/bin)
# and are reused until the version or this recipe changes (RECIPE_VERSION); the Go build cache
# stays in $TESSERA_K8S_CACHE/gocache, so a rebuild after a recipe bump is quick. The first build
# downloads the modules (~1 GB under the Go module cache) and compiles for a while: see README.md.
#
# Prints the bin directory on stdout. Exit status: 0 when every binary is there, non-zero (with
# the reason on stderr) otherwise. The flag --with-scheduler is accepted for older callers: the
# scheduler and controller manager are always built.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
K8S_CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
K8S_CACHE="${K8S_CACHE:-$ROOT/.cache/k8s}"
MINOR="${TESSERA_K8S_VERSION:-1.37}"
MINOR="${MINOR#v}"
MINOR="$(echo "$MINOR" | cut -d. -f1-2)"
MOD="$ROOT/scripts/k8s/controlplane/v$MINOR"
if [ ! -f "$MOD/go.mod" ]; then
  echo "build-apiserver: no recipe for Kubernetes $MINOR (have: $(ls "$ROOT/scripts/k8s/controlplane" | tr '\n' ' '))" >&2
  exit 1
fi
VERSION="$(awk '$1=="k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2; exit} $1=="require" && $2=="k8s.io/kubernetes" {print $3; exit}' "$MOD/go.mod")"
[ -n "$VERSION" ] || { echo "build-apiserver: $MOD/go.mod requires no k8s.io/kubernetes" >&2; exit 1; }
RECIPE_VERSION=2  # bump when the recipe changes so that cached binaries are rebuilt
BIN="$K8S_CACHE/v$MINOR/bin"
STAMP="$VERSION recipe $RECIPE_VERSION $(sha256sum "$MOD/go.mod" "$MOD/go.sum" | sha256sum | cut -c1-16)"
WANT=(kube-apiserver kube-controller-manager kube-scheduler etcd)

have_all=true
for b in "${WANT[@]}"; do
  if [ ! -x "$BIN/$b" ] || [ "$(cat "$BIN/$b.recipe" 2>/dev/null)" != "$STAMP" ]; then
    have_all=false
  fi
done
if $have_all; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "build-apiserver: 'go' is missing (Go $(awk '/^go /{print $2}' "$MOD/go.mod") or newer)" >&2; exit 1; }
mkdir -p "$BIN" "$K8S_CACHE/gocache"
export GOCACHE="$K8S_CACHE/gocache" GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
# An older local Go fetches the toolchain go.mod names from the module proxy (Go >= 1.21).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
MAJ="${VERSION#v}"; MAJ="${MAJ%%.*}"
MIN="$(echo "${VERSION#v}" | cut -d. -f2)"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$VERSION"
LDFLAGS+=" -X k8s.io/component-base/version.gitMajor=$MAJ -X k8s.io/component-base/version.gitMinor=$MIN"
LDFLAGS+=" -X k8s.io/component-base/version.gitTreeState=clean"
LDFLAGS+=" -X k8s.io/client-go/pkg/version.gitVersion=$VERSION"
cd "$MOD"
declare -A PKG=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [etcd]=go.etcd.io/etcd/server/v3
)
start=$(date +%s)
for b in "${WANT[@]}"; do
  if [ -x "$BIN/$b" ] && [ "$(cat "$BIN/$b.recipe" 2>/dev/null)" = "$STAMP" ]; then continue; fi
  echo "build-apiserver: building $b $VERSION (Go module ${PKG[$b]}; cached in $BIN)" >&2
  go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/$b.tmp" "${PKG[$b]}"
  mv "$BIN/$b.tmp" "$BIN/$b"
  echo "$STAMP" >"$BIN/$b.recipe"
done
echo "build-apiserver: Kubernetes $VERSION control plane built in $(( $(date +%s) - start )) s" >&2
echo "$BIN"
