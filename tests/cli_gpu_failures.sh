#!/bin/sh
# GPUs that fail (docs/gpu-failures.md): `sim`, `sim replay` and `sim plan` take --gpu-failures
# MTBF and --gpu-repair TIME; a bad value is an error naming the flag; a replay reports the
# failures and their cost, the same for the same seed.
#   cli_gpu_failures.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

# expect_fail "message part" args...: exit 2 (a usage error) and the message.
expect_fail() {
  want=$1
  shift
  timeout 60 "$tessera" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne 2 ]; then
    fail "exit $rc, want 2: tessera $*"
    cat "$tmp/err"
  elif ! grep -q -- "$want" "$tmp/err" "$tmp/out"; then
    fail "no \"$want\" in the output: tessera $*"
    cat "$tmp/err" "$tmp/out"
  fi
}

ex=$src/examples/traces
replay="sim replay --nodes $ex/nodes.csv --jobs $ex/jobs.csv --manifests $ex/queues.yaml"
for v in 0 -5h abc 1y nan 100000h; do
  expect_fail "gpu-failures" sim --gpu-failures "$v"
  expect_fail "not a duration above 0" $replay --gpu-failures "$v"
done
expect_fail "gpu-repair" sim --gpu-failures 1000h --gpu-repair 0
expect_fail "gpu-repair" $replay --gpu-repair -1h
expect_fail "gpu-failures" sim plan --synthetic-jobs 10 --gpu-failures 0s

# A synthetic replay on 16 nodes with GPUs that fail every 500 hours (a rate that shows in a
# short trace), checkpoints every 10 minutes.
run="sim replay --synthetic-jobs 400 --synthetic-nodes 16 --synthetic-mix gangs --seed 3
  --gpu-failures 500h --gpu-repair 12h --checkpoint-interval 600"
# shellcheck disable=SC2086
timeout 300 "$tessera" $run >"$tmp/a" 2>"$tmp/err" || { fail "replay: exit $?"; cat "$tmp/err"; }
grep -q "GPU failures  *[1-9][0-9]* ([0-9]* workloads interrupted)" "$tmp/a" ||
  { fail "no GPU failures reported"; cat "$tmp/a"; }
grep -q "lost to failures  *[0-9.]* GPU-hours since the last checkpoint ([0-9.]* without" "$tmp/a" ||
  fail "no GPU-hours lost to failures"
grep -q "failed GPU-hours  *[0-9.]*" "$tmp/a" || fail "no failed GPU-hours"
# shellcheck disable=SC2086
timeout 300 "$tessera" $run >"$tmp/b" 2>/dev/null
grep -v "wall" "$tmp/a" >"$tmp/a1"
grep -v "wall" "$tmp/b" >"$tmp/b1"
cmp -s "$tmp/a1" "$tmp/b1" || { fail "one seed, two different replays"; diff "$tmp/a1" "$tmp/b1"; }
# shellcheck disable=SC2086
timeout 300 "$tessera" $run --seed 4 >"$tmp/c" 2>/dev/null
grep "GPU failures" "$tmp/a" >"$tmp/a2"
grep "GPU failures" "$tmp/c" >"$tmp/c2"
cmp -s "$tmp/a2" "$tmp/c2" && fail "another seed, the same failures"

# `sim plan` with failures says the spare nodes they need.
timeout 300 "$tessera" sim plan --synthetic-jobs 100 --synthetic-nodes 4 --synthetic-mix gangs \
  --synthetic-queues 1 --seed 7 --points 3 -j 1 --target wait-p95=30m --gpu-failures 2000h \
  --pool a100:gpus=8,model=A100,cpu=96,memory=768Gi >"$tmp/plan" 2>"$tmp/err"
grep -q "GPU failures: [0-9]* nodes with them, [0-9]* if no GPU failed: .*spare node" \
  "$tmp/plan" || { fail "sim plan: no spare nodes line"; cat "$tmp/plan" "$tmp/err"; }

# `tessera sim`: the quickstart with failures; the JSON summary has them.
timeout 120 "$tessera" sim --gpu-failures 200h -o json >"$tmp/sim.json" 2>"$tmp/err" ||
  { fail "sim: exit $?"; cat "$tmp/err"; }
grep -q '"gpuFailures"' "$tmp/sim.json" || fail "no gpuFailures in sim's JSON"

# A ClusterQueue that leaves failures to its workloads' controllers (serve's policy) is said not
# to be simulated, by sim and by sim replay; without --gpu-failures nothing is said.
cat >"$tmp/leave.yaml" <<'EOF2'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: trainers
  annotations: {tessera.dev/gpu-failure-policy: LeaveToController}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {nvidia.com/gpu: 8, cpu: 32, memory: 256Gi}}
EOF2
want="ClusterQueue trainers: tessera.dev/gpu-failure-policy LeaveToController is not simulated"
timeout 120 "$tessera" sim "$tmp/leave.yaml" --gpu-failures 200h >"$tmp/out" 2>"$tmp/err"
grep -q "warning: $want" "$tmp/err" || { fail "sim: no warning for LeaveToController"; cat "$tmp/err"; }
timeout 120 "$tessera" sim "$tmp/leave.yaml" >"$tmp/out" 2>"$tmp/err"
grep -q "LeaveToController" "$tmp/err" && fail "sim without --gpu-failures warns of the policy"
timeout 120 "$tessera" sim replay --synthetic-jobs 10 --synthetic-nodes 2 --seed 1 \
  --manifests "$tmp/leave.yaml" --gpu-failures 500h >"$tmp/out" 2>"$tmp/err"
grep -q "warning: $want" "$tmp/err" ||
  { fail "sim replay: no warning for LeaveToController"; cat "$tmp/err"; }

finish cli_gpu_failures
