#!/usr/bin/env bash
# Runs a job controller built by build-controllers.sh (jobset, lws, kuberay, trainer,
# mpi-operator, and Kueue for bench/peers) against a test cluster started by cluster.sh, as the integration tests do
# (tests/k8s/test_cluster.h).
#
#   job-controller.sh crds NAME          print the paths of NAME's CRD files, read from the Go
#                                        module cache (never copied into the repository)
#   job-controller.sh apply-crds DIR NAME   create them in the cluster of DIR
#   job-controller.sh start DIR NAME     start NAME against the cluster in DIR: log DIR/NAME.log,
#                                        pid DIR/jobctl-NAME.pid; waits until its /readyz is 200
#   job-controller.sh stop DIR NAME      SIGTERM, then SIGKILL (cluster.sh stop stops them too)
#
# No cert-manager and no cert rotator: leader election is off, metrics are off, the health probe
# is on a free port. A controller whose manager serves webhooks (jobset, lws) gets a self-signed
# certificate in DIR/NAME-certs and serves them on a free 127.0.0.1 port; with
# TESSERA_JOBCTL_WEBHOOKS=1 (the default) its own webhook configurations (config/.../manifests.yaml
# in the module cache) are registered with clientConfig.url pointing there, so that objects and
# pods are defaulted and labelled as in production. TESSERA_JOBCTL_WEBHOOKS=0 registers none
# (then only the CRDs' OpenAPI defaults apply; lws pods lack their worker-index label).
# kueue runs with its batch/job integration only, and of its webhooks only those of batch Jobs and
# of its own kinds are registered (the others' frameworks are off, and its pod webhook would
# stand in front of every pod of the cluster).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${TESSERA_K8S_CACHE:-${HOME:+$HOME/.cache/tessera-k8s}}"
CACHE="${CACHE:-$ROOT/.cache/k8s}"
BIN="$CACHE/controllers/bin"
cmd="${1:-}"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
[ -n "$cmd" ] || usage

# module_dir NAME: the controller module's directory in the module cache.
module_dir() {
  local mod="$ROOT/scripts/k8s/controllers/$1"
  [ -f "$mod/go.mod" ] || { echo "job-controller: no controller '$1'" >&2; return 1; }
  local pkg; pkg="$(awk '$1=="tool"{print $2; exit}' "$mod/go.mod")"
  (cd "$mod" && GOFLAGS=-mod=readonly go list -f '{{.Module.Dir}}' "$pkg")
}

crds() {
  local d; d="$(module_dir "$1")"
  case "$1" in
    jobset|kueue) ls "$d"/config/components/crd/bases/*.yaml ;;
    lws) ls "$d"/config/crd/bases/*.yaml ;;
    kuberay) ls "$d"/config/crd/bases/ray.io_rayclusters.yaml "$d"/config/crd/bases/ray.io_rayjobs.yaml ;;
    trainer) ls "$d"/manifests/base/crds/trainer.kubeflow.org_*.yaml ;;
    mpi-operator) ls "$d"/manifests/base/kubeflow.org_mpijobs.yaml ;;
    *) echo "job-controller: no CRDs known for '$1'" >&2; return 1 ;;
  esac
}

webhook_manifest() {
  local d; d="$(module_dir "$1")"
  case "$1" in
    jobset|kueue) echo "$d/config/components/webhook/manifests.yaml" ;;
    lws) echo "$d/config/webhook/manifests.yaml" ;;
    *) echo "" ;;
  esac
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# register_webhooks DIR NAME PORT: the controller's webhook configurations, pointed at
# https://127.0.0.1:PORT with the self-signed CA; names get a "NAME-" prefix.
register_webhooks() {
  local dir="$1" name="$2" port="$3" manifest
  manifest="$(webhook_manifest "$name")"
  [ -n "$manifest" ] || return 0
  # Kueue: only the webhooks of batch Jobs and of its own kinds (the frameworks it runs).
  local keep="."; [ "$name" = kueue ] && keep="-batch-v1-job$|-kueue-x-k8s-io-"
  python3 - "$manifest" "$dir/$name-certs/tls.crt" "$port" "$name" "$keep" >"$dir/$name-webhooks.yaml" <<'PY'
import base64, re, sys, yaml
manifest, ca, port, name, keep = sys.argv[1:6]
bundle = base64.b64encode(open(ca, "rb").read()).decode()
out = []
for doc in yaml.safe_load_all(open(manifest)):
    if not doc:
        continue
    doc["metadata"] = {"name": f"tessera-test-{name}-{doc['metadata']['name']}"}
    hooks = []
    for w in doc.get("webhooks", []):
        path = w["clientConfig"]["service"].get("path", "/")
        if not re.search(keep, path):
            continue
        w["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        hooks.append(w)
    doc["webhooks"] = hooks
    out.append(doc)
yaml.safe_dump_all(out, sys.stdout)
PY
  apply_yaml "$dir" "$dir/$name-webhooks.yaml"
}

# apply_yaml DIR FILE...: creates every document (CRDs, webhook configurations) in the cluster
# of DIR; an object that exists already is left as it is.
apply_yaml() {
  local dir="$1"; shift
  # shellcheck disable=SC1091
  source "$dir/env"
  python3 - "$API_PORT" "$TOKEN" "$@" <<'PY'
import json, ssl, sys, urllib.error, urllib.request, yaml
port, token, files = sys.argv[1], sys.argv[2], sys.argv[3:]
ctx = ssl._create_unverified_context()
paths = {"Namespace": "/api/v1/namespaces",
         "Secret": "/api/v1/namespaces/{ns}/secrets",
         "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
         "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
         "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"}
for f in files:
    for doc in yaml.safe_load_all(open(f)):
        if not doc:
            continue
        path = paths[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        r = urllib.request.Request(f"https://127.0.0.1:{port}{path}", method="POST",
                                   data=json.dumps(doc).encode(),
                                   headers={"Authorization": f"Bearer {token}",
                                            "Content-Type": "application/json"})
        try:
            urllib.request.urlopen(r, context=ctx)
        except urllib.error.HTTPError as e:
            if e.code != 409:
                sys.exit(f"job-controller: {doc['kind']} {doc['metadata']['name']}: HTTP {e.code}: {e.read()[:300]}")
PY
}

# trainer_certs DIR: what the kubelet would do for the trainer's pod, which mounts the Secret its
# cert rotator fills: write the Secret's keys to the fixed directory it reads them from.
trainer_certs() {
  # shellcheck disable=SC1091
  source "$1/env"
  python3 - "$API_PORT" "$TOKEN" <<'PY'
import base64, json, os, ssl, sys, urllib.request
port, token = sys.argv[1:3]
r = urllib.request.Request(f"https://127.0.0.1:{port}/api/v1/namespaces/kubeflow-system/secrets/kubeflow-trainer-webhook-cert",
                           headers={"Authorization": f"Bearer {token}"})
data = json.load(urllib.request.urlopen(r, context=ssl._create_unverified_context())).get("data") or {}
d = "/tmp/k8s-webhook-server/serving-certs"
os.makedirs(d, exist_ok=True)
for k, v in data.items():
    path = os.path.join(d, k)
    b = base64.b64decode(v)
    if not os.path.exists(path) or open(path, "rb").read() != b:
        open(path + ".tmp", "wb").write(b)
        os.replace(path + ".tmp", path)
PY
}

# webhooks_served DIR NAME PORT: every webhook path of DIR/NAME-webhooks.yaml answers (not 404).
webhooks_served() {
  local path code
  for path in $(sed -n 's|.*url: https://127.0.0.1:[0-9]*\(/.*\)|\1|p' "$1/$2-webhooks.yaml"); do
    code="$(curl -sk -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      -d '{}' "https://127.0.0.1:$3$path")"
    [ "$code" != 404 ] && [ "$code" != 000 ] || return 1
  done
}

start() {
  local dir="$1" name="$2"
  [ -x "$BIN/$name" ] || { echo "job-controller: no $BIN/$name (run scripts/k8s/build-controllers.sh $name)" >&2; return 3; }
  local probe; probe="$(free_port)"
  local wport; wport="$(free_port)"
  local certs="$dir/$name-certs" webhooks="${TESSERA_JOBCTL_WEBHOOKS:-1}"
  mkdir -p "$certs"
  [ -f "$certs/tls.crt" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
      -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
      -keyout "$certs/tls.key" -out "$certs/tls.crt" 2>/dev/null
  local args=()
  case "$name" in
    jobset|lws)
      local group=jobset; [ "$name" = lws ] && group=lws
      cat >"$dir/$name-config.yaml" <<CFG
apiVersion: config.$group.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $wport, host: 127.0.0.1, certDir: $certs}
health: {healthProbeBindAddress: "127.0.0.1:$probe"}
metrics: {bindAddress: "0"}
CFG
      args=(--config="$dir/$name-config.yaml" --zap-log-level=info)
      ;;
    kueue)
      # Kueue's defaults (controller_manager_config.yaml in its module), with batch Jobs only.
      cat >"$dir/kueue-config.yaml" <<CFG
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $wport, host: 127.0.0.1, certDir: $certs}
health: {healthProbeBindAddress: "127.0.0.1:$probe"}
metrics: {bindAddress: "0"}
clientConnection: {qps: 50, burst: 100}
controller:
  groupKindConcurrency: {Job.batch: 5, Pod: 5, Workload.kueue.x-k8s.io: 5, LocalQueue.kueue.x-k8s.io: 1, Cohort.kueue.x-k8s.io: 1, ClusterQueue.kueue.x-k8s.io: 1, ResourceFlavor.kueue.x-k8s.io: 1}
integrations: {frameworks: [batch/job]}
featureGates: {VisibilityOnDemand: false}
CFG
      # Without internal cert management Kueue reads a metrics certificate from a fixed path
      # (even with metrics off) and exits when it is missing: give it the self-signed one. Its
      # visibility API server (VisibilityOnDemand) would want certificates in /visibility: off.
      mkdir -p /etc/kueue/metrics/certs
      cmp -s "$certs/tls.crt" /etc/kueue/metrics/certs/tls.crt ||
        cp "$certs/tls.crt" "$certs/tls.key" /etc/kueue/metrics/certs/
      args=(--config="$dir/kueue-config.yaml" --zap-log-level=info)
      ;;
    kuberay)
      args=(--metrics-addr=0 --health-probe-bind-address="127.0.0.1:$probe"
            --enable-leader-election=false --log-stdout-encoder=console)
      webhooks=0
      ;;
    trainer)
      # Its cert rotator cannot be turned off: it keeps the Secret kubeflow-system/
      # kubeflow-trainer-webhook-cert, writes /tmp/k8s-webhook-server/serving-certs and patches
      # the caBundle of validator.trainer.kubeflow.org, which is registered without webhooks (a
      # TrainJob is not validated). TrainJobs become JobSets: the jobset controller must run too.
      cat >"$dir/trainer-setup.yaml" <<SETUP
apiVersion: v1
kind: Namespace
metadata: {name: kubeflow-system}
---
apiVersion: v1
kind: Secret
metadata: {name: kubeflow-trainer-webhook-cert, namespace: kubeflow-system}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validator.trainer.kubeflow.org}
webhooks: []
SETUP
      apply_yaml "$dir" "$dir/trainer-setup.yaml"
      args=(--metrics-bind-address=0 --health-probe-bind-address="127.0.0.1:$probe"
            --leader-elect=false --webhook-server-port="$wport")
      webhooks=0
      ;;
    mpi-operator)
      # No webhooks and no metrics (--monitoring-port=0); leader election cannot be turned off
      # (its Lease goes to the default namespace), and its health check listens on :8080, fixed:
      # one mpi-operator per machine at a time. Ready when its log says "Started workers".
      args=(--kubeConfig="$dir/kubeconfig" --lock-namespace=default --monitoring-port=0)
      webhooks=0
      ;;
    *) echo "job-controller: do not know how to run '$name'" >&2; return 1 ;;
  esac
  if [ "$webhooks" = 1 ]; then register_webhooks "$dir" "$name" "$wport"; fi
  # lws reads ENABLE_WEBHOOKS (false: no webhook server at all); kuberay ENABLE_WEBHOOKS=true.
  local ew=true; [ "$webhooks" = 1 ] || ew=false
  [ "$name" = kuberay ] && ew=false
  # The trainer (its fixed certificate directory) and the MPI operator (its fixed port 8080) run
  # one at a time on a machine: each holds a lock for its life, taken before it starts (the
  # subshell takes it, then becomes the controller), so a second test waits for the first's to
  # stop (ctest -j runs the test binaries side by side).
  local lock=""
  case "$name" in trainer | mpi-operator) lock="/tmp/tessera-jobctl-$name.lock" ;; esac
  (
    if [ -n "$lock" ]; then
      exec 9>"$lock"
      flock 9
    fi
    KUBECONFIG="$dir/kubeconfig" ENABLE_WEBHOOKS="$ew" exec "$BIN/$name" "${args[@]}"
  ) >>"$dir/$name.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/jobctl-$name.pid"
  local waited=0
  while [ -n "$lock" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "${name:0:15}" ]; do
    kill -0 "$pid" 2>/dev/null || break
    waited=$((waited + 1))
    if [ "$waited" -gt 1200 ]; then
      echo "job-controller: $name waited 5 minutes for $lock" >&2
      return 1
    fi
    sleep 0.25
  done
  for _ in $(seq 1 240); do
    if [ "$name" = trainer ]; then trainer_certs "$dir" || true; fi
    if [ "$name" = mpi-operator ]; then
      if grep -q "Started workers" "$dir/$name.log"; then
        echo "job-controller: $name ready (pid $pid)" >&2
        return 0
      fi
    elif [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$probe/readyz")" = 200 ]; then
      # The manager reports ready once its webhook server listens, which can be before the
      # webhooks' handlers are registered (they are set up in a goroutine): wait for those too.
      if [ "$webhooks" = 1 ] && ! webhooks_served "$dir" "$name" "$wport"; then
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
        continue
      fi
      echo "job-controller: $name ready (pid $pid, probe 127.0.0.1:$probe, webhooks $webhooks)" >&2
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  echo "job-controller: $name did not become ready; see $dir/$name.log" >&2
  tail -20 "$dir/$name.log" >&2
  return 1
}

stop() {
  local f="$1/jobctl-$2.pid"
  [ -f "$f" ] || return 0
  local pid; pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

case "$cmd" in
  crds) crds "${2:?name}" ;;
  apply-crds)
    # shellcheck disable=SC2046
    apply_yaml "${2:?dir}" $(crds "${3:?name}")
    ;;
  start) start "${2:?dir}" "${3:?name}" ;;
  stop) stop "${2:?dir}" "${3:?name}" ;;
  *) usage ;;
esac
