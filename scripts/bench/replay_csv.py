"""The replay's generic CSV files (docs/trace-replay.md) from a job list, shared by
philly_jobs.py and itp_jobs.py."""
import csv
import os


def add_output_arguments(ap):
    """The converters' shared flags: --out, --big-priority, --big-max-wait, --max-wait."""
    ap.add_argument("--out", required=True)
    ap.add_argument("--big-priority", type=int, default=None,
                    help="add a priority column: this for jobs of 16 or more GPUs, 0 for the "
                         "others (replay with --no-preemption to order without preempting)")
    ap.add_argument("--big-max-wait", type=float, default=None,
                    help="add a max_wait column (the job's wait limit, tessera.dev/max-wait, "
                         "seconds): this for jobs of 16 or more GPUs")
    ap.add_argument("--max-wait", type=float, default=None,
                    help="the max_wait of the other jobs (default: none)")


def write_replay_csvs(out_dir, rows, nodes, big_priority=None, big_max_wait=None,
                      max_wait=None):
    """Writes OUT_DIR/jobs.csv and OUT_DIR/nodes.csv.

    rows: (arrival seconds, duration seconds, GPUs) sorted by arrival; arrivals are written from
    the first one. A job is split into pods of at most 8 GPUs (8, 4, 2 or 1, the largest that
    divides it), each with 1 core and 4 GiB per GPU. nodes: how many nodes of 8 GPUs, 64 cores
    and 512 GiB (so that only GPUs limit placement). big_priority: when given, a priority column,
    this value for jobs of 16 or more GPUs and 0 for the others. big_max_wait, max_wait: when
    either is given, a max_wait column (the job's wait limit, seconds): big_max_wait for jobs of
    16 or more GPUs, max_wait for the others, empty (no limit) where the one that applies is None.
    """
    os.makedirs(out_dir, exist_ok=True)
    prio = big_priority is not None
    waits = big_max_wait is not None or max_wait is not None

    def limit(g):
        v = big_max_wait if g >= 16 else max_wait
        return ["" if v is None else f"{v:g}"] if waits else []
    with open(os.path.join(out_dir, "jobs.csv"), "w") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["name", "arrival", "duration", "pods", "gpus", "cpu_milli", "memory_mib"] +
                     (["priority"] if prio else []) + (["max_wait"] if waits else []))
        for i, (t, d, g) in enumerate(rows):
            per_pod = next(p for p in (8, 4, 2, 1) if g % p == 0)
            out.writerow([f"job-{i}", f"{t - rows[0][0]:.0f}", f"{d:.0f}", g // per_pod, per_pod,
                          1000 * per_pod, 4096 * per_pod] +
                         ([big_priority if g >= 16 else 0] if prio else []) + limit(g))
    with open(os.path.join(out_dir, "nodes.csv"), "w") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["name", "cpu_milli", "memory_mib", "gpus"])
        for n in range(nodes):
            out.writerow([f"node-{n:04d}", 64000, 524288, 8])
