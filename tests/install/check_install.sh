#!/usr/bin/env bash
# Installs the build in $1 into a temporary prefix, then builds two outside projects against it,
# each with the CMakeLists.txt the README shows (its first ```cmake block, taken verbatim):
# tests/install/outside/main.cpp, and a copy of scripts/train_template.cpp. Runs both; prints the
# first program's output, then the last line of the template's.
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null

readme_cmake() {  # the README's first ```cmake block
  awk '/^```cmake$/ {on = 1; next} on && /^```$/ {exit} on {print}' "$root/README.md"
}
build_outside() {  # build_outside NAME SOURCE: a project of the README's lines around SOURCE
  mkdir -p "$work/$1"
  readme_cmake > "$work/$1/CMakeLists.txt"
  cp "$2" "$work/$1/main.cpp"
  cmake -S "$work/$1" -B "$work/$1/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$work/$1/build" > /dev/null
}

build_outside app "$here/outside/main.cpp"
"$work/app/build/app"
build_outside template "$root/scripts/train_template.cpp"
(cd "$work" && "$work/template/build/app" | tail -n 1)
