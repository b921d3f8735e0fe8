#!/usr/bin/env python3
"""Philly (philly-pollux/philly.csv) to the replay's generic CSV formats, for issue 14's runs.

    scripts/bench/philly_jobs.py --vc ee9e8c --nodes 64 --out /tmp/philly-ee9e8c
    scripts/bench/philly_jobs.py --vc all --nodes 352 --out /tmp/philly-all

writes OUT/jobs.csv (docs/trace-replay.md's converter: arrivals from the first job, sorted,
pods of at most 8 GPUs, 1 core and 4 GiB per GPU) and OUT/nodes.csv (NODES nodes of 8 GPUs,
64 cores and 512 GiB, so that only GPUs limit placement). `--vc all` takes every VC.
"""
import argparse
import csv
import os
from datetime import datetime, timezone

from replay_csv import add_output_arguments, write_replay_csvs

TRACE = os.path.join(os.path.dirname(__file__), "../../../shared/traces/philly-pollux/philly.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vc", required=True, help="a VC hash of philly.csv, or all")
    ap.add_argument("--nodes", type=int, required=True, help="nodes of 8 GPUs")
    add_output_arguments(ap)
    ap.add_argument("--trace", default=TRACE)
    a = ap.parse_args()
    rows = []
    with open(a.trace) as f:
        for r in csv.DictReader(f):
            if a.vc != "all" and r["cluster"] != a.vc:
                continue
            t = datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
            rows.append((t.timestamp(), float(r["duration"]), int(r["num_gpus"])))
    rows.sort()  # the file is not sorted by time
    write_replay_csvs(a.out, rows, a.nodes, a.big_priority, a.big_max_wait, a.max_wait)
    gpu_s = sum(d * g for _, d, g in rows)
    span = rows[-1][0] - rows[0][0]
    print(f"{len(rows)} jobs over {span / 86400:.1f} days; offered load over the arrival span "
          f"{gpu_s / span / (8 * a.nodes):.2f} of {8 * a.nodes} GPUs")


if __name__ == "__main__":
    main()
