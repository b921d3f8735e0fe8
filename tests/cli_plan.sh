#!/bin/sh
# `tessera sim plan` end to end (docs/autoscaling.md, "Capacity calculator"): on a small synthetic
# trace it finds an answer, prints the check (the answer meets the target, one node less does
# not), writes the report, and answers the same in JSON; bad input fails naming the place; a
# target no size can meet says so with exit status 3.
#   cli_plan.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

T="--synthetic-jobs 150 --synthetic-nodes 8 --synthetic-mix gangs --synthetic-queues 1 --seed 3"
P="--pool a100:gpus=8,model=A100,cpu=96,memory=768Gi,price=32.77"
# shellcheck disable=SC2086
"$tessera" sim plan $T $P --target wait-p95=20m --points 5 -j 2 --report "$tmp/rep" \
  >"$tmp/plan.out" 2>"$tmp/plan.err" || fail "sim plan: exit $?: $(cat "$tmp/plan.err")"
grep -q '^check: [0-9]* nodes meet the targets (wait-p95 .*); [0-9]* nodes do not' "$tmp/plan.out" ||
  fail "no check line: $(cat "$tmp/plan.out")"
grep -q '^Recommended: pool a100, ' "$tmp/plan.out" || fail "no recommendation"
for f in index.html plan.json plan.csv; do
  [ -s "$tmp/rep/$f" ] || fail "report: $f missing"
done
grep -q '<svg' "$tmp/rep/index.html" || fail "index.html has no chart"
answer=$(sed -n 's/^Recommended: pool a100, \([0-9]*\) nodes.*/\1/p' "$tmp/plan.out")
# shellcheck disable=SC2086
"$tessera" sim plan $T $P --target wait-p95=20m --points 5 -j 1 --output json >"$tmp/plan.json" \
  2>/dev/null || fail "sim plan --output json"
grep -q "\"answer\": $answer," "$tmp/plan.json" || fail "JSON answer is not $answer (-j 1 vs -j 2)"

# Bad input: a clear error naming the place, never a crash.
expect_error() {  # expect_error "WHAT" "GREP" ARGS...
  what=$1
  pattern=$2
  shift 2
  "$tessera" sim plan "$@" >"$tmp/e.out" 2>"$tmp/e.err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$what: exit $rc, want 1"
  grep -q -e "$pattern" "$tmp/e.err" || fail "$what: message: $(cat "$tmp/e.err")"
}
# shellcheck disable=SC2086
expect_error "zero-GPU pool" 'gpus=0' $T --pool cpu:gpus=0,cpu=64,memory=256Gi --target wait-p95=1h
# shellcheck disable=SC2086
expect_error "unknown target" '"speed=1"' $T $P --target speed=1
expect_error "broken trace row" 'bad_jobs.csv:3' --jobs "$src/tests/data/trace/bad_jobs.csv" \
  --bad-rows fail $P --target wait-p95=1h
# shellcheck disable=SC2086
expect_error "nodes given" '--nodes is not read' $T $P --target wait-p95=1h \
  --nodes "$src/examples/traces/nodes.csv"

# A target no size up to --max-nodes meets: exit 3 and "not met up to".
# shellcheck disable=SC2086
"$tessera" sim plan $T $P --target wait-p50=0s --synthetic-load 3 --max-nodes 9 >"$tmp/no.out" \
  2>"$tmp/no.err"
rc=$?
[ "$rc" -eq 3 ] || fail "unmeetable target: exit $rc, want 3"
grep -q 'not met up to 9 nodes' "$tmp/no.out" || fail "unmeetable target: $(cat "$tmp/no.out")"

finish cli_plan
