#!/usr/bin/env python3
"""Writes the FGD experiment's arrival order as input for `tessera sim replay`.

For one openb pod list and seed it reproduces what `tessera sim fgd` does before placing
(src/fgd/experiment.cc: PodOrder, NodeRanks, with the same std::mt19937_64 draws and Lemire's
mapping of fgd/rng.h): pods sorted by name, shuffled, inflated (or thinned) to --tune x the
cluster's GPUs; nodes renumbered by the run's random first-fit rank. It writes

  DIR/nodes.csv   the nodes in rank order (the engine breaks ties by node order: first fit)
  DIR/pods.csv    the pods in arrival order, five columns (no times: pod k arrives at k s and
                  never leaves); inflated copies get a "-copyN" suffix; gpu_spec is kept as a
                  sixth column when the input has one
  DIR/limits.txt  `N100 N` : the number of pods up to the first one whose arrival brings the
                  arrived GPU milli to 100% of the cluster's GPUs (replay them with --limit N)

Usage: fgd-replay-input.py --nodes NODES.csv --pods PODS.csv --seed 42 --out DIR [--tune 1.3]
"""
import argparse
import csv
import os

MASK64 = (1 << 64) - 1


class MT19937_64:
    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & MASK64
        for i in range(1, 312):
            self.mt[i] = (6364136223846793005 * (self.mt[i - 1] ^ (self.mt[i - 1] >> 62)) + i) & MASK64
        self.index = 312

    def _twist(self):
        mt = self.mt
        for i in range(312):
            x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % 312] & 0x7FFFFFFF)
            xa = x >> 1
            if x & 1:
                xa ^= 0xB5026F5AA96619E9
            mt[i] = mt[(i + 156) % 312] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


class Rng:
    def __init__(self, seed):
        self.e = MT19937_64(seed)

    def below(self, n):
        m = self.e() * n
        low = m & MASK64
        if low < n:
            threshold = ((1 << 64) - n) % n
            while low < threshold:
                m = self.e() * n
                low = m & MASK64
        return m >> 64

    def shuffle(self, v):
        for i in range(len(v), 1, -1):
            j = self.below(i)
            v[i - 1], v[j] = v[j], v[i - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", required=True)
    ap.add_argument("--pods", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tune", type=float, default=1.3)
    a = ap.parse_args()

    with open(a.nodes) as f:
        nodes = list(csv.DictReader(f))
    with open(a.pods) as f:
        pods = list(csv.DictReader(f))
    has_spec = "gpu_spec" in (pods[0].keys() if pods else [])
    gpus_total = sum(int(n["gpu"]) for n in nodes if int(n["gpu"]) > 0)

    def shape(p):
        g = int(p["num_gpu"])
        milli = 0 if g == 0 else min(int(p["gpu_milli"]), 1000)
        return g, milli

    rng = Rng(a.seed)
    # PodOrder
    by_name = sorted(range(len(pods)), key=lambda i: pods[i]["name"].encode())
    order = list(by_name)
    rng.shuffle(order)
    total = sum(g * m for g, m in map(shape, pods))
    target = a.tune * gpus_total * 1000
    if total > target:
        while total > target and order:
            idx = rng.below(len(order))
            g, m = shape(pods[order[idx]])
            total -= g * m
            del order[idx]
    elif total < target:
        while True:
            idx = by_name[rng.below(len(by_name))]
            g, m = shape(pods[idx])
            if total + m > target:
                break
            total += g * m
            order.append(idx)
            if len(order) > 64 * len(pods) + 1024:
                break
    # NodeRanks (over the GPU nodes; the experiment's cluster is the node file as given)
    n_by_name = sorted(range(len(nodes)), key=lambda i: nodes[i]["sn"].encode())
    perm = list(range(len(nodes)))
    rng.shuffle(perm)
    rank = [0] * len(nodes)
    for k, i in enumerate(n_by_name):
        rank[i] = perm[k]

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "nodes.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["sn", "cpu_milli", "memory_mib", "gpu", "model"])
        for i in sorted(range(len(nodes)), key=lambda i: rank[i]):
            n = nodes[i]
            w.writerow([n["sn"], n["cpu_milli"], n["memory_mib"], n["gpu"], n["model"]])
    seen = {}
    arrived = 0
    n100 = None
    with open(os.path.join(a.out, "pods.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"] +
                   (["gpu_spec"] if has_spec else []))
        for k, i in enumerate(order):
            p = pods[i]
            c = seen.get(i, 0)
            seen[i] = c + 1
            name = p["name"] if c == 0 else f"{p['name']}-copy{c}"
            w.writerow([name, p["cpu_milli"], p["memory_mib"], p["num_gpu"], p["gpu_milli"]] +
                       ([p["gpu_spec"]] if has_spec else []))
            g, m = shape(p)
            arrived += g * m
            if n100 is None and arrived >= gpus_total * 1000:
                n100 = k + 1
    with open(os.path.join(a.out, "limits.txt"), "w") as f:
        f.write(f"N100 {n100}\n")
    print(f"seed {a.seed}: {len(order)} pods, {gpus_total} GPUs, N100 {n100}")


if __name__ == "__main__":
    main()
