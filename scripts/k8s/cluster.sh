#!/usr/bin/env bash
# A throwaway control plane on 127.0.0.1: etcd and kube-apiserver built by build-apiserver.sh
# (TESSERA_K8S_VERSION, default 1.37), token auth, AlwaysAllow authorization, no kubelets; with
# TESSERA_K8S_CONTROLLERS=1 also kube-controller-manager (Job, ReplicaSet, Deployment,
# StatefulSet, garbage-collector and ResourceClaim controllers, nothing that needs a kubelet).
#
#   cluster.sh start DIR      start etcd + apiserver with state in DIR; writes DIR/kubeconfig,
#                             DIR/env (ports, version, the API server's feature gates, which a
#                             kube-scheduler of the same version needs too) and waits until the
#                             server is ready
#   cluster.sh stop DIR       stop both (SIGTERM, then SIGKILL) and keep DIR, and the job
#                             controllers job-controller.sh started there
#   cluster.sh start-controller-manager DIR   start kube-controller-manager on a running cluster
#   cluster.sh stop-apiserver DIR | start-apiserver DIR   restart only the API server (etcd and
#                             its data stay: nothing is lost)
#   cluster.sh restart-etcd DIR   kill etcd (SIGKILL) and start it again on its data, then wait
#                             until the API server is ready again (bench/k8s_faults.cc)
#   cluster.sh nodes DIR N GPUS [PREFIX]   create N fake nodes with GPUS nvidia.com/gpu each
#
# The API server serves every GA and beta API its version turns on by default (resource.k8s.io/v1
# on 1.34+), and on 1.37 also the Workload API (scheduling.k8s.io/v1beta1, feature GenericWorkload)
# that Tessera reads gangs from. TESSERA_K8S_FEATURE_GATES and TESSERA_K8S_RUNTIME_CONFIG replace
# those extras (empty: none). TESSERA_K8S_PROFILING=true serves /debug/pprof (`go tool pprof`).
#
# etcd keeps its data under /dev/shm when it exists (tmpfs: fsync is free), so that the numbers
# measured here are the API server's, not the disk's.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
CACHE="${CACHE:-$ROOT/.cache/k8s}"
cmd="${1:-}"
DIR="${2:-}"
[ -n "$cmd" ] && [ -n "$DIR" ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
MINOR="${TESSERA_K8S_VERSION:-1.37}"
# A control plane keeps the version it was started with (stop, restart-etcd, ...).
if [ "$cmd" != start ] && [ -f "$DIR/env" ]; then
  MINOR="$(sed -n 's/^K8S_MINOR=//p' "$DIR/env")"; MINOR="${MINOR:-1.37}"
fi
MINOR="$(echo "${MINOR#v}" | cut -d. -f1-2)"
BINDIR="$CACHE/v$MINOR/bin"
APISERVER="${KUBE_APISERVER:-$BINDIR/kube-apiserver}"
ETCD="$BINDIR/etcd"
CONTROLLER_MANAGER="$BINDIR/kube-controller-manager"
case "$MINOR" in
  1.37) DEFAULT_GATES="GenericWorkload=true"; DEFAULT_RUNTIME="scheduling.k8s.io/v1beta1=true" ;;
  *) DEFAULT_GATES=""; DEFAULT_RUNTIME="" ;;
esac
FEATURE_GATES="${TESSERA_K8S_FEATURE_GATES-$DEFAULT_GATES}"
RUNTIME_CONFIG="${TESSERA_K8S_RUNTIME_CONFIG-$DEFAULT_RUNTIME}"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_ready() {
  local url="$1" token="$2"
  for _ in $(seq 1 240); do
    if curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url/readyz" \
        | grep -q 200; then
      return 0
    fi
    if [ -f "$DIR/apiserver.pid" ] && ! kill -0 "$(cat "$DIR/apiserver.pid")" 2>/dev/null; then
      break  # it exited: no point waiting
    fi
    sleep 0.25
  done
  echo "cluster.sh: the API server did not become ready; see $DIR/apiserver.log" >&2
  tail -20 "$DIR/apiserver.log" >&2
  return 1
}

stop_pid() {
  local f="$1"
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

start_etcd() {
  # shellcheck disable=SC1091
  source "$DIR/env"
  "$ETCD" --name default --data-dir "$ETCD_DATA" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
    --initial-cluster "default=http://127.0.0.1:$PEER_PORT" \
    --quota-backend-bytes=8589934592 --snapshot-count=100000 --log-level=warn \
    >>"$DIR/etcd.log" 2>&1 &
  echo $! >"$DIR/etcd.pid"
}

start_apiserver() {
  # shellcheck disable=SC1091
  source "$DIR/env"
  "$APISERVER" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --endpoint-reconciler-type=none \
    --cert-dir="$DIR/certs" \
    --token-auth-file="$DIR/tokens.csv" \
    --authorization-mode=AlwaysAllow \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$DIR/sa.key" \
    --service-account-signing-key-file="$DIR/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --enable-priority-and-fairness=false \
    --max-requests-inflight=2000 --max-mutating-requests-inflight=1000 \
    ${FEATURE_GATES:+--feature-gates="$FEATURE_GATES"} \
    ${RUNTIME_CONFIG:+--runtime-config="$RUNTIME_CONFIG"} \
    --profiling="${TESSERA_K8S_PROFILING:-false}" --v=0 \
    >>"$DIR/apiserver.log" 2>&1 &
  echo $! >"$DIR/apiserver.pid"
  wait_ready "https://127.0.0.1:$API_PORT" "$TOKEN"
}

# The controllers Tessera's tests need: Jobs make pods, owners are garbage-collected, claims from
# templates are made; none that needs a kubelet or a cloud.
start_controller_manager() {
  [ -x "$CONTROLLER_MANAGER" ] || { echo "cluster.sh: no $CONTROLLER_MANAGER" >&2; return 3; }
  "$CONTROLLER_MANAGER" --kubeconfig="$DIR/kubeconfig" --leader-elect=false \
    --controllers=job-controller,replicaset-controller,deployment-controller,statefulset-controller,garbage-collector-controller,resourceclaim-controller,ttl-after-finished-controller \
    --bind-address=127.0.0.1 --secure-port=0 \
    ${FEATURE_GATES:+--feature-gates="$FEATURE_GATES"} \
    --concurrent-job-syncs=20 --kube-api-qps=500 --kube-api-burst=1000 --v=0 \
    >>"$DIR/controller-manager.log" 2>&1 &
  echo $! >"$DIR/controller-manager.pid"
}

case "$cmd" in
  start)
    [ -x "$APISERVER" ] || { echo "cluster.sh: no $APISERVER (run TESSERA_K8S_VERSION=$MINOR scripts/k8s/build-apiserver.sh)" >&2; exit 3; }
    [ -x "$ETCD" ] || { echo "cluster.sh: no $ETCD (run TESSERA_K8S_VERSION=$MINOR scripts/k8s/build-apiserver.sh)" >&2; exit 3; }
    ETCD_PORT=$(free_port); PEER_PORT=$(free_port); API_PORT=$(free_port)
    TOKEN="tessera-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    DATA="$DIR/etcd"
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
      DATA="$(mktemp -d /dev/shm/tessera-etcd.XXXXXX)"
    fi
    cat >"$DIR/env" <<ENV
ETCD_PORT=$ETCD_PORT
PEER_PORT=$PEER_PORT
API_PORT=$API_PORT
TOKEN=$TOKEN
ETCD_DATA=$DATA
K8S_MINOR=$MINOR
FEATURE_GATES=$FEATURE_GATES
ENV
    echo "$TOKEN,admin,admin,system:masters" >"$DIR/tokens.csv"
    [ -f "$DIR/sa.key" ] || openssl genrsa -out "$DIR/sa.key" 2048 2>/dev/null
    : >"$DIR/etcd.log"
    start_etcd
    cat >"$DIR/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: local
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: local
  context: {cluster: local, user: admin}
KC
    start_apiserver
    if [ "${TESSERA_K8S_CONTROLLERS:-0}" = "1" ]; then start_controller_manager; fi
    ;;
  start-controller-manager)
    # shellcheck disable=SC1091
    source "$DIR/env"
    [ -f "$DIR/controller-manager.pid" ] && kill -0 "$(cat "$DIR/controller-manager.pid")" 2>/dev/null \
      || start_controller_manager
    ;;
  stop)
    for f in "$DIR"/jobctl-*.pid; do [ -e "$f" ] && stop_pid "$f"; done
    stop_pid "$DIR/controller-manager.pid"
    stop_pid "$DIR/apiserver.pid"
    stop_pid "$DIR/etcd.pid"
    if [ -f "$DIR/env" ]; then
      # shellcheck disable=SC1091
      source "$DIR/env"
      case "$ETCD_DATA" in /dev/shm/tessera-etcd.*) rm -rf "$ETCD_DATA" ;; esac
    fi
    ;;
  stop-apiserver) stop_pid "$DIR/apiserver.pid" ;;
  start-apiserver) start_apiserver ;;
  restart-etcd)
    # shellcheck disable=SC1091
    source "$DIR/env"
    kill -9 "$(cat "$DIR/etcd.pid")" 2>/dev/null || true
    sleep 0.5
    start_etcd
    wait_ready "https://127.0.0.1:$API_PORT" "$TOKEN"
    ;;
  nodes)
    # shellcheck disable=SC1091
    source "$DIR/env"
    n="${3:?count}"; gpus="${4:?gpus}"; prefix="${5:-node}"
    python3 - "$API_PORT" "$TOKEN" "$n" "$gpus" "$prefix" <<'PY'
import json, ssl, sys, urllib.request, concurrent.futures as cf
port, token, n, gpus, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
ctx = ssl._create_unverified_context()
def req(method, path, body, ctype="application/json"):
    r = urllib.request.Request(f"https://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                               method=method, headers={"Authorization": f"Bearer {token}",
                                                       "Content-Type": ctype})
    return urllib.request.urlopen(r, context=ctx).status
def make(i):
    name = f"{prefix}-{i}"
    req("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
        "labels": {"kubernetes.io/hostname": name}}})
    cap = {"cpu": "96", "memory": "1024Gi", "pods": "110", "nvidia.com/gpu": gpus}
    req("PATCH", f"/api/v1/nodes/{name}/status", {"status": {"capacity": cap, "allocatable": cap,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "fake node"}]}}, "application/merge-patch+json")
with cf.ThreadPoolExecutor(16) as ex:
    list(ex.map(make, range(n)))
PY
    ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
esac
