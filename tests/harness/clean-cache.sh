#!/usr/bin/env bash
# `make clean-cache`: stop what runs from the cache (dockerd, apt-cacher-ng, the repository
# stand-in), unmount what dockerd left mounted under it, then remove it: the next run starts cold.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
for h in dockerd acng nvrepo hfhub; do "$HARNESS_DIR/$h.sh" stop >/dev/null 2>&1 || true; done
[ -d "$LLMHOST_TEST_CACHE" ] || exit 0
# deepest first: dockerd's netns and overlay mounts, which make rm fail with "Device or resource busy"
awk -v root="$LLMHOST_TEST_CACHE/" 'index($2, root) == 1 {print $2}' /proc/self/mounts | sort -r |
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
rm -rf "$LLMHOST_TEST_CACHE"
log "removed $LLMHOST_TEST_CACHE"
