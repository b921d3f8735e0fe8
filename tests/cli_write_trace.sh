#!/bin/sh
# `tessera sim replay --write-trace DIR` end to end (docs/trace-replay.md, "Writing a trace out"):
# the files replay as the synthetic trace did; scripts/bench/big_jobs_column.py gives the big jobs
# a wait limit that the replay then honours; bad input fails with a message.
#   cli_write_trace.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

# A directory that cannot be made: exit 1 and the path.
: >"$tmp/a-file"
if "$tessera" sim replay --synthetic-jobs 10 --synthetic-nodes 4 --write-trace "$tmp/a-file/d" \
     >"$tmp/out" 2>"$tmp/err" ||
   ! grep -q -- "--write-trace: $tmp/a-file/d: cannot be created" "$tmp/err"; then
  fail "--write-trace into a file's path: $(cat "$tmp/err")"
fi

# Several synthetic queues: the note that their order changes.
syn="sim replay --synthetic-jobs 300 --synthetic-nodes 8 --synthetic-mix gangs --seed 4"
if ! "$tessera" $syn --write-trace "$tmp/w8" >"$tmp/out" 2>"$tmp/err" ||
   ! grep -q "note: the queues first appear in jobs.csv in another order" "$tmp/out"; then
  fail "--write-trace of 8 synthetic queues does not say their order changes: $(cat "$tmp/out")"
fi

# One queue: the files replay as the synthetic trace (the same summary table).
syn="$syn --synthetic-queues 1"
w=$tmp/written
if ! "$tessera" $syn --write-trace "$w" >"$tmp/out" 2>"$tmp/err" ||
   ! grep -q "trace written: $w/nodes.csv (8 nodes), $w/jobs.csv (300 jobs)" "$tmp/out"; then
  fail "--write-trace: $(cat "$tmp/out" "$tmp/err")"
fi
"$tessera" $syn --estimates random:0.5-3 >"$tmp/direct" 2>"$tmp/err" || fail "replay: $(cat "$tmp/err")"
"$tessera" sim replay --nodes "$w/nodes.csv" --jobs "$w/jobs.csv" --seed 4 \
  --estimates random:0.5-3 >"$tmp/read" 2>"$tmp/err" || fail "replay of the files: $(cat "$tmp/err")"
if ! cmp -s "$tmp/direct" "$tmp/read"; then
  fail "the written files do not replay as the synthetic trace"
  diff "$tmp/direct" "$tmp/read" | head -10
fi

# big_jobs_column.py: max_wait 0 on the jobs of 16+ GPUs, the others without a limit; the replay
# counts one wait-limit event per big job (each is overdue at once).
if command -v python3 >/dev/null 2>&1; then
  big=$(awk -F, 'NR > 1 && $4 * $5 >= 16' "$w/jobs.csv" | wc -l)
  [ "$big" -gt 0 ] || fail "the synthetic trace has no job of 16+ GPUs"
  if ! python3 "$src/scripts/bench/big_jobs_column.py" --jobs "$w/jobs.csv" --column max_wait \
         --big 0 --out "$tmp/b0/jobs.csv" 2>"$tmp/err" ||
     ! grep -q "max_wait '0' on $big jobs of 16+ GPUs" "$tmp/err"; then
    fail "big_jobs_column.py: $(cat "$tmp/err")"
  fi
  [ "$(awk -F, 'NR > 1 && $13 == "0"' "$tmp/b0/jobs.csv" | wc -l)" -eq "$big" ] ||
    fail "big_jobs_column.py: not $big rows with max_wait 0"
  "$tessera" sim replay --nodes "$w/nodes.csv" --jobs "$tmp/b0/jobs.csv" --report "$tmp/rb0" \
    >"$tmp/out" 2>"$tmp/err" || fail "replay with max_wait: $(cat "$tmp/err")"
  grep -q "^wait_limits_exceeded,$big\$" "$tmp/rb0/summary.csv" ||
    fail "wait_limits_exceeded is not $big: $(grep wait_limits "$tmp/rb0/summary.csv")"
  # A job list that is not the generic format: a message, exit non-zero.
  printf 'name,cpu_milli\nx,1\n' >"$tmp/not-generic.csv"
  if python3 "$src/scripts/bench/big_jobs_column.py" --jobs "$tmp/not-generic.csv" \
       --column max_wait --big 0 --out "$tmp/x/jobs.csv" 2>"$tmp/err" ||
     ! grep -q "not a generic job list" "$tmp/err"; then
    fail "big_jobs_column.py on a non-generic file: $(cat "$tmp/err")"
  fi
else
  echo "python3 not found: big_jobs_column.py not tested"
fi

finish cli_write_trace
