#!/usr/bin/env bash
# Unit layer: pytest over tests/unit (pure Python: no process, server or playbook started) and
# tests/integration (what starts ansible-playbook, a local HTTP server or a process), on both cores
# (pytest-xdist, one module per worker at a time, so that the two batched ansible-playbook runs of the
# input cases, test_role_inputs.py and test_site_first_play.py, each run once). LLMHOST_UNIT_WORKERS
# sets the worker count.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
"$HARNESS_DIR/host-deps.sh" unit
cd "$REPO_ROOT"
exec pytest -q -n "${LLMHOST_UNIT_WORKERS:-2}" --dist loadscope --durations=15 tests/unit tests/integration "$@"
