#!/usr/bin/env bash
# Builds the job controllers that Tessera's integration tests run against the test API server
# (JobSet, LeaderWorkerSet, KubeRay, Kubeflow Trainer v2, MPI operator), from the Go module
# proxy, at the versions pinned by the wrapper modules scripts/k8s/controllers/<name>/go.mod
# (each declares the manager's main package as a Go `tool`).
#
#   scripts/k8s/build-controllers.sh [name...]   (default: every directory under controllers/
#                                                 but those whose go.mod says "bench only":
#                                                 kueue and kwok, which bench/peers builds)
#
# Binaries land in $TESSERA_K8S_CACHE/controllers/bin/<name> (default
# ~/.cache/tessera-k8s/controllers/bin) with a <name>.recipe stamp, and are reused until the
# wrapper's go.mod/go.sum or the recipe (RECIPE_VERSION: bump it) change. The Go build cache is
# shared with the control plane's ($TESSERA_K8S_CACHE/gocache). The CRDs are not copied: they
# are read from the module cache (scripts/k8s/job-controller.sh crds NAME prints their paths).
#
# Prints the bin directory on stdout. Exit status: 0 when every binary asked for is there,
# non-zero (with the reason on stderr) otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
K8S_CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
K8S_CACHE="${K8S_CACHE:-$ROOT/.cache/k8s}"
RECIPE_VERSION=1  # bump when the recipe changes so that cached binaries are rebuilt
BIN="$K8S_CACHE/controllers/bin"
CTRL="$ROOT/scripts/k8s/controllers"
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || mapfile -t NAMES < <(for n in $(ls "$CTRL"); do
  grep -q '^// bench only' "$CTRL/$n/go.mod" || echo "$n"; done)

stamp() {
  local mod="$CTRL/$1"
  echo "$(awk '$1=="tool"{print $2; exit}' "$mod/go.mod") recipe $RECIPE_VERSION $(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-16)"
}

todo=()
for n in "${NAMES[@]}"; do
  [ -f "$CTRL/$n/go.mod" ] || { echo "build-controllers: no recipe for '$n' (have: $(ls "$CTRL" | tr '\n' ' '))" >&2; exit 1; }
  if [ ! -x "$BIN/$n" ] || [ "$(cat "$BIN/$n.recipe" 2>/dev/null)" != "$(stamp "$n")" ]; then todo+=("$n"); fi
done
if [ ${#todo[@]} -eq 0 ]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "build-controllers: 'go' is missing (Go 1.26 or newer)" >&2; exit 1; }
mkdir -p "$BIN" "$K8S_CACHE/gocache"
export GOCACHE="$K8S_CACHE/gocache" GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
status=0
for n in "${todo[@]}"; do
  pkg="$(awk '$1=="tool"{print $2; exit}' "$CTRL/$n/go.mod")"
  ver="$(awk -v m="$pkg" '$1=="require" && index(m, $2)==1 {print $3; exit} index(m, $1)==1 && $2 ~ /^v[0-9]/ {print $2; exit}' "$CTRL/$n/go.mod")"
  echo "build-controllers: building $n ($pkg $ver; cached in $BIN)" >&2
  start=$(date +%s)
  if (cd "$CTRL/$n" && go build -trimpath -ldflags "-s -w" -o "$BIN/$n.tmp" "$pkg"); then
    mv "$BIN/$n.tmp" "$BIN/$n"
    stamp "$n" >"$BIN/$n.recipe"
    echo "build-controllers: $n built in $(( $(date +%s) - start )) s" >&2
  else
    echo "build-controllers: $n did not build" >&2
    rm -f "$BIN/$n.tmp"
    status=1
  fi
done
[ $status -eq 0 ] && echo "$BIN"
exit $status
