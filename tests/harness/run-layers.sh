#!/usr/bin/env bash
# `make test`: every layer in order, each timed; a per-layer table at the end.
# A layer that cannot run fails the whole run, unless its name is in LLMHOST_ALLOW_SKIP
# (space-separated; CI never sets it). LLMHOST_LAYERS picks a subset (default: all).
set -uo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
cd "$REPO_ROOT" || exit 1
LAYERS=${LLMHOST_LAYERS:-lint sanity unit molecule-container molecule-vm}
declare -A CMD=(
  [lint]="make -s lint"
  [sanity]="make -s sanity"
  [unit]="make -s unit"
  [molecule-container]="make -s molecule-container"
  [molecule-vm]="make -s molecule-vm"
)
# Helpers already running (another run, a developer's shell) are left running at the end.
acng_was_up=0; dockerd_was_up=0; nvrepo_was_up=0
"$HARNESS_DIR/acng.sh" status && acng_was_up=1
"$HARNESS_DIR/nvrepo.sh" status && nvrepo_was_up=1
"$HARNESS_DIR/dockerd.sh" status && dockerd_was_up=1
declare -a ROWS=()
passed=0; failed=0; skipped=0; T0=$SECONDS
for layer in $LAYERS; do
  [ -n "${CMD[$layer]:-}" ] || { echo "unknown layer $layer" >&2; exit 2; }
  echo; echo "=============== layer: $layer ==============="
  t=$SECONDS
  ${CMD[$layer]}; rc=$?
  dt=$((SECONDS - t))
  if [ $rc -eq 0 ]; then status=PASS; passed=$((passed + 1))
  elif [ $rc -eq 77 ] && [[ " ${LLMHOST_ALLOW_SKIP:-} " == *" $layer "* ]]; then status=SKIP; skipped=$((skipped + 1))
  else status="FAIL (rc $rc)"; failed=$((failed + 1)); fi
  ROWS+=("$(printf '%-20s %-12s %6ss' "$layer" "$status" "$dt")")
done
echo; echo "=============== make test: timing per layer ==============="
printf '%-20s %-12s %7s\n' layer result time
for r in "${ROWS[@]}"; do echo "$r"; done
printf '%-20s %-12s %6ss\n' total "" $((SECONDS - T0))
# stop the helpers this run started (the caches stay)
[ $dockerd_was_up = 1 ] || "$HARNESS_DIR/dockerd.sh" stop >/dev/null 2>&1 || true
[ $acng_was_up = 1 ] || "$HARNESS_DIR/acng.sh" stop >/dev/null 2>&1 || true
[ $nvrepo_was_up = 1 ] || "$HARNESS_DIR/nvrepo.sh" stop >/dev/null 2>&1 || true
echo
if [ $skipped -gt 0 ]; then echo "layers: $passed passed, $failed failed, $skipped skipped"; else echo "layers: $passed passed, $failed failed"; fi
[ $failed -eq 0 ]
