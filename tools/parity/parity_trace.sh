#!/usr/bin/env bash
# Parity trace: one training step of the lesson's FeedForward run in minigrad and in PyTorch, every
# parameter, activation and gradient compared by name in the order the step made them. Prints one
# line per tensor and the first one that differs beyond tolerance; exits with 1 if one does.
#
# Usage (the flags go to both sides, so both run the same step):
#   bash tools/parity/parity_trace.sh [--seed 0] [--n-embd 16] [--rows 4] [--lr 0.1]
# Environment: BUILD    a configured build folder (default: build/release, from the release preset)
#              PYTHON   the Python with torch (default: /usr/bin/python3, Debian's python3-torch)
#              OUT      where the two traces are written (default: a new temporary folder)
#              ATOL, RTOL  the tolerances (default 1e-5 and 1e-4: |ours - theirs| <= ATOL + RTOL |theirs|)
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${BUILD:-}" ]; then
  BUILD=build/release
  cmake --preset release >/dev/null
fi
python=${PYTHON:-/usr/bin/python3}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

cmake --build "$BUILD" --target parity_trace >/dev/null
"$python" tools/reference/parity_reference.py --out "$out/pytorch.safetensors" "$@"
echo "traces: $out/minigrad.safetensors (minigrad), $out/pytorch.safetensors (PyTorch)"
"$BUILD/examples/parity_trace" --save "$out/minigrad.safetensors" --reference "$out/pytorch.safetensors" \
  --atol "${ATOL:-1e-5}" --rtol "${RTOL:-1e-4}" "$@"
