#!/usr/bin/env bash
# Fails when a C++ file of the repository differs from what clang-format (the .clang-format at the
# root) would make of it, listing each difference. The test suite runs it; to fix a difference,
# run `clang-format -i FILE` and commit the result on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "check_format: clang-format is not installed (apt-get install clang-format)" >&2; exit 1; }
git ls-files -z '*.cpp' '*.hpp' | xargs -0 clang-format --dry-run -Werror
echo "check_format: every C++ file follows .clang-format"
