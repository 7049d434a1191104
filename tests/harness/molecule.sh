#!/usr/bin/env bash
# Runs one Molecule scenario with the services and images it needs.
# usage: molecule.sh container|vm [molecule action, default: test]
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
scenario=${1:?scenario}; action=${2:-test}
"$HARNESS_DIR/host-deps.sh" "$scenario"
"$HARNESS_DIR/acng.sh" start
"$HARNESS_DIR/nvrepo.sh" start
case "$scenario" in
  container)
    "$HARNESS_DIR/dockerd.sh" start
    LLMHOST_CONTAINER_IMAGE=$("$HARNESS_DIR/images.sh" container); export LLMHOST_CONTAINER_IMAGE
    # the quantizer's wheels (current profile, Python 3.11 of Debian 12), mounted into the container
    LLMHOST_QUANTIZE_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/roles/llmhost_stack/files/locks/current-llm-compressor-py311.txt")
    export LLMHOST_QUANTIZE_WHEELS ;;
  vm)
    LLMHOST_VM_IMAGE=$("$HARNESS_DIR/images.sh" vm); export LLMHOST_VM_IMAGE
    LLMHOST_QEMU_ACCEL=$("$HARNESS_DIR/images.sh" accel); export LLMHOST_QEMU_ACCEL ;;
  *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
cd "$REPO_ROOT"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
exec molecule "$action" -s "$scenario"
