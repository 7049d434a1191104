#!/usr/bin/env bash
# Lint layer: ansible-lint (production profile, strict) and shellcheck of the harness.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
"$HARNESS_DIR/host-deps.sh" lint
cd "$REPO_ROOT"
shellcheck tests/harness/*.sh tests/build/*.sh roles/*/files/*.sh .ci/run
ansible-lint --strict
# one line per change, in the sections antsibull-changelog knows (changelogs/config.yaml)
antsibull-changelog lint
