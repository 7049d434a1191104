#!/usr/bin/env bash
# apt-cacher-ng on 127.0.0.1:$LLMHOST_ACNG_PORT, forwarding to the host's Debian mirror.
# usage: acng.sh start|stop|status
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
D=$LLMHOST_TEST_CACHE/acng
up() { (exec 3<>"/dev/tcp/127.0.0.1/$LLMHOST_ACNG_PORT") 2>/dev/null; }
case "${1:-}" in
  start)
    take_lock acng
    if up; then log "apt-cacher-ng already answers on port $LLMHOST_ACNG_PORT"; exit 0; fi
    mkdir -p "$D/cache" "$D/log"; rm -rf "$D/conf"; cp -r /etc/apt-cacher-ng "$D/conf"
    # With the package default the mirror is remapped to a name that may not resolve here.
    debian_mirror > "$D/conf/backends_debian"
    setsid /usr/sbin/apt-cacher-ng -c "$D/conf" ForeGround=1 BindAddress=127.0.0.1 Port="$LLMHOST_ACNG_PORT" \
      CacheDir="$D/cache" LogDir="$D/log" PidFile="$D/pid" </dev/null >"$D/stdout.log" 2>&1 9>&- &
    echo $! > "$D/launcher.pid"
    for _ in $(seq 40); do up && { log "apt-cacher-ng up on 127.0.0.1:$LLMHOST_ACNG_PORT"; exit 0; }; sleep 0.25; done
    log "apt-cacher-ng did not start"; cat "$D/stdout.log" >&2; exit 1 ;;
  stop)
    if [ -f "$D/launcher.pid" ]; then kill "$(cat "$D/launcher.pid")" 2>/dev/null || true; fi
    rm -f "$D/launcher.pid" ;;
  status) up ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
