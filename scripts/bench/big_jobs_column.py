#!/usr/bin/env python3
"""Sets one column of a generic jobs CSV (docs/trace-replay.md) by job size: the converters'
--big-max-wait / --big-priority for any trace in that format, e.g. a synthetic one written by
`tessera sim replay ... --write-trace DIR`.

    scripts/bench/big_jobs_column.py --jobs out/gangs-s1/jobs.csv --column max_wait --big 0 \
        --out out/gangs-s1-b0/jobs.csv

A job's GPUs are pods x gpus (a GPU share, gpu_milli below 1000, counts as none). Jobs of
--min-gpus (default 16) or more get --big, the others --others (default: empty, e.g. no wait
limit or the default priority). The column is added at the end, or replaced where the file has it.
Every other column, comment lines and the row order are kept.
"""
import argparse
import csv
import os
import sys


def gpus_of(row, where):
    def num(col, default):
        v = (row.get(col) or "").strip()
        if not v:
            return default
        try:
            f = float(v)
        except ValueError:
            sys.exit(f"{where}: {col}: \"{v}\" is not a number")
        if f < 0 or f != int(f):
            sys.exit(f"{where}: {col}: {v} is not a whole number, 0 or more")
        return int(f)
    pods, gpus, milli = num("pods", 1), num("gpus", 0), num("gpu_milli", 0)
    if milli >= 1000 and gpus == 0:
        gpus = 1
    elif 0 < milli < 1000:
        gpus = 0
    return pods * gpus


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", required=True, help="a generic jobs CSV (it has `arrival`)")
    ap.add_argument("--out", required=True, help="the jobs CSV to write (its folder is made)")
    ap.add_argument("--column", required=True, help="e.g. max_wait or priority")
    ap.add_argument("--big", required=True, help="the value for jobs of --min-gpus or more")
    ap.add_argument("--others", default="", help="the value for the others (default: empty)")
    ap.add_argument("--min-gpus", type=int, default=16)
    a = ap.parse_args()
    if os.path.abspath(a.jobs) == os.path.abspath(a.out):
        sys.exit("--out must not be --jobs")
    with open(a.jobs, newline="") as f:
        lines = f.read().splitlines()
    data = [(i + 1, l) for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("#")]
    if not data:
        sys.exit(f"{a.jobs}: empty, a header line was expected")
    header = next(csv.reader([data[0][1]]))
    header = [h.strip() for h in header]
    if "arrival" not in header:
        sys.exit(f"{a.jobs}:{data[0][0]}: not a generic job list (no arrival column)")
    col = header.index(a.column) if a.column in header else None
    out_header = header + ([a.column] if col is None else [])
    big = small = 0
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(out_header)
        for n, line in data[1:]:
            fields = next(csv.reader([line]))
            row = dict(zip(header, fields))
            is_big = gpus_of(row, f"{a.jobs}:{n}") >= a.min_gpus
            v = a.big if is_big else a.others
            big, small = big + is_big, small + (not is_big)
            if col is None:
                fields = fields + [""] * (len(header) - len(fields)) + [v]
            else:
                fields = fields + [""] * (len(header) - len(fields))
                fields[col] = v
            w.writerow(fields)
    print(f"{a.out}: {a.column} {a.big!r} on {big} jobs of {a.min_gpus}+ GPUs, "
          f"{a.others!r} on {small} others", file=sys.stderr)


if __name__ == "__main__":
    main()
