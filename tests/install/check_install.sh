#!/usr/bin/env bash
# Installs the build in $1 into a temporary prefix, builds tests/install/outside against it with
# find_package(minigrad CONFIG REQUIRED), and runs the result. Prints the program's output.
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
cmake -S "$here/outside" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/build" > /dev/null
"$work/build/app"
