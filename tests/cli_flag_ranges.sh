#!/bin/sh
# Flags out of range and inputs beyond the limits of docs/robustness.md: the command exits
# non-zero with a message naming the range, instead of hanging, crashing or going on.
#   cli_flag_ranges.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

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
# Numbers that are not numbers (issue 31): CLI11's own range check lets NaN through (`sim --until
# nan` was accepted and ignored); every float flag wants a finite number in its range.
for v in nan inf -inf -1 1e13; do
  expect_fail "a finite number of seconds from 0 to 1e12" sim --until "$v"
done
expect_fail "a finite number of seconds from 0.1 to 3600" serve --dcgm-interval nan
expect_fail "a finite fraction from 0 to 1" serve --underuse-threshold nan
expect_fail "a finite number of seconds from 0 to 86400" serve --provisioning-backoff-base inf
expect_fail "a finite number of seconds from 0.1 to 3600" get queues --watch-interval nan
# Trace times whose sums overflow (1e308 + 1e308 = inf: "GPU allocation: mean inf%").
printf 'arrival,duration,gpus\n1e308,1e308,1\n' >"$tmp/huge_jobs.csv"
expect_fail "huge_jobs.csv:2: arrival: 1e+308 is more than 1e+12 seconds" \
  sim replay --nodes "$ex/nodes.csv" --jobs "$tmp/huge_jobs.csv" --bad-rows fail
expect_fail "provisioning-pod-set-merge-policy" serve --provisioning-pod-set-merge-policy Identical

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

# Input without end or beyond the size limits is refused at the limit, in bounded time and
# memory (it was read until a bad_alloc at 4.2 GB, or for 4.2 GB and then called empty). The
# memory cap is `ulimit -v` where the binary runs under it; an AddressSanitizer build reserves
# terabytes of address space, so there ASan's own hard_rss_limit_mb kills a blow-up instead.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1500"
if sh -c 'ulimit -v 1500000 && "$1" --version' sh "$tessera" >/dev/null 2>&1; then
  vlimit=1500000
else
  vlimit=unlimited
fi
# bounded "message part" args...: like expect_fail, under the memory cap and 60 s.
bounded() {
  want=$1
  shift
  (ulimit -v "$vlimit"; exec timeout 60 "$tessera" "$@") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ] || ! grep -q -- "$want" "$tmp/err" "$tmp/out"; then
    echo "FAIL (exit $rc, want 1..123 and \"$want\"): tessera $*"
    tail -3 "$tmp/err"
    fails=$((fails + 1))
  fi
}
bounded "/dev/zero: error: larger than 268435456 bytes" validate /dev/zero
bounded "/dev/zero: error: larger than 268435456 bytes" sim /dev/zero
bounded "/dev/zero:1: row longer than 1048576 bytes" sim replay --nodes /dev/zero --jobs "$ex/jobs.csv"
bounded "/dev/zero:1: row longer than 1048576 bytes" sim replay --nodes "$ex/nodes.csv" --jobs /dev/zero
bounded "/dev/zero:1: row longer than 1048576 bytes" sim fgd --nodes /dev/zero --pods /dev/zero
bounded "/dev/zero: larger than 4194304 bytes" serve --kubeconfig /dev/zero
bounded "/dev/zero: larger than 65536 bytes, the limit for a token file" get queues --token-file /dev/zero
bounded "/dev/zero: larger than 65536 bytes, the limit for a token file" explain a/b --token-file /dev/zero
# YAML aliases of aliases: 2.8 MB of Pods whose labels alias 1000 aliases of a 1000-byte string.
awk 'BEGIN {
  v = sprintf("%1000s", ""); gsub(/ /, "x", v)
  for (i = 0; i < 200; i++) {
    printf "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  labels: &L\n", i
    printf "    k0: &v \"%s\"\n", v
    for (k = 1; k < 1000; k++) printf "    k%d: *v\n", k
    printf "  annotations: *L\nspec:\n  nodeSelector: *L\n  containers: [{name: c}]\n"
  }
}' >"$tmp/aliases.yaml"
bounded "error: YAML aliases expand this file too far" validate "$tmp/aliases.yaml"
# 20 jobs of 1,048,576 pods each: one FGD pod shape per pod took 1.3 GB (and 80 s under ASan).
printf 'arrival,duration,pods,gpus\n' >"$tmp/pods.csv"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  echo "$i,10,1048576,1" >>"$tmp/pods.csv"
done
if ! (ulimit -v "$vlimit"; exec timeout 60 "$tessera" sim replay --nodes "$ex/nodes.csv" \
    --jobs "$tmp/pods.csv") >"$tmp/out" 2>"$tmp/err" || ! grep -q "20 rejected" "$tmp/out"; then
  echo "FAIL: the replay of 20 jobs of 1048576 pods did not end within 60 s and the memory cap"
  tail -3 "$tmp/err"
  fails=$((fails + 1))
fi
# Control characters in a name are escaped, never sent to the terminal as written.
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: "a\\e]0;pwned\\a"}\n' >"$tmp/name.yaml"
expect_fail 'metadata.name: "a\\x1b]0;pwned\\x07" is not a valid name' validate "$tmp/name.yaml"
if grep -q "$(printf '\033')" "$tmp/err"; then
  echo "FAIL: an escape character reached the terminal"
  fails=$((fails + 1))
fi

# An empty input is not "ok" (validate) and not an empty simulation without a word (sim); a
# scenario without nodes or without workloads is simulated with a warning saying so.
printf '# nothing here\n---\n' >"$tmp/empty.yaml"
expect_fail "no objects in the input" validate "$tmp/empty.yaml"
expect_fail "no objects in the input; nothing to simulate" sim "$tmp/empty.yaml"
printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: c, image: x}]}}}\n' >"$tmp/no-nodes.yaml"
if ! "$tessera" sim "$tmp/no-nodes.yaml" >"$tmp/out" 2>"$tmp/err" ||
   ! grep -q "warning: the input has no nodes; every workload will wait" "$tmp/err"; then
  echo "FAIL: a scenario without nodes is simulated without a warning"
  cat "$tmp/err"
  fails=$((fails + 1))
fi

# The replay with a cycle interval whose multiples round below an event ends.
if ! timeout 300 "$tessera" $replay --cycle-interval 0.7 >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: the example replay with --cycle-interval 0.7 did not end with exit 0"
  tail -5 "$tmp/err"
  fails=$((fails + 1))
fi

finish cli_flag_ranges
