#!/usr/bin/env bash
# Stand-in of NVIDIA's CUDA apt repository on 127.0.0.1:$LLMHOST_NVREPO_PORT (see nvrepo.py).
# usage: nvrepo.sh start|stop|status|path
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
D=$LLMHOST_TEST_CACHE/nvrepo
R=$D/repo-$(recipe_hash "$HARNESS_DIR/nvrepo.py")
case "${1:-}" in
  path) python3 "$HARNESS_DIR/nvrepo.py" build "$R" ;;
  start)
    take_lock nvrepo
    if ! port_up "$LLMHOST_NVREPO_PORT"; then mkdir -p "$D"; python3 "$HARNESS_DIR/nvrepo.py" build "$R" >/dev/null; fi
    server_start "test NVIDIA repository" "$LLMHOST_NVREPO_PORT" "$D" python3 "$HARNESS_DIR/nvrepo.py" serve "$R" "$LLMHOST_NVREPO_PORT" ;;
  stop) server_stop "$D" ;;
  status) port_up "$LLMHOST_NVREPO_PORT" ;;
  *) echo "usage: $0 start|stop|status|path" >&2; exit 2 ;;
esac
