#!/usr/bin/env bash
# Counts the code lines of the files on the README's reading path ("Read the core in this order")
# and prints each with its count, then the total. A code line is one that is neither blank nor
# only a comment (`//` or `///`). tests/docs/test_reading_path.cpp checks the README's counts with
# the same rule. Usage: bash tools/reading_path.sh        (from anywhere in the tree)
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(awk '/^<!-- reading path -->$/ {on = 1; next} /^<!-- end of reading path -->$/ {on = 0}
             on && /^\| `/ {split($0, cell, "`"); print cell[2]}' README.md)
total=0
for f in $files; do
  n=$(grep -cvE '^[[:space:]]*(//.*)?$' "$f" || true)
  printf '%5d  %s\n' "$n" "$f"
  total=$((total + n))
done
printf '%5d  total\n' "$total"
