#!/usr/bin/env bash
# Downloads every wheel of a requirements lock into a cache folder on this machine, once, and
# prints the folder. Test hosts install from it with --no-index --find-links (the roles' offline
# path), so they need neither PyPI nor this machine's TLS trust settings.
# usage: wheels.sh LOCK_FILE
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
lock=${1:?lock file}
D=$LLMHOST_TEST_CACHE/wheels/$(basename "$lock" .txt)-$(recipe_hash "$lock")
take_lock "wheels-$(basename "$lock" .txt)"
if [ ! -f "$D/.done" ]; then
  rm -rf "$D"; mkdir -p "$D"
  log "downloading the wheels of $(basename "$lock") into $D (once; several GB for torch)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$D" -r "$lock" >&2
  touch "$D/.done"
fi
echo "$D"
