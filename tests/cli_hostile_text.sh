#!/bin/sh
# Hostile text through the outputs (issue 31, classes 1, 2 and 8): names, namespaces and queues
# with bytes that are not UTF-8 and with terminal escapes (a window title, a screen clear) end
# with exit 0-2 and a message, never a signal; no raw ESC byte reaches the output; a manifest's
# label value that is not ASCII is refused at its line; usage errors exit 2, --help 0.
#   cli_hostile_text.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

esc=$(printf '\033')
# run NAME args...: exit 0..2 (no signal, no CLI11 105-109) and no ESC byte in stdout or stderr.
run() {
  name=$1
  shift
  timeout 60 "$tessera" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  [ "$rc" -le 2 ] || fail "$name: exit $rc (want 0..2): $(tail -3 "$tmp/$name.err")"
  if grep -q "$esc" "$tmp/$name.out" "$tmp/$name.err"; then
    fail "$name: a raw ESC byte in the output"
  fi
}

# A trace whose job names, namespaces and queues are not UTF-8 or carry escape sequences.
printf 'name,cpu_milli,memory_mib,gpus,gpu_model,labels\nn0,96000,786432,8,A100,rack=r0\n' \
  >"$tmp/nodes.csv"
printf 'name,arrival,duration,pods,cpu_milli,memory_mib,gpus,gpu_milli,queue,namespace,priority\n' \
  >"$tmp/jobs.csv"
printf 'j\377\376,1,100,1,1000,1024,1,,q\033]0;pwned\007,ns\303,\n' >>"$tmp/jobs.csv"
printf 'k\033[2J,2,100,1,1000,1024,16,,q\033]0;pwned\007,ns\303,\n' >>"$tmp/jobs.csv"
trace="sim replay --nodes $tmp/nodes.csv --jobs $tmp/jobs.csv"

run replay $trace
grep -q 'q\\x1b\]0;pwned\\x07' "$tmp/replay.out" || fail "replay: the queue not shown escaped"
run replay_report $trace --report "$tmp/rep"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/rep/report.json" ||
  fail "replay --report: report.json is not JSON"
run replay_json $trace --accounting-db "$tmp/a.db"
run cost_json report cost --db "$tmp/a.db" -o json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/cost_json.out" ||
  fail "report cost -o json: not JSON"
run cost_table report cost --db "$tmp/a.db"
grep -q 'ns\\xc3' "$tmp/cost_table.out" || fail "report cost: the namespace not shown escaped"

# Manifests: a label value that is not ASCII is refused at its line; a queue whose reason and
# name carry escapes is shown escaped by sim's table.
cat >"$tmp/label.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: n0
  labels: {pool: a}
status: {allocatable: {cpu: "8", memory: 8Gi, nvidia.com/gpu: "1"}}
YAML
sed "s/pool: a/pool: \"a$(printf '\377')\"/" "$tmp/label.yaml" >"$tmp/label_bad.yaml"
run validate_label validate "$tmp/label_bad.yaml"
[ "$rc" -eq 1 ] || fail "validate: a label value that is not ASCII was accepted (exit $rc)"
grep -q "label_bad.yaml:5: error: metadata.labels.pool" "$tmp/validate_label.err" ||
  fail "validate: no error at label_bad.yaml:5: $(cat "$tmp/validate_label.err")"
run sim_json sim "$tmp/label_bad.yaml" -o json
run sim_acct sim "$tmp/label_bad.yaml" --accounting-db "$tmp/b.db"

# sim's table and JSON with a job named with an escape: the loader refuses such a name, and the
# message quoting it is escaped.
cat >>"$tmp/label.yaml" <<YAML
---
apiVersion: batch/v1
kind: Job
metadata: {name: "j$(printf '\033')[2J", namespace: default}
spec:
  template:
    spec:
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 1}}
YAML
run sim_escape sim "$tmp/label.yaml"

# Exit codes: usage errors exit 2 with CLI11's message; --help exits 0.
usage() {
  want=$1
  shift
  timeout 60 "$tessera" "$@" >"$tmp/u.out" 2>"$tmp/u.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "tessera $*: exit $rc, want 2"
  grep -q -- "$want" "$tmp/u.err" "$tmp/u.out" || fail "tessera $*: no \"$want\": $(cat "$tmp/u.err")"
}
usage "not in {table,json}" sim -o xml
usage "out of range" sim --until x
usage "--until" sim --until
usage "files is required" validate
usage "The following argument was not expected" sim --no-such-flag
usage "A subcommand is required"
usage "0.001 to 1e9" sim replay --synthetic-jobs 10 --cycle-interval -1
usage "A subcommand is required" report
"$tessera" --help >/dev/null 2>&1 || fail "tessera --help: exit $?, want 0"
"$tessera" sim --help >/dev/null 2>&1 || fail "tessera sim --help: exit $?, want 0"
"$tessera" --version >/dev/null 2>&1 || fail "tessera --version: exit $?, want 0"

finish cli_hostile_text
