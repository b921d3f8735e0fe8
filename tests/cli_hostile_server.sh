#!/bin/sh
# `tessera get` and `tessera explain` against a server that lies (issue 31, class 3): a 4 GiB
# Content-Length, JSON nested 300,000 deep, a byte every 2 seconds. Each must end with a message
# and exit status 1 or 2, within 30 s, under 1.5 GB of memory, never by a signal (they ended in
# bad_alloc, a crash of `-o json`, or a wait as long as the server cared to drip).
#   cli_hostile_server.sh TESSERA_BINARY SOURCE_DIR
set -u
. "$2/tests/cli_lib.sh"

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1500"
if sh -c 'ulimit -v 1500000 && "$1" --version' sh "$tessera" >/dev/null 2>&1; then
  vlimit=1500000
else
  vlimit=unlimited  # an ASan build reserves terabytes: its hard_rss_limit_mb caps it instead
fi

# hostile MODE "message part" tessera-args...: a server in MODE, the command against it.
hostile() {
  mode=$1
  want=$2
  shift 2
  rm -f "$tmp/port"
  python3 "$src/tests/hostile_server.py" "$mode" "$tmp/port" 40 &
  server=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  url="http://127.0.0.1:$(cat "$tmp/port")"
  (ulimit -v "$vlimit"; exec timeout 30 "$tessera" "$@" --server "$url") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  if [ "$rc" -lt 1 ] || [ "$rc" -gt 2 ] || ! grep -q -- "$want" "$tmp/err"; then
    echo "FAIL (exit $rc, want 1 or 2 and \"$want\"): tessera $* against a server in mode $mode"
    tail -3 "$tmp/err"
    fails=$((fails + 1))
  fi
}

hostile length "the answer is longer than 67108864 bytes" get queues
hostile length "the answer is longer than 67108864 bytes" explain team/job
hostile deep "JSON nested deeper than 512 levels" get queues -o json
hostile deep "JSON nested deeper than 512 levels" explain team/job
hostile drip "no whole answer within 10s" get queues

finish cli_hostile_server
