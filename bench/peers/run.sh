#!/usr/bin/env bash
# Kueue + kube-scheduler and Tessera serve side by side on one API server (issue 33; figures and
# what they mean in docs/comparison.md and bench/README.md, "Real peers").
#
#   bench/peers/run.sh [--quick | --scenario NAME] [--dir DIR] [--keep]
#
# One control plane (scripts/k8s/cluster.sh with kube-controller-manager: the Job controller),
# fake GPU nodes of 8 GPUs whose pods kwok makes Running and then Succeeded after their runtime
# (the annotation pod-complete.stage.kwok.x-k8s.io/delay), then
#   stack A: Kueue (v0.17.0, its batch/job integration, its webhooks for Jobs and its own kinds
#            with a self-signed certificate) + kube-scheduler 1.37; Jobs created suspended and
#            labelled kueue.x-k8s.io/queue-name;
#   stack B: tessera serve with the same queues as tessera.dev kinds, the same Jobs (not
#            suspended) with schedulerName: tessera,
# one after the other, the same job stream (bench/peers/stream.py: seed, shapes, arrivals), and
# prints one table. --quick: 8 nodes, 60 Jobs over 60 s (about 5 minutes in all); --scenario fit:
# 32 nodes and quotas far above the load, so every Job fits when created (what each stack adds
# itself; about 4 minutes); default (full): 32 nodes, 300 Jobs over 4 minutes. Scenarios are in
# bench/peers/stream.py. Not a ctest: the CI does not run it.
#
# Builds what is missing (scripts/k8s/build-apiserver.sh, build-controllers.sh kueue kwok);
# the tessera binary: $TESSERA_BIN, else build-rel/src/tessera, else build/src/tessera.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/bench/peers"
SCEN=full DIR="" KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) SCEN=quick ;;
    --scenario) SCEN="${2:?--scenario needs a name (stream.py: quick, fit, full)}"; shift ;;
    --dir) DIR="${2:?--dir needs a directory}"; shift ;;
    --keep) KEEP=1 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
  esac
  shift
done
NODES="$(python3 -c "import sys; sys.path.insert(0, '$HERE'); import stream; print(stream.SCENARIOS.get('$SCEN', {}).get('nodes', ''))")"
[ -n "$NODES" ] || { echo "run.sh: --scenario $SCEN: no such scenario in bench/peers/stream.py" >&2; exit 2; }
DIR="${DIR:-$(mktemp -d /tmp/tessera-peers.XXXXXX)}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
TESSERA="${TESSERA_BIN:-}"
for c in "$ROOT/build-rel/src/tessera" "$ROOT/build/src/tessera"; do
  [ -n "$TESSERA" ] || { [ -x "$c" ] && TESSERA="$c"; } || true
done
[ -x "$TESSERA" ] || { echo "run.sh: no tessera binary (set TESSERA_BIN or build target tessera in build-rel)" >&2; exit 1; }
log() { echo "peers: $(date +%T) $*" >&2; }

"$ROOT/scripts/k8s/build-apiserver.sh" >/dev/null
CBIN="$("$ROOT/scripts/k8s/build-controllers.sh" kueue kwok)"
K8S_BIN="$(dirname "$(dirname "$CBIN")")/v1.37/bin"

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  "$ROOT/scripts/k8s/job-controller.sh" stop "$DIR" kueue || true
  "$ROOT/scripts/k8s/cluster.sh" stop "$DIR" >/dev/null 2>&1 || true
  if [ "$KEEP" = 0 ]; then rm -rf "$DIR"; else log "state and logs kept in $DIR"; fi
}
trap cleanup EXIT

# cpu_s PID: user+system CPU seconds of the process so far.
cpu_s() {
  awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo 0
}

log "control plane in $DIR"
TESSERA_K8S_CONTROLLERS=1 "$ROOT/scripts/k8s/cluster.sh" start "$DIR" >/dev/null
"$ROOT/scripts/k8s/cluster.sh" nodes "$DIR" "$NODES" 8 gpu
# kwok: node-initialize (it registers the nodes it manages; ours are Ready already) and the pod
# stages of its "fast" set, pod-ready without pod and host IPs (its template adds one to those a
# pod has, which the API server refuses on a second try), pod-complete delayed by the pod's
# runtime annotation.
KWOK_MOD="$(cd "$ROOT/scripts/k8s/controllers/kwok" && go list -f '{{.Module.Dir}}' sigs.k8s.io/kwok/cmd/kwok)"
python3 - "$KWOK_MOD/kustomize/stage" >"$DIR/kwok-stages.yaml" <<'PY'
import re, sys, yaml
d = sys.argv[1]
out = [yaml.safe_load(open(f"{d}/node/fast/node-initialize.yaml"))]
for name in ("pod-ready", "pod-complete", "pod-delete"):
    st = yaml.safe_load(open(f"{d}/pod/fast/{name}.yaml"))
    if name == "pod-ready":
        t = st["spec"]["next"]["statusTemplate"]
        st["spec"]["next"]["statusTemplate"] = re.sub(r"\{\{ \$hostIPs.*?(?=phase: Running)", "", t,
                                                      flags=re.S)
    if name == "pod-complete":
        st["spec"]["delay"] = {"durationMilliseconds": 0, "durationFrom": {"expressionFrom":
            '.metadata.annotations["pod-complete.stage.kwok.x-k8s.io/delay"]'}}
    out.append(st)
yaml.safe_dump_all(out, sys.stdout)
PY
"$CBIN/kwok" --kubeconfig="$DIR/kubeconfig" --manage-all-nodes=true --config="$DIR/kwok-stages.yaml" \
  >"$DIR/kwok.log" 2>&1 &
PIDS+=($!)
KWOK_PID=$!
# shellcheck disable=SC1091
source "$DIR/env"
APISERVER_PID="$(cat "$DIR/apiserver.pid")"

# measure STACK OUT PID...: run the stream, then add the CPU seconds the given processes spent.
measure() {
  local stack="$1" out="$2"; shift 2
  local before=() p
  for p in "$@" "$APISERVER_PID"; do before+=("$(cpu_s "$p")"); done
  python3 "$HERE/stream.py" run "$DIR" "$stack" "$SCEN" "$out" >&2
  local i=0
  local pairs=""
  for p in "$@" "$APISERVER_PID"; do
    local n; n="$(cat "/proc/$p/comm" 2>/dev/null || echo "$p")"
    pairs+="cpu_$n=$(awk -v a="$(cpu_s "$p")" -v b="${before[$i]}" 'BEGIN{print a-b}') "
    i=$((i + 1))
  done
  python3 - "$out" $pairs <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for kv in sys.argv[2:]:
    k, v = kv.split("=")
    r[k] = float(v)
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
}

# Stack A: Kueue + kube-scheduler.
log "stack A: Kueue + kube-scheduler"
"$ROOT/scripts/k8s/job-controller.sh" apply-crds "$DIR" kueue
"$ROOT/scripts/k8s/job-controller.sh" start "$DIR" kueue
KUEUE_PID="$(cat "$DIR/jobctl-kueue.pid")"
"$K8S_BIN/kube-scheduler" --kubeconfig="$DIR/kubeconfig" --leader-elect=false --secure-port=0 \
  --v=0 ${FEATURE_GATES:+--feature-gates=$FEATURE_GATES} >"$DIR/kube-scheduler.log" 2>&1 &
SCHED_PID=$!
PIDS+=("$SCHED_PID")
python3 "$HERE/stream.py" queues "$DIR" kueue "$SCEN"
sleep 2  # Kueue sees its queues
measure kueue "$DIR/kueue.json" "$KUEUE_PID" "$SCHED_PID"
kill "$SCHED_PID"
"$ROOT/scripts/k8s/job-controller.sh" stop "$DIR" kueue
# Its webhooks fail closed: without Kueue they would refuse every Job.
for name in $(sed -n 's/^  name: \(tessera-test-kueue-.*\)/\1/p' "$DIR/kueue-webhooks.yaml"); do
  for kind in mutating validating; do
    curl -sk -X DELETE -H "Authorization: Bearer $TOKEN" -o /dev/null \
      "https://127.0.0.1:$API_PORT/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/$name"
  done
done
for team in $(python3 -c "import sys; sys.path.insert(0, '$HERE'); import stream; print(' '.join(stream.SCENARIOS['$SCEN']['teams']))"); do
  curl -sk -X DELETE -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '{"propagationPolicy":"Background"}' -o /dev/null \
    "https://127.0.0.1:$API_PORT/apis/batch/v1/namespaces/$team/jobs"
done
for _ in $(seq 1 120); do  # until the Jobs' pods are gone
  left="$(curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$API_PORT/api/v1/pods?limit=1" \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["items"]))')"
  [ "$left" = 0 ] && break
  sleep 1
done

# Stack B: Tessera serve.
log "stack B: Tessera serve"
python3 "$HERE/stream.py" apply "$DIR" "$ROOT/deploy/crds/tessera.dev_queues.yaml"
sleep 2  # the CRDs are served
python3 "$HERE/stream.py" queues "$DIR" tessera "$SCEN"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$TESSERA" serve --kubeconfig "$DIR/kubeconfig" --metrics-address 127.0.0.1 --metrics-port "$PORT" \
  >"$DIR/serve.log" 2>&1 &
SERVE_PID=$!
PIDS+=("$SERVE_PID")
for _ in $(seq 1 120); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && break
  kill -0 "$SERVE_PID" || { tail -20 "$DIR/serve.log" >&2; exit 1; }
  sleep 0.5
done
measure tessera "$DIR/tessera.json" "$SERVE_PID"
kill "$SERVE_PID"

echo
echo "bench/peers ($SCEN: $NODES nodes x 8 GPUs, $(date -u +%F)):"
python3 "$HERE/stream.py" table "$DIR/kueue.json" "$DIR/tessera.json"
