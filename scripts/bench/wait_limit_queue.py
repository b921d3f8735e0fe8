#!/usr/bin/env python3
"""A replay's one ClusterQueue with a default wait limit, for issue 14's wait-limit runs
(docs/time-measurements.md, "Wait limits").

    scripts/bench/wait_limit_queue.py --max-wait 4h > out/wait-4h.yaml
    tessera sim replay ... --manifests out/wait-4h.yaml

writes (to stdout) a ResourceFlavor `default` and a ClusterQueue `default` annotated
`tessera.dev/max-wait: <LIMIT>` (the default limit of its workloads, docs/time.md "Wait limits"),
quota far above any trace's cluster (GPUs are the only limit, as with the replay's default
queue), preemption withinClusterQueue LowerPriority as the default queue has, and a LocalQueue
`team-0` in namespace `default` for the synthetic traces' jobs. Without --max-wait the queue has
no limit: a control run for the manifest queue itself.
"""
import argparse
import re

TEMPLATE = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: default{annotations}
spec:
  namespaceSelector: {{}}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {{name: cpu, nominalQuota: 1000000}}
      - {{name: memory, nominalQuota: 100000Ti}}
      - {{name: nvidia.com/gpu, nominalQuota: 100000}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: team-0
  namespace: default
spec:
  clusterQueue: default
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-wait", help="a duration: 90, 30m, 4h, 1h30m (none: no limit)")
    a = ap.parse_args()
    ann = ""
    if a.max_wait is not None:
        if not re.fullmatch(r"[0-9.]+|([0-9.]+(h|m|s|ms))+", a.max_wait):
            raise SystemExit(f"--max-wait {a.max_wait}: expected seconds or 30m, 4h, 1h30m")
        ann = f'\n  annotations: {{tessera.dev/max-wait: "{a.max_wait}"}}'
    print(TEMPLATE.format(annotations=ann), end="")


if __name__ == "__main__":
    main()
