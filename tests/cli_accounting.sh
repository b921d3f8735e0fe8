#!/bin/sh
# The accounting store end to end (docs/accounting.md): `tessera sim` and `tessera sim replay`
# write tests/scenarios/cost.yaml's runs with --accounting-db, `tessera report cost` reads them
# back; docs/cost.md's figures ($45.64 for team-a, $12.78 for team-b) must come out, twice (both
# writers append to one file). A file that is not SQLite is an error naming it.
#   cli_accounting.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

db=$tmp/acct.db
"$tessera" sim "$src/tests/scenarios/cost.yaml" --accounting-db "$db" >"$tmp/sim.out" 2>"$tmp/sim.err" ||
  fail "tessera sim --accounting-db: $(cat "$tmp/sim.err")"
"$tessera" sim replay --manifests "$src/tests/scenarios/cost.yaml" --accounting-db "$db" \
  >"$tmp/replay.out" 2>"$tmp/replay.err" || fail "tessera sim replay --accounting-db: $(cat "$tmp/replay.err")"
grep -q "4 run records written to $db" "$tmp/replay.err" || fail "replay did not say what it wrote"

"$tessera" report cost --db "$db" --from 1970-01-01 --to 1970-01-02 --by cluster-queue \
  --output csv >"$tmp/report.csv" 2>"$tmp/report.err" || fail "report cost: $(cat "$tmp/report.err")"
cat >"$tmp/want.csv" <<'CSV'
group,jobs,runs,gpu_hours,dollars,utilization,top_jobs
team-a,2,6,28,91.28,,a/low=65.2;a/high=26.08
team-b,1,2,12,25.56,,b/train=25.56
total,3,8,40,116.84,,a/low=65.2;a/high=26.08;b/train=25.56
CSV
diff "$tmp/want.csv" "$tmp/report.csv" || fail "report cost --by cluster-queue --output csv"

# The same scenario again (issue 31): its records replace those of the first run instead of
# doubling every figure of the report; the run says so.
"$tessera" sim "$src/tests/scenarios/cost.yaml" --accounting-db "$db" >/dev/null 2>"$tmp/sim2.err" ||
  fail "tessera sim --accounting-db, again: $(cat "$tmp/sim2.err")"
grep -q "replacing the [0-9]* of an earlier run of the same scenario and flags" "$tmp/sim2.err" ||
  fail "the re-run did not say it replaced the earlier run: $(cat "$tmp/sim2.err")"
"$tessera" sim replay --manifests "$src/tests/scenarios/cost.yaml" --accounting-db "$db" \
  >/dev/null 2>"$tmp/replay2.err" || fail "tessera sim replay, again: $(cat "$tmp/replay2.err")"
grep -q "replacing the 4 of an earlier run" "$tmp/replay2.err" ||
  fail "the replay's re-run did not say it replaced: $(cat "$tmp/replay2.err")"
"$tessera" report cost --db "$db" --from 1970-01-01 --to 1970-01-02 --by cluster-queue \
  --output csv >"$tmp/report2.csv" 2>"$tmp/report.err" || fail "report cost: $(cat "$tmp/report.err")"
diff "$tmp/want.csv" "$tmp/report2.csv" || fail "report cost after re-runs: figures changed"
# Another --until is another run: added, not replaced.
"$tessera" sim "$src/tests/scenarios/cost.yaml" --accounting-db "$tmp/until.db" >/dev/null 2>&1
"$tessera" sim "$src/tests/scenarios/cost.yaml" --until 100000 --accounting-db "$tmp/until.db" \
  >/dev/null 2>"$tmp/until.err"
grep -q "replacing" "$tmp/until.err" && fail "a run with other flags replaced the first"

# 03:00 excluded: b/train (ends at 10800 s) and a/low's second run are out.
"$tessera" report cost --db "$db" --from 1970-01-01 --to 1970-01-01T03:00:00Z --by label:team \
  --output json >"$tmp/report.json" 2>"$tmp/report.err" || fail "report cost json"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
groups = {g["group"]: g for g in doc["groups"]}
assert list(groups) == ["alpha"], groups
assert abs(groups["alpha"]["dollars"] - 2 * (6.52 + 13.04)) < 1e-6, groups["alpha"]
assert doc["total"]["utilization"] is None
' "$tmp/report.json" || fail "report cost --by label:team --output json"

"$tessera" report cost --db "$db" >"$tmp/table.out" 2>&1 || fail "report cost (table)"
grep -q "runs that ended from the first to the last" "$tmp/table.out" &&
  grep -q "a/low .* 65.20  4 runs" "$tmp/table.out" || fail "report cost (table): $(cat "$tmp/table.out")"

echo "not a database" >"$tmp/notes.txt"
if "$tessera" sim "$src/tests/scenarios/cost.yaml" --accounting-db "$tmp/notes.txt" >/dev/null 2>"$tmp/err"; then
  fail "sim wrote into a text file"
fi
grep -q "accounting store $tmp/notes.txt" "$tmp/err" || fail "no file name in: $(cat "$tmp/err")"
if "$tessera" report cost --db "$tmp/missing.db" >/dev/null 2>"$tmp/err"; then
  fail "report cost on a missing file succeeded"
fi
grep -q "accounting store $tmp/missing.db" "$tmp/err" || fail "no file name in: $(cat "$tmp/err")"
[ -e "$tmp/missing.db" ] && fail "report cost created $tmp/missing.db"

# A store that is readable but in a directory the reader cannot write, its writer gone with its
# write-ahead log left beside it (issue 31: "unable to open database file", "attempt to write a
# readonly database"). The report reads it, and writes nothing there. Root writes anywhere, so
# under root the reader is user nobody (setpriv), where that user can run the binary.
ro=$tmp/ro
mkdir "$ro"
cp "$db" "$ro/acct.db"
python3 - "$ro/acct.db" <<'PY' || fail "could not leave a write-ahead log"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("CREATE TABLE scratch (x)")  # a change the report does not see
c.commit()
os._exit(0)  # as a writer that dies: the log stays
PY
rm -f "$ro/acct.db-shm"
[ -s "$ro/acct.db-wal" ] || fail "no write-ahead log left"
chmod a+rx "$tmp"
chmod 555 "$ro"
reader=""
if [ "$(id -u)" -eq 0 ]; then
  if setpriv --reuid=65534 --regid=65534 --clear-groups "$tessera" --version >/dev/null 2>&1; then
    reader="setpriv --reuid=65534 --regid=65534 --clear-groups"
  else
    echo "SKIP: read-only store: root, and user nobody cannot run $tessera"
    reader=skip
  fi
fi
if [ "$reader" != skip ]; then
  $reader "$tessera" report cost --db "$ro/acct.db" --from 1970-01-01 --to 1970-01-02 \
    --by cluster-queue --output csv >"$tmp/ro.csv" 2>"$tmp/ro.err" ||
    fail "report cost on a store in a read-only directory: $(cat "$tmp/ro.err")"
  diff "$tmp/want.csv" "$tmp/ro.csv" || fail "report cost on the read-only store: other figures"
  [ -e "$ro/acct.db-shm" ] && fail "report cost wrote beside a store it only reads"
fi
chmod 755 "$ro"

finish cli_accounting
