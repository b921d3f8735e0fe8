#!/usr/bin/env bash
# Builds the generator of the DRA CEL conformance corpus (scripts/dra/celcorpus, over
# k8s.io/dynamic-resource-allocation/cel at the version its go.mod pins) from the Go module
# proxy, as scripts/k8s/build-controllers.sh builds the job controllers.
#
#   scripts/dra/build-celcorpus.sh
#
# The binary lands in $TESSERA_K8S_CACHE/dra/bin/celcorpus (default ~/.cache/tessera-k8s) with a
# celcorpus.recipe stamp, and is reused until main.go, go.mod, go.sum or RECIPE_VERSION change.
# Prints the binary's path on stdout. Exit status: 0 when it is there, non-zero (with the reason
# on stderr) otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
K8S_CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
K8S_CACHE="${K8S_CACHE:-$ROOT/.cache/k8s}"
RECIPE_VERSION=1  # bump when the recipe changes so that the cached binary is rebuilt
SRC="$ROOT/scripts/dra/celcorpus"
BIN="$K8S_CACHE/dra/bin"
stamp="recipe $RECIPE_VERSION $(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-16)"
if [ -x "$BIN/celcorpus" ] && [ "$(cat "$BIN/celcorpus.recipe" 2>/dev/null)" = "$stamp" ]; then
  echo "$BIN/celcorpus"
  exit 0
fi
command -v go >/dev/null || { echo "build-celcorpus: 'go' is missing (Go 1.26 or newer)" >&2; exit 1; }
mkdir -p "$BIN" "$K8S_CACHE/gocache"
export GOCACHE="$K8S_CACHE/gocache" GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
echo "build-celcorpus: building the DRA CEL corpus generator (cached in $BIN)" >&2
if (cd "$SRC" && go build -trimpath -ldflags "-s -w" -o "$BIN/celcorpus.tmp" .); then
  mv "$BIN/celcorpus.tmp" "$BIN/celcorpus"
  echo "$stamp" >"$BIN/celcorpus.recipe"
  echo "$BIN/celcorpus"
else
  rm -f "$BIN/celcorpus.tmp"
  echo "build-celcorpus: the generator did not build" >&2
  exit 1
fi
