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

# More replays at once than the machine has cores (issue 31: -j 200 started a thread per replay
# and aborted with std::system_error): lowered to the cores, and said.
cores=$(nproc)
if [ "$cores" -lt 1024 ]; then
  # shellcheck disable=SC2086
  "$tessera" sim plan $T $P --target wait-p95=20m --points 5 -j 1024 >"$tmp/j.out" 2>"$tmp/j.err" ||
    fail "sim plan -j 1024: exit $?: $(cat "$tmp/j.err")"
  grep -q -- "-j 1024 lowered to $cores, the cores of this machine" "$tmp/j.err" ||
    fail "sim plan -j 1024 did not say it was lowered: $(cat "$tmp/j.err")"
  grep -q "^Recommended: pool a100, $answer nodes" "$tmp/j.out" || fail "sim plan -j 1024: another answer"
fi

# The screen (--screen-jobs): sizes far too small fail on the trace's first 50 jobs and are said
# to; the check line is of full replays only.
# shellcheck disable=SC2086
"$tessera" sim plan $T $P --target wait-p95=20m --synthetic-load 2 --points 5 --screen-jobs 50 \
  >"$tmp/scr.out" 2>"$tmp/scr.err" || fail "sim plan --screen-jobs: exit $?: $(cat "$tmp/scr.err")"
grep -q 'fails on the first [0-9]* jobs (stopped at t=.*); not replayed in full' "$tmp/scr.out" ||
  fail "--screen-jobs: no size failed the screen: $(cat "$tmp/scr.out")"
grep -q '^check: [0-9]* nodes meet the targets' "$tmp/scr.out" || fail "--screen-jobs: no check"
grep '^check:' "$tmp/scr.out" | grep -q 'first [0-9]* jobs' && fail "--screen-jobs: screened check"

# Spot with interruptions, beside a fixed on-demand pool: the table names the rate (the default
# when none is given), has the interruption columns, and the plan is the same run after run.
S="--pool base:gpus=8,model=A100,cpu=96,memory=768Gi,price=32.77,nodes=4"
S="$S --pool spot:gpus=8,model=A100,cpu=96,memory=768Gi,price=32.77,spot=0.7"
# shellcheck disable=SC2086
"$tessera" sim plan $T $S --target wait-p95=20m --points 5 -j 2 >"$tmp/spot.out" 2>"$tmp/spot.err" ||
  fail "sim plan spot: exit $?: $(cat "$tmp/spot.err")"
grep -q '^every size beside 4 fixed nodes of pool base' "$tmp/spot.out" || fail "no fixed pool line"
grep -q '0.0100 interruptions a node-hour (the default' "$tmp/spot.out" || fail "no default rate"
grep -q 'interr. lost GPUh' "$tmp/spot.out" || fail "no interruption columns: $(cat "$tmp/spot.out")"
grep -q '^check: ' "$tmp/spot.out" || fail "spot: no check line: $(cat "$tmp/spot.out")"
# shellcheck disable=SC2086
"$tessera" sim plan $T $S --target wait-p95=20m --points 5 -j 1 >"$tmp/spot2.out" 2>/dev/null
cmp -s "$tmp/spot.out" "$tmp/spot2.out" || fail "spot: not the same plan twice"
# shellcheck disable=SC2086
"$tessera" sim plan $T $S --target wait-p95=20m --points 5 --checkpoint-interval 600 >"$tmp/ck.out" \
  2>/dev/null || fail "sim plan --checkpoint-interval: exit $?"
grep -q '^note: trace jobs checkpoint every 600s' "$tmp/ck.out" || fail "no checkpoint note"

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
# A flag out of its range is refused by the flag parser (its own exit status), naming the flag.
# shellcheck disable=SC2086
if "$tessera" sim plan $T $P --target wait-p95=1h --screen-jobs -5 >/dev/null 2>"$tmp/e.err"; then
  fail "--screen-jobs -5 accepted"
fi
grep -q -e '--screen-jobs: "-5" is out of range' "$tmp/e.err" || fail "--screen-jobs -5: $(cat "$tmp/e.err")"
# shellcheck disable=SC2086
expect_error "unknown target" '"speed=1"' $T $P --target speed=1
# shellcheck disable=SC2086
expect_error "bad rate" 'interruptions "often"' $T --target wait-p95=1h \
  --pool s:gpus=8,cpu=96,memory=768Gi,interruptions=often
# shellcheck disable=SC2086
expect_error "bad notice" 'notice "2x"' $T --target wait-p95=1h --pool s:gpus=8,cpu=96,memory=768Gi,notice=2x
# shellcheck disable=SC2086
expect_error "every pool fixed" 'nothing to size' $T --target wait-p95=1h \
  --pool s:gpus=8,cpu=96,memory=768Gi,nodes=3
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

# The shipped example trace, as README.md runs it: its priority column names `high` and `low`,
# built-in priorities when no manifests define them (said in a note), and the plan answers.
E="--jobs $src/examples/traces/jobs.csv"
A="--pool a100:gpus=8,model=A100,cpu=96,memory=768Gi,price=32.77"
# shellcheck disable=SC2086
"$tessera" sim plan $E $A --target wait-p95=30m --points 5 -j 2 >"$tmp/ex.out" 2>"$tmp/ex.err" ||
  fail "example trace: exit $?: $(cat "$tmp/ex.err")"
grep -q '^Recommended: pool a100, ' "$tmp/ex.out" || fail "example trace: $(cat "$tmp/ex.out")"
grep -q '^note: built-in priorities high 1000, low 10 ' "$tmp/ex.out" ||
  fail "example trace: no note of the built-in priorities: $(cat "$tmp/ex.out")"
# With its queues, the ClusterQueues' quotas (64 A100 GPUs) cap every size: exit 3, saying so.
# shellcheck disable=SC2086
"$tessera" sim plan $E --manifests "$src/examples/traces/queues.yaml" $A --target wait-p95=30m \
  --points 5 -j 2 >"$tmp/exq.out" 2>"$tmp/exq.err"
rc=$?
[ "$rc" -eq 3 ] || fail "example trace with its queues: exit $rc, want 3: $(cat "$tmp/exq.err")"
grep -q "quotas, not the nodes, are the cap: .* at most 64 GPUs on nodes of this pool (8 nodes)" \
  "$tmp/exq.out" || fail "example trace with its queues: no quota cap: $(cat "$tmp/exq.out")"
# A priority that is neither a number, a PriorityClass nor a built-in name: refused, naming its row.
printf 'name,arrival,duration,gpus,priority\nj,0,60,1,urgent\n' >"$tmp/prio.csv"
# shellcheck disable=SC2086
expect_error "unknown priority" 'prio.csv:2: priority "urgent" is neither a number' \
  --jobs "$tmp/prio.csv" $A --target wait-p95=1h

finish cli_plan
