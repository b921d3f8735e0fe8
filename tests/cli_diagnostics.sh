#!/bin/sh
# Never silent (docs/manifests.md, "Diagnostics"): sim and sim replay --manifests print every
# diagnostic validate prints; a skipped kind with pod templates is a warning; sim --output json
# carries them in "diagnostics"; a file that yields nothing says so; validate --strict fails on
# anything skipped or warned.
#   cli_diagnostics.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

# A node, a Job, a TrainingPipeline (pod templates, unknown group) and a ConfigMap (harmless).
cat >"$tmp/mixed.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {template: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}}
---
apiVersion: pipelines.example.com/v1
kind: TrainingPipeline
metadata: {name: trainer}
spec:
  replicatedJobs:
  - name: workers
    template: {spec: {template: {spec: {containers: [{name: c, image: x}]}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
YAML
# Only skipped kinds.
cat >"$tmp/xgb.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: rc}
spec: {xgbReplicaSpecs: {Master: {template: {spec: {containers: [{name: head}]}}}}}
YAML

warning="mixed.yaml:11: warning: skipped TrainingPipeline trainer (pipelines.example.com/v1): not a job kind Tessera reads, but it has pod templates (at spec.replicatedJobs\[0\].template.spec.template): its pods will not be scheduled"
notice="mixed.yaml:19: notice: skipped ConfigMap settings (v1)"

# sim: the warning and the notice on stderr; --quiet leaves out the notice only.
"$tessera" sim "$tmp/mixed.yaml" >"$tmp/out" 2>"$tmp/err" || fail "sim exit $?"
grep -q "$warning" "$tmp/err" || { fail "sim: no TrainingPipeline warning on stderr"; cat "$tmp/err"; }
grep -q "$notice" "$tmp/err" || { fail "sim: no ConfigMap notice on stderr"; cat "$tmp/err"; }
grep -q "warning: skipped TrainingPipeline" "$tmp/out" && fail "sim: a diagnostic on stdout"
"$tessera" sim --quiet "$tmp/mixed.yaml" >"$tmp/out" 2>"$tmp/err" || fail "sim --quiet exit $?"
grep -q "$warning" "$tmp/err" || fail "sim --quiet: no TrainingPipeline warning"
grep -q "notice:" "$tmp/err" && fail "sim --quiet: a notice was printed"

# sim --output json: a "diagnostics" array next to what was there.
"$tessera" sim "$tmp/mixed.yaml" --output json >"$tmp/sim.json" 2>"$tmp/err" ||
  fail "sim --output json exit $?"
python3 - "$tmp/sim.json" <<'PY' || fail "sim --output json: diagnostics"
import json, sys
doc = json.load(open(sys.argv[1]))
assert {"events", "workloads", "summary", "diagnostics"} <= set(doc), sorted(doc)
d = doc["diagnostics"]
sev = sorted(x["severity"] for x in d)
assert sev == ["notice", "warning"], d
w = [x for x in d if x["severity"] == "warning"][0]
assert set(w) == {"severity", "file", "line", "path", "message"}, w
assert w["file"].endswith("mixed.yaml") and w["line"] == 11, w
assert "TrainingPipeline trainer" in w["message"] and "pod templates" in w["message"], w
PY

# sim replay --manifests: the same lines.
"$tessera" sim replay --manifests "$tmp/mixed.yaml" >"$tmp/out" 2>"$tmp/err" ||
  fail "sim replay --manifests exit $?"
grep -q "$warning" "$tmp/err" || { fail "replay: no TrainingPipeline warning"; cat "$tmp/err"; }
grep -q "$notice" "$tmp/err" || fail "replay: no ConfigMap notice"
"$tessera" sim replay --quiet --manifests "$tmp/mixed.yaml" --report "$tmp/rep" >"$tmp/out" \
  2>"$tmp/err" || fail "sim replay --report exit $?"
grep -q "notice:" "$tmp/err" && fail "replay --quiet: a notice was printed"
python3 - "$tmp/rep/report.json" <<'PY' || fail "replay report.json: diagnostics"
import json, sys
doc = json.load(open(sys.argv[1]))
assert "summary" in doc and "notes" in doc, sorted(doc)
sev = sorted(x["severity"] for x in doc["diagnostics"])
assert sev == ["notice", "warning"], doc["diagnostics"]
PY

# A file with nothing Tessera reads says so, in validate and sim alike.
nothing="xgb.yaml: warning: no workload and no cluster object in this file (1 object skipped)"
"$tessera" sim "$tmp/mixed.yaml" "$tmp/xgb.yaml" >"$tmp/out" 2>"$tmp/err" || fail "sim 2 files"
grep -q "$nothing" "$tmp/err" || { fail "sim: no per-file warning"; cat "$tmp/err"; }
grep -q "xgb.yaml:1: warning: skipped XGBoostJob rc (kubeflow.org/v1)" "$tmp/err" ||
  fail "sim: no XGBoostJob warning"

# validate: exit 0 as before; --strict: exit 1, with the reason last.
"$tessera" validate "$tmp/mixed.yaml" "$tmp/xgb.yaml" >"$tmp/out" 2>"$tmp/err" ||
  fail "validate without --strict exit $? (want 0)"
grep -q "$warning" "$tmp/err" || fail "validate: no TrainingPipeline warning"
grep -q "$nothing" "$tmp/err" || fail "validate: no per-file warning"
"$tessera" validate --strict "$tmp/mixed.yaml" "$tmp/xgb.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "validate --strict exit $rc (want 1)"
last=$(tail -1 "$tmp/err")
case $last in
  "tessera validate: --strict: failed: 3 warnings, 3 objects skipped") ;;
  *) fail "validate --strict: last line is \"$last\"" ;;
esac
# --strict on a clean file: 0.
head -9 "$tmp/mixed.yaml" >"$tmp/clean.yaml"
"$tessera" validate --strict "$tmp/clean.yaml" >"$tmp/out" 2>"$tmp/err" ||
  { fail "validate --strict on a clean file exit $?"; cat "$tmp/err"; }
# A notice alone (a harmless kind skipped) fails --strict too.
cat "$tmp/clean.yaml" >"$tmp/cm.yaml"
printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n' >>"$tmp/cm.yaml"
"$tessera" validate "$tmp/cm.yaml" >"$tmp/out" 2>"$tmp/err" || fail "validate cm.yaml exit $?"
"$tessera" validate --strict "$tmp/cm.yaml" >"$tmp/out" 2>"$tmp/err" &&
  fail "validate --strict passed a skipped ConfigMap"
grep -q "failed: 0 warnings, 1 object skipped" "$tmp/err" || fail "validate --strict cm: reason"

finish cli_diagnostics
