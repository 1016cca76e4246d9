#!/usr/bin/env bash
# Whole-process cost of the lesson demo: wall time and peak resident memory, minigrad vs PyTorch.
#
# Runs each program 5 times (RUNS=n to change) under GNU time (`/usr/bin/time -v`, Debian's
# package `time`) and prints the median wall time and the median peak RSS of each, and their
# ratio. The programs: the C++ examples/feedforward_demo of a build folder (default
# build/release) and the same lesson in Python, tools/reference/feedforward_lesson.py, run by
# Debian's /usr/bin/python3. Wall time comes from bash's microsecond clock around the
# `/usr/bin/time -v` call (GNU time itself shows hundredths of a second, too coarse for the C++
# demo); the line for /bin/true shows what starting /usr/bin/time adds to every figure.
#
# Usage, from anywhere:  tools/bench/whole_process.sh [BUILD_DIR]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-$repo/build/release}"
runs="${RUNS:-5}"

demo="$build_dir/examples/feedforward_demo"
if [[ ! -x "$demo" ]]; then
  demo="$(find "$build_dir" -type f -name feedforward_demo -perm -u+x 2>/dev/null | head -n 1)"
fi
if [[ -z "$demo" || ! -x "$demo" ]]; then
  echo "whole_process: no feedforward_demo in $build_dir; build it first: cmake --build $build_dir --target feedforward_demo" >&2
  exit 1
fi

# The median of the numbers given as arguments.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Runs the command `runs` times; sets wall_ms and rss_kb to the medians.
measure() {
  local walls=() rsses=() report start end
  report="$(mktemp)"
  for ((i = 0; i < runs; i++)); do
    start=$EPOCHREALTIME
    /usr/bin/time -v -o "$report" "$@" >/dev/null
    end=$EPOCHREALTIME
    walls+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) * 1000 }')")
    rsses+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$report")")
  done
  rm -f "$report"
  wall_ms="$(median "${walls[@]}")"
  rss_kb="$(median "${rsses[@]}")"
}

echo "machine: $(lscpu | awk -F': *' '/^Model name/ { print $2 }'), $(nproc) cores; date: $(date '+%Y-%m-%d %H:%M %Z')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); median of $runs runs each"
echo

cd "$repo"  # the Python lesson imports nothing relative, but run both from the same place
measure /bin/true
true_ms=$wall_ms true_kb=$rss_kb
measure "$demo"
ours_ms=$wall_ms ours_kb=$rss_kb
measure /usr/bin/python3 tools/reference/feedforward_lesson.py
theirs_ms=$wall_ms theirs_kb=$rss_kb

printf '%-52s %12s %14s\n' "program" "wall (ms)" "peak RSS (MiB)"
row() { printf '%-52s %12.1f %14.1f\n' "$1" "$2" "$(awk -v k="$3" 'BEGIN { print k / 1024 }')"; }
row "/bin/true (the cost of /usr/bin/time itself)" "$true_ms" "$true_kb"
row "minigrad: examples/feedforward_demo" "$ours_ms" "$ours_kb"
row "PyTorch: tools/reference/feedforward_lesson.py" "$theirs_ms" "$theirs_kb"
printf '%-52s %12.4f %14.4f\n' "ratio minigrad / PyTorch (target: at most 0.05)" \
  "$(awk -v a="$ours_ms" -v b="$theirs_ms" 'BEGIN { print a / b }')" \
  "$(awk -v a="$ours_kb" -v b="$theirs_kb" 'BEGIN { print a / b }')"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
