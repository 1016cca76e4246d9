#!/usr/bin/env bash
# One entry point for a fresh clone: installs what is missing (Debian 12 / Ubuntu), builds, then
#   demo  runs the lesson demo (examples/feedforward_demo)
#   test  runs the whole test suite with ctest in the release build, fuzzes the checkpoint loader
#         for 60 s, then runs the suite again in the sanitizer build
#   docs  writes the HTML reference pages with Doxygen: build/release/docs/html/index.html
# Usage: bash tools/quickstart.sh demo|test|docs     (as root, or as a user who may sudo)
set -euo pipefail
cd "$(dirname "$0")/.."

verb=${1:-demo}
case "$verb" in demo|test|docs) ;; *) echo "usage: bash tools/quickstart.sh demo|test|docs" >&2; exit 2 ;; esac

# Debian packages the build needs; only the missing ones are installed. The demo needs the library's
# own dependencies; the tests add Boost.Test, Google Benchmark (bench/ is built with the suite),
# clang with its sanitizer runtime (the fuzzer), Doxygen (the reference pages must build), clang-format
# (every C++ file must follow .clang-format), and
# for distributed/ (data parallelism over MPI) Boost.MPI and Open MPI: its tests run two ranks.
packages=(g++ cmake make libboost-dev librange-v3-dev libopenblas-dev nlohmann-json3-dev zlib1g-dev libcli11-dev)
[ "$verb" != demo ] && packages+=(libboost-test-dev libbenchmark-dev clang libclang-rt-14-dev doxygen clang-format)
[ "$verb" = test ] && packages+=(libboost-mpi-dev openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
# The demo configures without the tests and benchmarks (it needs neither Boost.Test nor Google
# Benchmark); `test` turns them back on in the same build folder, and insists on distributed/ over
# MPI: a build that silently left it out would test less.
build() {  # build PRESET [TARGET]
  local parts=(-DMINIGRAD_BUILD_TESTS=ON)
  [ "$1" = release ] && parts+=(-DMINIGRAD_BUILD_BENCHMARKS=ON)   # the sanitize preset leaves them out
  [ "$verb" = test ] && parts+=(-DMINIGRAD_WITH_MPI=ON)
  [ "$verb" = demo ] && parts=(-DMINIGRAD_BUILD_TESTS=OFF -DMINIGRAD_BUILD_BENCHMARKS=OFF)
  cmake --preset "$1" "${parts[@]}" >/dev/null
  cmake --build --preset "$1" -j "$jobs" ${2:+--target "$2"}
}

if [ "$verb" = demo ]; then
  build release feedforward_demo
  ./build/release/examples/feedforward_demo
elif [ "$verb" = docs ]; then
  build release docs
  echo "Open build/release/docs/html/index.html"
else
  build release
  ./build/release/examples/feedforward_demo
  ctest --preset release -j "$jobs"
  bash tools/fuzz.sh 60   # the checkpoint loader under libFuzzer for 60 s
  build sanitize
  ctest --preset sanitize -j "$jobs"   # last, so ctest's summary closes the output
fi
