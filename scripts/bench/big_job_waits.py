#!/usr/bin/env python3
"""What a replay's longest 16+ GPU waits are made of (docs/time-measurements.md, section 2,
"Wait limits", 3), from its accounting store (`tessera sim replay ... --accounting-db DB`):

    scripts/bench/big_job_waits.py --db out/p.db --gpus 768 --top 8
    scripts/bench/big_job_waits.py --db out/p.db --snapshot out/snap --at 4552632

The first lists the TOP longest-waiting jobs of --min-gpus or more (first run of each): arrival,
wait, runtime, GPUs busy at its arrival (of --gpus), the jobs and GPUs started while it waited
and how many of them were big, and the big jobs already waiting at its arrival. The second reads
the nodes of a report written with `--until T --report DIR` (dashboard.html's snapshot) of the
same run and lists when each node is wholly free if nothing new starts on it: the latest end,
from the store, of the workloads on it at T (--at T, seconds), earliest first.
"""
import argparse
import json
import re
import sqlite3


def hours(s):
    return f"{s / 3600:.2f} h"


def runs_of(db):
    return sqlite3.connect(db).execute(
        "SELECT name, gpus, submit_time, start_time, end_time FROM runs").fetchall()


def top_waits(runs, top, min_gpus, cap):
    first = {}
    for n, g, sub, st, en in runs:
        if n not in first or st < first[n][2]:
            first[n] = (g, sub, st, en)
    big = sorted(((st - sub, n, g, sub, st, en) for n, (g, sub, st, en) in first.items()
                  if g >= min_gpus), reverse=True)
    print(f"{len(big)} jobs of {min_gpus}+ GPUs; the {min(top, len(big))} longest waits:")
    for w, n, g, sub, st, en in big[:top]:
        busy = sum(gg for _, gg, s0, s1, e in runs if s1 <= sub < e)
        started = [(gg) for nn, gg, s0, s1, e in runs if sub <= s1 < st and nn != n]
        nbig = sum(1 for gg in started if gg >= min_gpus)
        ahead = [gg for nn, (gg, s0, s1, e) in first.items() if gg >= min_gpus and s0 < sub < s1]
        print(f"  {n}: {g:g} GPUs, arrived at {hours(sub)}, waited {hours(w)}, ran "
              f"{hours(en - st)}; GPUs busy at arrival {busy:g}"
              f"{f' of {cap}' if cap else ''}; started while it waited: {len(started)} jobs, "
              f"{sum(started):g} GPUs, {nbig} of them big; big jobs waiting at its arrival: "
              f"{len(ahead)} ({sum(ahead):g} GPUs)")


def drain(runs, snapshot, at):
    html = open(snapshot + "/dashboard.html").read()
    m = re.search(r'<script type="application/json" id="tessera-snapshot">(.*?)</script>', html,
                  re.S)
    if not m:
        raise SystemExit(f"{snapshot}/dashboard.html: no tessera-snapshot")
    nodes = json.loads(m.group(1))["nodes"]["items"]
    ends = {}
    for n, g, sub, st, en in runs:
        if st <= at < en:
            ends[n] = en
    out = []
    for nd in nodes:
        ws = {s["workload"].split("/")[-1] for s in nd["gpuSlots"] if s.get("workload")}
        free = sum(1 for s in nd["gpuSlots"] if not s.get("workload"))
        last = max((ends.get(w, at) for w in ws), default=at)
        out.append((last - at, nd["name"], free, len(ws)))
    out.sort()
    print(f"nodes wholly free, if nothing new starts on them, after T={at:g} s:")
    for k, (d, name, free, nw) in enumerate(out, 1):
        print(f"  {k:3d}. {name}: after {hours(d)} ({free} GPUs free at T, {nw} workloads)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the replay's --accounting-db")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--min-gpus", type=int, default=16)
    ap.add_argument("--gpus", type=int, default=0, help="the cluster's GPUs, for the message")
    ap.add_argument("--snapshot", help="a --report DIR written with --until T (same run)")
    ap.add_argument("--at", type=float, help="T, seconds (with --snapshot)")
    a = ap.parse_args()
    runs = runs_of(a.db)
    if a.snapshot:
        if a.at is None:
            raise SystemExit("--snapshot needs --at T (the --until of that report)")
        drain(runs, a.snapshot, a.at)
    else:
        top_waits(runs, a.top, a.min_gpus, a.gpus)


if __name__ == "__main__":
    main()
