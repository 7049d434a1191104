#!/usr/bin/env bash
# Stand-in of the Hugging Face Hub on 127.0.0.1:$LLMHOST_HFHUB_PORT (see hfhub.py), serving the
# repositories under $LLMHOST_HFHUB_ROOT (the container scenario's prepare fills it).
# usage: hfhub.sh start|stop|status
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
D=$(dirname "$LLMHOST_HFHUB_ROOT")
case "${1:-}" in
  start)
    take_lock hfhub
    mkdir -p "$LLMHOST_HFHUB_ROOT"
    server_start "test Hugging Face Hub" "$LLMHOST_HFHUB_PORT" "$D" \
      python3 "$HARNESS_DIR/hfhub.py" serve "$LLMHOST_HFHUB_ROOT" "$LLMHOST_HFHUB_PORT" ;;
  stop) server_stop "$D" ;;
  status) port_up "$LLMHOST_HFHUB_PORT" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
