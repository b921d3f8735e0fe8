#!/bin/sh
# `tessera get` and `tessera explain` on a simulation's end state (--from FILE, the output of
# `tessera sim -o json`) with kubectl's habits: short names, -n / -A, -l, -o wide|json|yaml; a
# file that is not sim's output, contradicting flags and a server that cannot be reached end with
# a whole message (docs/observability.md, "The CLI").
#   cli_get_from.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

# At 60 s: llm-pretrain and hp-sweep run, too-wide is rejected, notebook waits.
"$tessera" sim "$src/examples/quickstart.yaml" -o json --until 60 >"$tmp/sim.json" 2>"$tmp/sim.err" ||
  fail "sim -o json: exit $?: $(cat "$tmp/sim.err")"
get() { "$tessera" get "$@" --from "$tmp/sim.json"; }

get workloads >"$tmp/wl" 2>"$tmp/err" || fail "get workloads --from: $(cat "$tmp/err")"
grep -q '^NAMESPACE ' "$tmp/wl" || fail "no NAMESPACE column: $(cat "$tmp/wl")"
grep -q '^sandbox  *notebook .* pending ' "$tmp/wl" || fail "notebook not pending: $(cat "$tmp/wl")"
grep -q '^research  *llm-pretrain .* admitted ' "$tmp/wl" || fail "llm-pretrain: $(cat "$tmp/wl")"
grep -q '^production  *inference-serving ' "$tmp/wl" || fail "no inference-serving: $(cat "$tmp/wl")"
grep -q '1970' "$tmp/wl" && fail "a 1970 date in the table: $(cat "$tmp/wl")"
get wl -A >"$tmp/wl-A" 2>&1 && cmp -s "$tmp/wl" "$tmp/wl-A" || fail "-A differs from the default"
get wl -n research >"$tmp/wl-n" 2>&1 || fail "get wl -n research: $(cat "$tmp/wl-n")"
grep -q 'inference-serving' "$tmp/wl-n" && fail "-n research lists production's workload"
grep -q '^too-wide ' "$tmp/wl-n" || fail "-n research: no too-wide: $(cat "$tmp/wl-n")"
get wl -l kueue.x-k8s.io/queue-name=serving >"$tmp/wl-l" 2>&1 || fail "-l: $(cat "$tmp/wl-l")"
grep -q 'inference-serving' "$tmp/wl-l" || fail "-l =serving: no inference-serving"
grep -q 'too-wide' "$tmp/wl-l" && fail "-l =serving lists too-wide"
get wl -l 'kueue.x-k8s.io/queue-name!=serving' >"$tmp/wl-ne" 2>&1 || fail "-l !=: $(cat "$tmp/wl-ne")"
grep -q 'inference-serving' "$tmp/wl-ne" && fail "-l !=serving lists inference-serving"
grep -q 'too-wide' "$tmp/wl-ne" || fail "-l !=serving: no too-wide"
get wl -l 'team in (a,b)' >"$tmp/out" 2>&1 && fail "a set-based selector was accepted"
grep -q 'set-based' "$tmp/out" || fail "set-based selector: $(cat "$tmp/out")"
get wl -o wide >"$tmp/wide" 2>&1 || fail "-o wide: $(cat "$tmp/wide")"
head -1 "$tmp/wide" | grep -q 'NODES' || fail "-o wide: no NODES column: $(head -1 "$tmp/wide")"
get wl -o json >"$tmp/json" 2>&1 || fail "-o json: $(cat "$tmp/json")"
grep -q '"name": "too-wide"' "$tmp/json" || fail "-o json: no too-wide"
get wl -o yaml >"$tmp/yaml" 2>&1 || fail "-o yaml: $(cat "$tmp/yaml")"
grep -q '^"items":' "$tmp/yaml" || fail "-o yaml: no items: $(head -3 "$tmp/yaml")"
grep -q '"name": "too-wide"' "$tmp/yaml" || fail "-o yaml: no too-wide"

get cq >"$tmp/cq" 2>&1 || fail "get cq: $(cat "$tmp/cq")"
grep -q '^research ' "$tmp/cq" && grep -q '^production ' "$tmp/cq" ||
  fail "get cq: not both ClusterQueues: $(cat "$tmp/cq")"
get queues >"$tmp/queues" 2>&1 && cmp -s "$tmp/cq" "$tmp/queues" || fail "cq differs from queues"
get lq >"$tmp/lq" 2>&1 || fail "get lq: $(cat "$tmp/lq")"
grep -q '^research  *research  *research  *0  *2' "$tmp/lq" || fail "get lq: no research: $(cat "$tmp/lq")"
grep -q '^production  *serving ' "$tmp/lq" || fail "get lq: no serving: $(cat "$tmp/lq")"
get no >"$tmp/no" 2>&1 || fail "get no: $(cat "$tmp/no")"
grep -q '^NAME .*GPU MAP' "$tmp/no" || fail "get no: no table: $(cat "$tmp/no")"
grep -q '########   research/llm-pretrain(8)' "$tmp/no" || fail "get no: GPUs: $(cat "$tmp/no")"

"$tessera" explain sandbox/notebook --from "$tmp/sim.json" >"$tmp/ex" 2>&1 ||
  fail "explain --from: $(cat "$tmp/ex")"
grep -q '^Workload: *sandbox/notebook' "$tmp/ex" || fail "explain: $(cat "$tmp/ex")"
grep -q '^State: *pending' "$tmp/ex" || fail "explain: not pending: $(cat "$tmp/ex")"
grep -q '^Reason: *LocalQueue sandbox/interactive not found' "$tmp/ex" ||
  fail "explain: reason: $(cat "$tmp/ex")"
grep -q '^Created: *t=0s' "$tmp/ex" || fail "explain: not simulated time: $(cat "$tmp/ex")"
"$tessera" explain sandbox/notebook --from "$tmp/sim.json" -o yaml >"$tmp/ex-y" 2>&1 ||
  fail "explain -o yaml: $(cat "$tmp/ex-y")"
grep -q '^"state": "pending"' "$tmp/ex-y" || fail "explain -o yaml: $(cat "$tmp/ex-y")"
"$tessera" explain research/nope --from "$tmp/sim.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "explain of an unknown workload: exit status not 1"
grep -q 'no workload research/nope' "$tmp/out" || fail "unknown workload: $(cat "$tmp/out")"

# Bad input: one whole line naming the file or the flag, never a crash.
get wl -A -n research >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "-A with -n: exit status not 2: $(cat "$tmp/out")"
echo '{"a": 1}' >"$tmp/other.json"
"$tessera" get wl --from "$tmp/other.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "a file that is not sim's output: exit status not 1"
grep -q "other.json: not the output of .tessera sim -o json" "$tmp/out" ||
  fail "a file that is not sim's output: $(cat "$tmp/out")"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' >"$tmp/deep.json"
"$tessera" get wl --from "$tmp/deep.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "a deep file: exit status not 1"
grep -q 'nested deeper than 64' "$tmp/out" || fail "a deep file: $(cat "$tmp/out")"
"$tessera" get wl --from "$tmp/missing.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "a missing file: exit status not 1"
grep -q 'missing.json' "$tmp/out" || fail "a missing file: $(cat "$tmp/out")"

# A server that is not there: the whole cause, not "Connection".
"$tessera" get wl --server http://127.0.0.1:1 >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "no server: exit status not 1"
grep -q 'cannot reach tessera serve at http://127.0.0.1:1/api/v1/workloads: the connection failed (Connection refused)' \
  "$tmp/out" || fail "no server: $(cat "$tmp/out")"
grep -q 'is tessera serve running there' "$tmp/out" || fail "no server: no hint: $(cat "$tmp/out")"
finish cli_get_from
