#!/bin/sh
# sim replay settles like sim (issue 31): a preemption the engine held back in its instant is
# retried a second later when nothing else comes. The 24+24 one-GPU jobs of two fair-sharing
# queues weighted 2:1 (tests/scenarios/fair-sharing-settles.yaml), all at t=0, end 16/8 after 4
# preemptions; without the retry the replay stopped at 12/12 with none.
tessera=$1
src=$2
out=$("$tessera" sim replay --manifests "$src/tests/scenarios/fair-sharing-settles.yaml" -q 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: sim replay exited $rc: $out"
  exit 1
fi
if ! echo "$out" | grep -Eq "preemptions: +4 "; then
  echo "FAIL: expected 4 preemptions (16/8), got:"
  echo "$out" | grep -E "preemptions|jobs:"
  exit 1
fi
echo "cli_replay_settles: ok"
