#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (a build directory of their own, TESSERA_FUZZ=ON,
# AddressSanitizer + UBSan) and runs each for a bounded time on its corpus in tests/fuzz/NAME/.
# `make test` runs it through ctest (fuzz.run) for 15 s a target; a crash, a leak, a hang of more
# than 10 s on one input or more than 2 GB of memory fails it, and the input that did it is left
# in the build directory (its path is printed) to be added to the corpus once fixed.
#
#   scripts/fuzz.sh [--seconds N] [--build-dir DIR] [TARGET...]
#
# Exits 77 (ctest's "skipped") when clang or libFuzzer is not installed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=15
build=build-fuzz
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(loader_fuzz proto_fuzz kubeconfig_fuzz csv_fuzz json_fuzz)

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
  >"$probe/p.cc"
if ! command -v clang++ >/dev/null ||
   ! clang++ -fsanitize=fuzzer,address "$probe/p.cc" -o "$probe/p" 2>"$probe/err"; then
  echo "SKIPPED (fuzz): clang++ with libFuzzer is not installed (Debian: clang libclang-rt-14-dev)"
  cat "$probe/err" 2>/dev/null | head -3
  exit 77
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DTESSERA_SANITIZE=ON -DTESSERA_FUZZ=ON -DTESSERA_BENCH=OFF "${launcher[@]}" >/dev/null || exit 1
nice cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$build/fuzz-build.log" 2>&1 || {
  tail -30 "$build/fuzz-build.log"
  echo "fuzz: the build failed (log: $build/fuzz-build.log)"
  exit 1
}

status=0
for t in "${targets[@]}"; do
  bin=$(find "$build" -name "$t" -type f -perm -u+x | head -1)
  corpus="tests/fuzz/${t%_fuzz}"
  work="$build/corpus/$t"  # what libFuzzer finds goes here, not into the repository
  artifacts="$build/artifacts/$t/"
  mkdir -p "$work" "$artifacts"
  # The input files stay small: the loader and readers have their own size limits, tested
  # elsewhere; here the question is what odd bytes do.
  if ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$corpus" \
       >"$build/$t.log" 2>&1; then
    echo "fuzz: $t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" |
      grep -o '[0-9]*$') inputs in ${seconds}s, no failure"
  else
    status=1
    echo "fuzz: $t FAILED; the input is in $artifacts:"
    ls "$artifacts"
    grep -m5 -E 'ERROR|SUMMARY|Test unit written' "$build/$t.log"
  fi
done
exit $status
