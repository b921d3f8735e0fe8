#!/bin/sh
# `tessera convert` end to end: the examples' KAI and Volcano Queues print as Kueue YAML that
# `tessera validate` loads back without warnings, a LocalQueue per --namespace, the notices on
# stderr; input errors and an input without queues exit 1. The upstream queue files too, when
# /work/shared/manifests/upstream (or $TESSERA_UPSTREAM_MANIFESTS) is there.
set -u
. "$2/tests/cli_lib.sh"

for ex in kai-queues volcano-queues; do
  if ! "$tessera" convert "$src/examples/$ex.yaml" -n default -n team-x >"$tmp/$ex.yaml" \
    2>"$tmp/$ex.err"; then
    fail "$ex: convert exited non-zero: $(cat "$tmp/$ex.err")"
    continue
  fi
  grep -q "converted to ClusterQueue" "$tmp/$ex.err" || fail "$ex: no notice on stderr"
  grep -q "notice" "$tmp/$ex.yaml" && fail "$ex: notices on stdout"
  out=$("$tessera" validate "$tmp/$ex.yaml" 2>&1) || fail "$ex: validate failed: $out"
  echo "$out" | grep -q "0 errors, 0 warnings" || fail "$ex: validate: $out"
  [ "$(grep -c '^kind: LocalQueue' "$tmp/$ex.yaml")" -eq 4 ] ||
    fail "$ex: expected 2 LocalQueues in each of 2 namespaces"
done
grep -q 'namespace: "team-x"' "$tmp/kai-queues.yaml" || fail "no LocalQueue in team-x"
grep -q 'spec.priority: over-quota priority' "$tmp/kai-queues.err" ||
  fail "KAI spec.priority not reported"

# --flavor names the flavor of every quota.
"$tessera" convert "$src/examples/kai-queues.yaml" --flavor h100 >"$tmp/f.yaml" 2>/dev/null ||
  fail "--flavor: exit non-zero"
grep -q 'name: "h100"' "$tmp/f.yaml" || fail "--flavor: no flavor h100"
"$tessera" convert "$src/examples/kai-queues.yaml" --flavor Bad_Name >/dev/null 2>&1 &&
  fail "--flavor Bad_Name: accepted"

# No queues in the input, and input errors: exit 1.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$tmp/none.yaml"
"$tessera" convert "$tmp/none.yaml" >/dev/null 2>"$tmp/none.err" && fail "no queues: exit 0"
grep -q "no KAI Queue" "$tmp/none.err" || fail "no queues: $(cat "$tmp/none.err")"
printf 'apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n  resources:\n    gpu: {quota: lots}\n' >"$tmp/bad.yaml"
"$tessera" convert "$tmp/bad.yaml" >/dev/null 2>"$tmp/bad.err" && fail "bad input: exit 0"
grep -q "spec.resources.gpu.quota" "$tmp/bad.err" || fail "bad input: $(cat "$tmp/bad.err")"
"$tessera" convert "$tmp/missing.yaml" >/dev/null 2>&1 && fail "missing file: exit 0"

up=${TESSERA_UPSTREAM_MANIFESTS:-/work/shared/manifests/upstream}
if [ -d "$up" ]; then
  for f in "$up/KAI-Scheduler/docs/quickstart/default-queues.yaml" \
    "$up/KAI-Scheduler/docs/priority/example/limited-queue.yaml" \
    "$up/volcano/example/hierarchical-jobs/queues.yaml" \
    "$up/volcano/example/deployment/queue.yaml"; do
    [ -f "$f" ] || continue
    "$tessera" convert "$f" >"$tmp/up.yaml" 2>"$tmp/up.err" || fail "$f: $(cat "$tmp/up.err")"
    out=$("$tessera" validate "$tmp/up.yaml" 2>&1) || fail "$f: validate: $out"
  done
else
  echo "upstream manifests not here; skipped them"
fi
finish cli.convert
