#!/usr/bin/env bash
# Fetches Debian bookworm's `kubernetes` source package (v1.20.2, full tree with vendor/) into
# $K8S_CACHE/src through a private apt configuration, so that no deb-src entry is added to the
# machine's own sources. Prints the unpacked tree's path. Safe to run again (reuses the download).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
CACHE="${CACHE:-$ROOT/.cache/k8s}"
APT="$CACHE/apt"
mkdir -p "$APT/lists/partial" "$APT/archives/partial" "$CACHE/src"

existing=$(find "$CACHE/src" -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -n1)
if [ -n "$existing" ] && [ -f "$existing/.tessera-unpacked" ]; then
  echo "$existing"
  exit 0
fi

cat >"$APT/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
SRC
APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache::Archives=$APT/archives"
  -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1"
)
echo "fetch-source: apt-get update (deb-src, private lists in $APT)" >&2
apt-get "${APT_OPTS[@]}" update -qq >&2
cd "$CACHE/src"
echo "fetch-source: apt-get source kubernetes" >&2
apt-get "${APT_OPTS[@]}" source -qq kubernetes >&2
tree=$(find "$CACHE/src" -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -n1)
if [ -z "$tree" ]; then
  echo "fetch-source: no kubernetes-1.20* tree after apt-get source" >&2
  exit 1
fi
touch "$tree/.tessera-unpacked"
echo "$tree"
