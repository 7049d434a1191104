#!/usr/bin/env bash
# Assembles a STAND-IN CUDA toolkit folder from NVIDIA's PyPI wheels (the nvidia-* lines of LOCK,
# downloaded once by wheels.sh), once, and prints it: bin/nvcc, bin/cuobjdump, include/, nvvm/.
# The source-build test compiles its stand-in vLLM extensions with that real nvcc and reads them with
# that real cuobjdump, as vllm_install_cuda_home. No GPU is needed for either.
# usage: cuda_home.sh LOCK_FILE
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
lock=${1:?lock file}
wheels=$("$HARNESS_DIR/wheels.sh" "$lock")
D=$wheels.cuda
take_lock "cuda-home-$(basename "$lock" .txt)"
if [ ! -f "$D/.done" ]; then
  rm -rf "$D"
  log "assembling a CUDA toolkit from the nvidia-* wheels of $(basename "$lock") into $D (once)"
  # shellcheck disable=SC2046  # one argument per package name
  python3 -m pip install -q --no-index --no-deps --find-links "$wheels" --target "$D" \
    $(grep -o '^nvidia-[a-z0-9-]*==[0-9.]*' "$lock") >&2
  touch "$D/.done"
fi
test -x "$D/nvidia/cu13/bin/nvcc" && test -x "$D/nvidia/cu13/bin/cuobjdump"
echo "$D/nvidia/cu13"
