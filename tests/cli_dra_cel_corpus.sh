#!/bin/sh
# The checked-in DRA CEL conformance corpus (tests/data/dra/cel_corpus.json) is what the upstream
# library generates now: rebuilds the generator (scripts/dra/build-celcorpus.sh, cached) and
# compares. To refresh the corpus after changing scripts/dra/celcorpus:
#   "$(scripts/dra/build-celcorpus.sh)" scripts/dra/celcorpus > tests/data/dra/cel_corpus.json
# In CI (CI=true) a generator that cannot be built fails; elsewhere the test is skipped (77),
# loudly.
#   cli_dra_cel_corpus.sh SOURCE_DIR
set -u
ROOT="$1"
if ! gen="$("$ROOT/scripts/dra/build-celcorpus.sh")"; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: the DRA CEL corpus generator could not be built (see above); CI requires it"
    exit 1
  fi
  echo "***************************************************************************"
  echo "*** SKIPPED: the DRA CEL corpus generator could not be built (no Go?):   ***"
  echo "*** tests/data/dra/cel_corpus.json is NOT checked against upstream.      ***"
  echo "***************************************************************************"
  exit 77
fi
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if ! "$gen" "$ROOT/scripts/dra/celcorpus" >"$out"; then
  echo "FAIL: the generator failed"
  exit 1
fi
if ! cmp -s "$out" "$ROOT/tests/data/dra/cel_corpus.json"; then
  echo "FAIL: tests/data/dra/cel_corpus.json differs from what upstream generates now:"
  diff "$ROOT/tests/data/dra/cel_corpus.json" "$out" | head -40
  echo "Regenerate it (see the top of tests/cli_dra_cel_corpus.sh) and rerun dra_test."
  exit 1
fi
echo "PASS: the DRA CEL corpus is what k8s.io/dynamic-resource-allocation/cel generates"
