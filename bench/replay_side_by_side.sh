#!/bin/sh
# Two tessera binaries side by side on one `sim replay` run, back to back (the machine is
# shared: a pair run together sees the same load): user + system CPU seconds and peak RSS of
# each (GNU time -v), and whether every output is the same byte for byte: stdout, and with
# --report DIR / --accounting-db FILE among the arguments, every file of the report and the
# accounting rows (sqlite3 .dump). The stderr line of timings is not compared.
#   bench/replay_side_by_side.sh OLD_BINARY NEW_BINARY WORKDIR [sim replay arguments...]
# Use REPORT and DB in the arguments for the paths: both binaries write to WORKDIR/run (so
# that what they print is the same), moved to WORKDIR/old and WORKDIR/new after each run.
#   bench/replay_side_by_side.sh ./old-tessera build-rel/src/tessera /tmp/cmp \
#     --synthetic-jobs 100000 --synthetic-nodes 1000 --seed 1 --report REPORT --accounting-db DB
set -u
old=$1 new=$2 work=$3
shift 3
mkdir -p "$work"
same=yes
for which in old new; do
  bin=$old
  [ "$which" = new ] && bin=$new
  rm -rf "$work/$which" "$work/run" && mkdir -p "$work/run"
  args=""
  for a in "$@"; do
    case $a in
      REPORT) a=$work/run/report ;;
      DB) a=$work/run/runs.db ;;
    esac
    args="$args $a"
  done
  # shellcheck disable=SC2086
  /usr/bin/time -v "$bin" sim replay $args >"$work/run/stdout" 2>"$work/run/stderr"
  mv "$work/run" "$work/$which"
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/$which/stderr")
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$work/$which/stderr")
  wall=$(awk -F': ' '/Elapsed/ {print $2}' "$work/$which/stderr")
  echo "$which: ${cpu} s CPU (user+sys), ${wall} wall, peak RSS ${rss} MiB"
  if [ -f "$work/$which/runs.db" ]; then
    sqlite3 "$work/$which/runs.db" .dump >"$work/$which/runs.sql"
    rm "$work/$which/runs.db"
  fi
done
cmp -s "$work/old/stdout" "$work/new/stdout" || { echo "stdout differs"; same=no; }
for f in $(cd "$work/old" && find . -type f ! -name stdout ! -name stderr | sort); do
  cmp -s "$work/old/$f" "$work/new/$f" || { echo "$f differs"; same=no; }
done
n=$(cd "$work/old" && find . -type f ! -name stderr | wc -l)
echo "outputs compared: $n files; byte-identical: $same"
[ "$same" = yes ]
