#!/usr/bin/env bash
# A private dockerd for the container tier: no bridge, no iptables, state under the cache.
# usage: dockerd.sh start|stop|status
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
D=$LLMHOST_DOCKER_ROOT
up() { docker version >/dev/null 2>&1; }
case "${1:-}" in
  start)
    take_lock dockerd
    if up; then log "dockerd already answers at $DOCKER_HOST"; exit 0; fi
    mkdir -p "$D/data" "$D/exec"
    # A dockerd killed with its session leaves its pid file and sockets behind; both stop a new one.
    if [ -f "$D/dockerd.pid" ] && ! kill -0 "$(cat "$D/dockerd.pid")" 2>/dev/null; then
      log "removing stale dockerd pid file and sockets"
      rm -f "$D/dockerd.pid" "$D/docker.sock" "$D/exec/containerd/containerd.pid"
      find "$D/exec" -maxdepth 2 -name '*.sock' -delete 2>/dev/null || true
    fi
    setsid dockerd --data-root "$D/data" --exec-root "$D/exec" --pidfile "$D/dockerd.pid" \
      -H "$DOCKER_HOST" --bridge=none --iptables=false --ip6tables=false \
      --default-ulimit nofile=20000:20000 --default-ulimit nproc=32768:32768 \
      </dev/null >"$D/dockerd.log" 2>&1 9>&- &
    pid=$!
    for i in $(seq 60); do
      up && { log "dockerd up after ${i}s"; exit 0; }
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    log "dockerd did not come up"; tail -20 "$D/dockerd.log" >&2; exit 1 ;;
  stop)
    if [ -f "$D/dockerd.pid" ]; then
      p=$(cat "$D/dockerd.pid"); kill "$p" 2>/dev/null || true
      for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    fi ;;
  status) up ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
