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
    # A server left by a run of another nvrepo.py serves another repository, signed with another key
    # (the folder's name is the recipe's hash): replace it, or apt would read NO_PUBKEY.
    if port_up "$LLMHOST_NVREPO_PORT" && [ "$(cat "$D/serving" 2>/dev/null)" != "$R" ]; then
      server_stop "$D"
      for _ in $(seq 40); do port_up "$LLMHOST_NVREPO_PORT" || break; sleep 0.25; done
    fi
    if ! port_up "$LLMHOST_NVREPO_PORT"; then mkdir -p "$D"; python3 "$HARNESS_DIR/nvrepo.py" build "$R" >/dev/null; fi
    server_start "test NVIDIA repository" "$LLMHOST_NVREPO_PORT" "$D" python3 "$HARNESS_DIR/nvrepo.py" serve "$R" "$LLMHOST_NVREPO_PORT"
    echo "$R" > "$D/serving" ;;
  stop) server_stop "$D" ;;
  status) port_up "$LLMHOST_NVREPO_PORT" ;;
  *) echo "usage: $0 start|stop|status|path" >&2; exit 2 ;;
esac
