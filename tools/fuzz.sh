#!/usr/bin/env bash
# Fuzzes the checkpoint loader (load_file) with libFuzzer for a bounded time:
#   bash tools/fuzz.sh [SECONDS]        (default 60)
# Builds fuzz/fuzz_load_file with clang++ -fsanitize=fuzzer,address,undefined in build/fuzz, then
# runs it from the committed seed corpus (fuzz/corpus, written by fuzz/make_corpus.py). Inputs that
# reach new code are kept in build/fuzz/corpus, never in the committed one; a crashing input is
# saved in build/fuzz/artifacts and the script fails. libFuzzer's last lines give the statistics:
# "Done N runs in S second(s)" and stat::number_of_executed_units.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
build=build/fuzz
if ! command -v clang++ >/dev/null; then
  echo "tools/fuzz.sh needs clang++ and libFuzzer (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi

# -O1 with assertions on (a Debug build without -O0's slowness); every library is instrumented.
flags="-O1 -g -fno-omit-frame-pointer"
flags+=" -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$flags" \
  -DMINIGRAD_BUILD_FUZZERS=ON -DMINIGRAD_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target fuzz_load_file

mkdir -p "$build/corpus" "$build/artifacts"
# -malloc_limit_mb: no single allocation may reach 64 MiB. Inputs are at most a few KiB, so only a
# header whose sizes were believed without being checked against the file could ask for that much.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/fuzz/fuzz_load_file" "$build/corpus" fuzz/corpus \
  -max_total_time="$seconds" -malloc_limit_mb=64 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/"
