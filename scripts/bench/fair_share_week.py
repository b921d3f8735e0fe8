#!/usr/bin/env python3
"""Issue 14's fair-share goal over a week: two LocalQueues of weights 2 (team-a) and 1 (team-b)
in one ClusterQueue of 8 GPUs with usage-based admission fair sharing, both keeping their queues
full for the whole week; prints each team's used GPU-hours and their ratio after 1 to 7 days.

    scripts/bench/fair_share_week.py --tessera build-rel/src/tessera --mix fixed --out out/afs
    scripts/bench/fair_share_week.py --tessera build-rel/src/tessera --mix mixed --out out/afs

--mix fixed: one-GPU jobs of 600 s (the case of docs/time-measurements.md section 4, a week
long); mixed: 1, 2 or 4 GPUs (1 twice as likely) and 5 min to 2 h, from a seeded generator.
Writes the manifest (DIR/week-MIX.yaml), runs `tessera sim FILE --until 604800 --output json`,
and counts GPU-seconds per team from the admissions, cut at each day's end.
"""
import argparse
import json
import os
import random
import subprocess
import sys

WEEK = 7 * 86400

HEADER = """apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {{name: config}}
spec:
  admissionFairSharing: {{usageHalfLifeTime: {half_life}, usageSamplingInterval: 5m}}
  backfill: {{enable: {backfill}}}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec:
  count: 1
  namePrefix: node-
  capacity: {{cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: shared}}
spec:
  namespaceSelector: {{}}
  admissionScope: {{admissionMode: UsageBasedAdmissionFairSharing}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: default, resources: [{{name: nvidia.com/gpu, nominalQuota: 8}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: team-a}}
spec: {{clusterQueue: shared, fairSharing: {{weight: "2"}}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: team-b}}
spec: {{clusterQueue: shared}}
"""

JOB = """---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, labels: {{kueue.x-k8s.io/queue-name: team-{team}}}, annotations: {{tessera.dev/arrival: "0", tessera.dev/created: "{created}", tessera.dev/runtime: "{runtime}"}}}}
spec: {{template: {{spec: {{containers: [{{name: c, image: x, resources: {{requests: {{nvidia.com/gpu: "{gpus}"}}}}}}]}}}}}}
"""


def jobs(mix, seed):
    """(name, team, created, runtime, gpus) for both teams, more than a week of work each."""
    rnd = random.Random(seed)
    per_team = 6000 if mix == "fixed" else 3000
    for i in range(per_team):
        for team in "ab":
            if mix == "fixed":
                yield f"{team}-{i}", team, i, 600, 1
            else:
                yield (f"{team}-{i}", team, i, rnd.choice([300, 600, 1800, 3600, 7200]),
                       rnd.choice([1, 1, 2, 4]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--mix", choices=["fixed", "mixed"], default="fixed")
    ap.add_argument("--half-life", default="168h", help="usageHalfLifeTime (default 168h)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-backfill", action="store_true", help="backfill: {enable: false}")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    manifest = os.path.join(a.out, f"week-{a.mix}.yaml")
    spec = {}
    with open(manifest, "w") as f:
        f.write(HEADER.format(half_life=a.half_life,
                              backfill="false" if a.no_backfill else "true"))
        for name, team, created, runtime, gpus in jobs(a.mix, a.seed):
            f.write(JOB.format(name=name, team=team, created=created, runtime=runtime, gpus=gpus))
            spec["default/" + name] = (team, runtime, gpus)
    run = subprocess.run([a.tessera, "sim", manifest, "--until", str(WEEK), "--output", "json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"tessera sim failed ({run.returncode}): {run.stderr[-2000:]}")
    out = json.loads(run.stdout)
    admitted = [(e["time"], spec[e["workload"]]) for e in out["events"] if e["type"] == "admitted"]
    for day in (1, 2, 3, 5, 7):
        end = day * 86400
        used = {"a": 0.0, "b": 0.0}
        for t, (team, runtime, gpus) in admitted:
            if t < end:
                used[team] += gpus * (min(t + runtime, end) - t) / 3600
        print(f"day {day}: team-a {used['a']:.1f} GPU-h, team-b {used['b']:.1f} GPU-h, "
              f"ratio {used['a'] / used['b']:.3f} ({(used['a'] / used['b'] / 2 - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
