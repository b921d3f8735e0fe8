# Sourced by the tests/cli_*.sh scripts (`. "$2/tests/cli_lib.sh"`, after `set -u`): sets
# `tessera` ($1) and `src` ($2), a temporary folder `tmp` removed on exit, `fail MESSAGE`
# (prints it, counts it in `fails`) and `finish NAME` (ends the script: 0 if nothing failed).
tessera=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
finish() {
  if [ "$fails" -eq 0 ]; then
    echo "$1: all passed"
    exit 0
  fi
  echo "$1: $fails failed"
  exit 1
}
