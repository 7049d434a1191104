#!/usr/bin/env bash
# Unit layer: pytest over tests/unit, on both cores (pytest-xdist; the role-input cases are
# ansible-playbook runs, which dominate). LLMHOST_UNIT_WORKERS sets the worker count.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
"$HARNESS_DIR/host-deps.sh" unit
cd "$REPO_ROOT"
exec pytest -q -n "${LLMHOST_UNIT_WORKERS:-2}" --durations=15 tests/unit "$@"
