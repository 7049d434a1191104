#!/usr/bin/env bash
# Stand-in of NVIDIA's CUDA apt repository on 127.0.0.1:$LLMHOST_NVREPO_PORT (see nvrepo.py).
# usage: nvrepo.sh start|stop|status|path
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
D=$LLMHOST_TEST_CACHE/nvrepo
R=$D/repo-$(recipe_hash "$HARNESS_DIR/nvrepo.py")
up() { (exec 3<>"/dev/tcp/127.0.0.1/$LLMHOST_NVREPO_PORT") 2>/dev/null; }
case "${1:-}" in
  path) python3 "$HARNESS_DIR/nvrepo.py" build "$R" ;;
  start)
    take_lock nvrepo
    if up; then log "test NVIDIA repository already answers on port $LLMHOST_NVREPO_PORT"; exit 0; fi
    mkdir -p "$D"
    python3 "$HARNESS_DIR/nvrepo.py" build "$R" >/dev/null
    setsid python3 "$HARNESS_DIR/nvrepo.py" serve "$R" "$LLMHOST_NVREPO_PORT" </dev/null >"$D/serve.log" 2>&1 9>&- &
    echo $! > "$D/pid"
    for _ in $(seq 40); do up && { log "test NVIDIA repository up on 127.0.0.1:$LLMHOST_NVREPO_PORT"; exit 0; }; sleep 0.25; done
    log "test NVIDIA repository did not start"; cat "$D/serve.log" >&2; exit 1 ;;
  stop)
    if [ -f "$D/pid" ]; then kill "$(cat "$D/pid")" 2>/dev/null || true; fi
    rm -f "$D/pid" ;;
  status) up ;;
  *) echo "usage: $0 start|stop|status|path" >&2; exit 2 ;;
esac
