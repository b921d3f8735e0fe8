#!/usr/bin/env python3
"""Microsoft ITP (ms-itp-elasticflow/clusterNN.csv) to the replay's generic CSV formats, for
issue 14's runs.

    scripts/bench/itp_jobs.py --cluster 04 --load 0.65 --out /tmp/itp-04
    scripts/bench/itp_jobs.py --cluster 02 --nodes 14 --out /tmp/itp-02

writes OUT/jobs.csv (docs/trace-replay.md's converter: arrivals from the cluster's first
submission, in submission order, pods of at most 8 GPUs, 1 core and 4 GiB per GPU) and
OUT/nodes.csv (nodes of 8 GPUs, 64 cores and 512 GiB, so that only GPUs limit placement).

The trace has no cluster sizes. `--load L` picks the smallest node count whose offered load over
the arrival span (GPU-seconds asked / (span x GPUs)) is at most L, and never fewer nodes than the
largest job needs; `--nodes N` gives the count. It prints the offered load, and the peak of the
demand (GPUs that would run at once with no queue at all, every job started at its submission)
against the cluster's GPUs, to judge how much the bursts must queue.
"""
import argparse
import csv
import heapq
import math
import os

from replay_csv import add_output_arguments, write_replay_csvs

TRACES = os.path.join(os.path.dirname(__file__), "../../../shared/traces/ms-itp-elasticflow")


def read(path):
    rows = []
    with open(path, newline="") as f:
        for n, r in enumerate(csv.DictReader(f), start=2):
            try:
                t, d, g = float(r["submission_time"]), float(r["duration"]), int(r["num_gpu"])
            except (KeyError, TypeError, ValueError) as e:
                raise SystemExit(f"{path}:{n}: bad row ({e}): {r}")
            if d < 0 or g < 1:
                raise SystemExit(f"{path}:{n}: negative duration or no GPU: {r}")
            rows.append((t, d, g))
    if not rows:
        raise SystemExit(f"{path}: no jobs")
    rows.sort(key=lambda x: x[0])  # stable: the file's order among equal times
    return rows


def peak_demand(rows):
    """GPUs running at once if every job started at its submission: the maximum, and the share
    of the arrival span spent above `level` is computed by the caller from the events."""
    ev = []
    for t, d, g in rows:
        ev.append((t, g))
        ev.append((t + d, -g))
    ev.sort()
    cur = peak = 0
    for _, g in ev:
        cur += g
        peak = max(peak, cur)
    return peak, ev


def time_above(ev, level, t0, t1):
    cur, last, above = 0, t0, 0.0
    for t, g in ev:
        t = min(max(t, t0), t1)
        if cur > level:
            above += t - last
        last = t
        cur += g
    return above / (t1 - t0) if t1 > t0 else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cluster", required=True, help="01 to 10 (clusterNN.csv)")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--nodes", type=int, help="nodes of 8 GPUs")
    group.add_argument("--load", type=float, help="offered load over the arrival span, e.g. 0.65")
    add_output_arguments(ap)
    ap.add_argument("--traces", default=TRACES, help="the folder of clusterNN.csv")
    a = ap.parse_args()
    rows = read(os.path.join(a.traces, f"cluster{a.cluster}.csv"))
    gpu_s = sum(d * g for _, d, g in rows)
    span = max(1.0, rows[-1][0] - rows[0][0])
    min_nodes = math.ceil(max(g for _, _, g in rows) / 8)
    if a.nodes is not None:
        if a.nodes < min_nodes:
            raise SystemExit(f"--nodes {a.nodes}: the largest job needs {min_nodes} nodes")
        nodes = a.nodes
    else:
        if not 0 < a.load <= 1:
            raise SystemExit(f"--load {a.load}: must be in (0, 1]")
        nodes = max(min_nodes, math.ceil(gpu_s / span / (8 * a.load)))
    write_replay_csvs(a.out, rows, nodes, a.big_priority, a.big_max_wait, a.max_wait)
    gpus = 8 * nodes
    peak, ev = peak_demand(rows)
    above = time_above(ev, gpus, rows[0][0], rows[-1][0])
    print(f"cluster{a.cluster}: {len(rows)} jobs over {span / 86400:.1f} days, "
          f"{sum(1 for *_, g in rows if g >= 16)} of 16+ GPUs; {nodes} nodes ({gpus} GPUs); "
          f"offered load over the arrival span {gpu_s / span / gpus:.2f}; "
          f"demand with no queue peaks at {peak} GPUs ({peak / gpus:.1f}x) and exceeds the "
          f"cluster {100 * above:.0f}% of the arrival span")


if __name__ == "__main__":
    main()
