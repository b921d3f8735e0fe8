#!/usr/bin/env python3
"""The job stream of bench/peers/run.sh, and what it measures (docs/comparison.md).

  stream.py queues DIR STACK SCENARIO    create the namespaces and queues (STACK: kueue, tessera)
  stream.py run DIR STACK SCENARIO OUT   create the Jobs at their arrival times, watch until
                                         every Job completes, write the figures to OUT (JSON)
  stream.py table OUT...                 one table of the figures of each stack
  stream.py apply DIR FILE...            create the CustomResourceDefinitions in FILE

The same seed gives both stacks the same Jobs at the same offsets. Times are taken here, on the
client, from watch events (creationTimestamp and conditions have a resolution of one second):
created = just before the POST; admitted = the Workload's Admitted condition (Kueue) or, for
Tessera, which admits and binds in one step, its first pod bound; bound = the Job's last pod
seen with spec.nodeName; done = the Job's Complete condition.
"""
import http.client
import json
import random
import ssl
import sys
import threading
import time

SCENARIOS = {
    # nodes x 8 GPUs; teams (ClusterQueue nominal GPUs, all in one cohort, borrowing allowed);
    # jobs arriving uniformly over `window` seconds; runtimes uniform in [rt_min, rt_max] s.
    "quick": {"nodes": 8, "teams": {"team-a": 16, "team-b": 24, "team-c": 24}, "jobs": 60,
              "window": 60, "rt_min": 10, "rt_max": 30, "seed": 1},
    # Every Job fits when it is created (quota and nodes far above the load): what each stack
    # itself adds between a Job's creation and its pods bound.
    "fit": {"nodes": 32, "teams": {"team-a": 1000, "team-b": 1000, "team-c": 1000}, "jobs": 60,
            "window": 60, "rt_min": 5, "rt_max": 10, "seed": 1},
    "full": {"nodes": 32, "teams": {"team-a": 64, "team-b": 96, "team-c": 96}, "jobs": 300,
             "window": 240, "rt_min": 20, "rt_max": 60, "seed": 1},
}
# (pods, GPUs per pod), drawn with these weights: 1..8 GPUs in one pod, gangs of 2..4 pods.
SHAPES = [((1, 1), 4), ((1, 2), 3), ((1, 4), 3), ((1, 8), 3), ((2, 8), 2), ((4, 2), 1),
          ((4, 8), 1)]


class Api:
    def __init__(self, d):
        env = dict(l.strip().split("=", 1) for l in open(f"{d}/env") if "=" in l)
        self.port, self.token = int(env["API_PORT"]), env["TOKEN"]
        self.ctx = ssl._create_unverified_context()

    def conn(self, timeout=30):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                           timeout=timeout)

    def req(self, method, path, body=None, ok=(200, 201, 409)):
        c = self.conn()
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Authorization": f"Bearer {self.token}",
                           "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status not in ok:
            sys.exit(f"stream.py: {method} {path}: HTTP {r.status}: {data[:400]!r}")
        return json.loads(data) if data else {}

    def watch(self, path, on_event, stop):
        """List, then watch from the list's version; re-watch when the server ends it."""
        lst = self.req("GET", path)
        for o in lst.get("items", []):
            on_event("ADDED", o)
        rv = lst["metadata"]["resourceVersion"]
        while not stop.is_set():
            c = self.conn(timeout=None)
            c.request("GET", f"{path}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
                      "&timeoutSeconds=300", headers={"Authorization": f"Bearer {self.token}"})
            r = c.getresponse()
            while not stop.is_set():
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev["type"] == "ERROR":
                    sys.exit(f"stream.py: watch {path}: {ev['object'].get('message')}")
                rv = ev["object"]["metadata"].get("resourceVersion", rv)
                if ev["type"] != "BOOKMARK":
                    on_event(ev["type"], ev["object"])
            c.close()


def jobs_of(sc):
    rng = random.Random(sc["seed"])
    teams = sorted(sc["teams"])
    shapes, weights = zip(*SHAPES)
    out = []
    for i in range(sc["jobs"]):
        pods, gpus = rng.choices(shapes, weights)[0]
        out.append({"name": f"j{i:04d}", "team": rng.choice(teams), "pods": pods, "gpus": gpus,
                    "at": rng.uniform(0, sc["window"]),
                    "runtime": rng.randint(sc["rt_min"], sc["rt_max"])})
    return sorted(out, key=lambda j: j["at"])


def queues(api, stack, sc):
    group = "kueue.x-k8s.io/v1beta2" if stack == "kueue" else "tessera.dev/v1alpha1"
    cohort_key = "cohortName" if stack == "kueue" else "cohort"
    base = f"/apis/{group}"
    api.req("POST", f"{base}/resourceflavors", {"apiVersion": group, "kind": "ResourceFlavor",
                                                "metadata": {"name": "gpu"}, "spec": {}})
    for team, quota in sc["teams"].items():
        api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": team}})
        api.req("POST", f"{base}/clusterqueues", {
            "apiVersion": group, "kind": "ClusterQueue", "metadata": {"name": team},
            "spec": {cohort_key: "gpus", "namespaceSelector": {},
                     "queueingStrategy": "BestEffortFIFO",
                     "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                         {"name": "gpu", "resources": [{"name": "nvidia.com/gpu",
                                                        "nominalQuota": quota}]}]}]}})
        api.req("POST", f"{base}/namespaces/{team}/localqueues", {
            "apiVersion": group, "kind": "LocalQueue",
            "metadata": {"name": "jobs", "namespace": team}, "spec": {"clusterQueue": team}})


def job_object(j, stack):
    pod = {"metadata": {"annotations": {
               "pod-complete.stage.kwok.x-k8s.io/delay": f"{j['runtime']}s"}},
           "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "work", "image": "fake",
                                    "resources": {"limits": {"nvidia.com/gpu": j["gpus"]}}}]}}
    if stack == "tessera":
        pod["spec"]["schedulerName"] = "tessera"
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": j["name"], "namespace": j["team"],
                         "labels": {"kueue.x-k8s.io/queue-name": "jobs"}},
            # Kueue's webhook suspends a Job it manages; created suspended, it needs no webhook.
            "spec": {"parallelism": j["pods"], "completions": j["pods"],
                     "suspend": stack == "kueue", "backoffLimit": 0, "template": pod}}


def run(api, d, stack, sc, out):
    jobs = jobs_of(sc)
    by_key = {(j["team"], j["name"]): j for j in jobs}
    lock = threading.Lock()
    stop = threading.Event()
    t = {k: {} for k in ("created", "admitted", "first_bound", "bound", "done")}
    pod_bound, pod_end, pod_gpus, bound_count = {}, {}, {}, {}

    def now():
        return time.monotonic()

    def on_pod(_type, p):
        md, key = p["metadata"], None
        job = md.get("labels", {}).get("job-name")
        if job:
            key = (md["namespace"], job)
        if key not in by_key:
            return
        pk = (md["namespace"], md["name"])
        with lock:
            if p["spec"].get("nodeName") and pk not in pod_bound:
                pod_bound[pk] = now()
                pod_gpus[pk] = by_key[key]["gpus"]
                n = bound_count[key] = bound_count.get(key, 0) + 1
                t["first_bound"].setdefault(key, pod_bound[pk])
                if n == by_key[key]["pods"]:
                    t["bound"][key] = pod_bound[pk]
            if p.get("status", {}).get("phase") in ("Succeeded", "Failed") and pk not in pod_end:
                pod_end[pk] = now()

    def on_job(_type, jo):
        key = (jo["metadata"]["namespace"], jo["metadata"]["name"])
        if key in by_key and any(c["type"] == "Complete" and c["status"] == "True"
                                 for c in jo.get("status", {}).get("conditions", [])):
            with lock:
                t["done"].setdefault(key, now())

    def on_workload(_type, w):
        owners = [o["name"] for o in w["metadata"].get("ownerReferences", [])
                  if o["kind"] == "Job"]
        if not owners:
            return
        key = (w["metadata"]["namespace"], owners[0])
        if key in by_key and any(c["type"] == "Admitted" and c["status"] == "True"
                                 for c in w.get("status", {}).get("conditions", [])):
            with lock:
                t["admitted"].setdefault(key, now())

    watches = [("/api/v1/pods", on_pod), ("/apis/batch/v1/jobs", on_job)]
    if stack == "kueue":
        watches.append(("/apis/kueue.x-k8s.io/v1beta2/workloads", on_workload))
    for path, fn in watches:
        threading.Thread(target=api.watch, args=(path, fn, stop), daemon=True).start()
    time.sleep(1)
    start = now()
    for j in jobs:
        delay = start + j["at"] - now()
        if delay > 0:
            time.sleep(delay)
        with lock:
            t["created"][(j["team"], j["name"])] = now()
        api.req("POST", f"/apis/batch/v1/namespaces/{j['team']}/jobs", job_object(j, stack))
    limit = start + sc["window"] + 8 * sc["rt_max"] + 60
    while len(t["done"]) < len(jobs) and now() < limit:
        time.sleep(0.5)
    end = max(t["done"].values(), default=now())
    stop.set()
    if stack == "tessera":
        t["admitted"] = dict(t["first_bound"])
    res = {"stack": stack, "jobs": len(jobs), "completed": len(t["done"]),
           "drain_s": end - start, "nodes": sc["nodes"]}
    for what in ("admitted", "bound"):
        lat = sorted(t[what][k] - t["created"][k] for k in t[what] if k in t["created"])
        res[f"{what}_n"] = len(lat)
        for q in (50, 95, 99):
            res[f"{what}_p{q}"] = lat[min(len(lat) - 1, len(lat) * q // 100)] if lat else None
    spread = sorted((t["bound"][k] - t["first_bound"][k], k) for k in t["bound"]
                    if by_key[k]["pods"] > 1)
    res["gang_spread_max_s"] = spread[-1][0] if spread else 0.0
    if spread:  # the gang bound most apart: each pod's bind, seconds after the Job's creation
        k = spread[-1][1]
        res["gang_spread_max_job"] = {
            "job": "/".join(k), "pods": by_key[k]["pods"], "gpus": by_key[k]["gpus"],
            "binds": sorted(round(b - t["created"][k], 3) for pk, b in pod_bound.items()
                            if pk[0] == k[0] and pk[1].startswith(k[1] + "-"))}
    cap = sc["nodes"] * 8 * (end - start)
    used = sum(pod_gpus[k] * (min(pod_end.get(k, end), end) - b) for k, b in pod_bound.items())
    res["gpu_alloc_mean"] = used / cap if cap > 0 else 0.0
    json.dump(res, open(out, "w"), indent=1)
    print(json.dumps(res))


def table(files):
    rows = [json.load(open(f)) for f in files]
    def f(v):
        if v is None:
            return "-"
        return (f"{v:.3f}" if v < 10 else f"{v:.1f}") if isinstance(v, float) else str(v)
    keys = [("jobs completed", "completed"), ("drain (s)", "drain_s"),
            ("create->admitted p50 (s)", "admitted_p50"),
            ("create->admitted p95 (s)", "admitted_p95"),
            ("create->all pods bound p50 (s)", "bound_p50"),
            ("create->all pods bound p95 (s)", "bound_p95"),
            ("create->all pods bound p99 (s)", "bound_p99"),
            ("gang first->last pod bound, max (s)", "gang_spread_max_s"),
            ("mean GPU allocation", "gpu_alloc_mean")]
    keys += [(f"CPU s: {k[4:]}", k) for k in sorted({k for r in rows for k in r
                                                    if k.startswith("cpu_")})]
    names = [{"kueue": "Kueue + kube-scheduler", "tessera": "Tessera serve"}.get(r["stack"],
                                                                                 r["stack"])
             for r in rows]
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(rows))
    for label, k in keys:
        print(f"| {label} | " + " | ".join(f(r.get(k)) for r in rows) + " |")


def main(argv):
    if len(argv) < 2 or argv[1] not in ("queues", "run", "table", "apply"):
        sys.exit(__doc__)
    if argv[1] == "table":
        return table(argv[2:])
    if argv[1] == "apply":
        import yaml
        api = Api(argv[2])
        for f in argv[3:]:
            for doc in yaml.safe_load_all(open(f)):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    api.req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc)
        return None
    d, stack, scen = argv[2:5]
    if stack not in ("kueue", "tessera") or scen not in SCENARIOS:
        sys.exit(f"stream.py: stack must be kueue or tessera, scenario one of {list(SCENARIOS)}")
    api = Api(d)
    if argv[1] == "queues":
        queues(api, stack, SCENARIOS[scen])
    else:
        run(api, d, stack, SCENARIOS[scen], argv[5])


if __name__ == "__main__":
    main(sys.argv)
