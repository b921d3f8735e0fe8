#!/bin/sh
# Flags out of range and inputs beyond the limits of docs/robustness.md: the command exits
# non-zero with a message naming the range, instead of hanging, crashing or going on.
#   cli_flag_ranges.sh TESSERA_BINARY SOURCE_DIR
set -u
tessera=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect_fail "message part" args...: non-zero exit (not a signal) and the message on stderr.
expect_fail() {
  want=$1
  shift
  timeout 60 "$tessera" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then
    echo "FAIL (exit $rc, want 1..123): tessera $*"
    cat "$tmp/err"
    fails=$((fails + 1))
  elif ! grep -q -- "$want" "$tmp/err" "$tmp/out"; then
    echo "FAIL (no \"$want\" in the output): tessera $*"
    cat "$tmp/err" "$tmp/out"
    fails=$((fails + 1))
  fi
}

ex=$src/examples/traces
replay="sim replay --nodes $ex/nodes.csv --jobs $ex/jobs.csv --manifests $ex/queues.yaml"
for v in inf -inf nan NaN 1e-300 -1 1e10 abc; do
  expect_fail "0.001 to 1e9" $replay --cycle-interval "$v"
done
for v in -5 nan inf; do expect_fail "from 0 to 1e15" $replay --until "$v"; done
expect_fail "0 or more" $replay --limit -1
expect_fail "1 to 500000 nodes" sim replay --synthetic-jobs 10 --synthetic-nodes -3
expect_fail "0.001 to 100" sim replay --synthetic-jobs 10 --synthetic-load nan
expect_fail "0 to 10000000 jobs" sim replay --synthetic-jobs 99999999999
for v in -1 nan inf 1e9; do
  expect_fail "0 (no tuning) to 100" sim fgd --nodes x.csv --pods y.csv --tune "$v"
done
expect_fail "1024 threads" sim fgd --nodes x.csv --pods y.csv --threads -2

# A node of 2^31 GPUs: an error at its field for validate and sim, not an abort.
cat >"$tmp/node.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: huge}
status:
  allocatable:
    nvidia.com/gpu: "2147483648"
YAML
expect_fail "node.yaml:6: error: status.allocatable" validate "$tmp/node.yaml"
expect_fail "at most 1024 device slots" sim "$tmp/node.yaml"

# The replay with a cycle interval whose multiples round below an event ends.
if ! timeout 300 "$tessera" $replay --cycle-interval 0.7 >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: the example replay with --cycle-interval 0.7 did not end with exit 0"
  tail -5 "$tmp/err"
  fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] && echo "all flag ranges checked" || echo "$fails failures"
[ "$fails" -eq 0 ]
