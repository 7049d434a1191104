# shellcheck shell=bash
# Shared settings of the test harness. Sourced by every script in tests/harness/.
# Everything lives under one cache root so images survive between runs and a
# clean clone reuses them; delete the folder (or `make clean-cache`) to start cold.
HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HARNESS_DIR/../.." && pwd)
export REPO_ROOT
export LLMHOST_TEST_CACHE=${LLMHOST_TEST_CACHE:-/var/cache/llmhost-test}
export LLMHOST_TEST_SUITE=${LLMHOST_TEST_SUITE:-bookworm}
# apt-cacher-ng on loopback: the only way guests and containers reach the archive.
export LLMHOST_ACNG_PORT=${LLMHOST_ACNG_PORT:-3142}
# stand-in of NVIDIA's CUDA apt repository (nvrepo.py), on loopback too.
export LLMHOST_NVREPO_PORT=${LLMHOST_NVREPO_PORT:-3143}
# stand-in of the Hugging Face Hub (hfhub.py), on loopback too, and the repositories it serves.
export LLMHOST_HFHUB_PORT=${LLMHOST_HFHUB_PORT:-3144}
export LLMHOST_HFHUB_ROOT=${LLMHOST_HFHUB_ROOT:-$LLMHOST_TEST_CACHE/hfhub/root}
# the container's loopback webhook receiver, where its Alertmanager sends (molecule/_shared/prepare.yml)
export LLMHOST_WEBHOOK_PORT=${LLMHOST_WEBHOOK_PORT:-3152}
export LLMHOST_DOCKER_ROOT=${LLMHOST_DOCKER_ROOT:-$LLMHOST_TEST_CACHE/docker}
export DOCKER_HOST=${DOCKER_HOST:-unix://$LLMHOST_DOCKER_ROOT/docker.sock}
export LLMHOST_SSH_KEY=${LLMHOST_SSH_KEY:-$LLMHOST_TEST_CACHE/ssh/id_ed25519}

# The Debian mirror the host's own apt sources use (deb822 first, then one-line format).
debian_mirror() {
  if [ -n "${LLMHOST_DEBIAN_MIRROR:-}" ]; then echo "$LLMHOST_DEBIAN_MIRROR"; return; fi
  local m
  m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -m1 '/debian/\?$' || true)
  [ -n "$m" ] || m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -m1 '/debian/\?$' || true)
  echo "${m:-http://deb.debian.org/debian}"
}

log() { printf '[harness %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# Hash of the files that define an image: a change to any of them rebuilds it.
recipe_hash() { cat "$@" | sha256sum | cut -c1-16; }

# Holds an exclusive lock on $LLMHOST_TEST_CACHE/locks/NAME on file descriptor 9 until the calling
# (sub)shell exits: two lanes of one run, or two checkouts, then build a cached thing once.
take_lock() {
  mkdir -p "$LLMHOST_TEST_CACHE/locks"
  exec 9>"$LLMHOST_TEST_CACHE/locks/$1.lock"
  flock 9
}

# A loopback server of the harness (the NVIDIA repository and Hugging Face Hub stand-ins), started once.
port_up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# usage: server_start NAME PORT DIR COMMAND...   (pid file and serve.log in DIR; waits up to 10 s for PORT)
# The caller holds its lock (take_lock), so two lanes start one server.
server_start() {
  local name=$1 port=$2 dir=$3; shift 3
  if port_up "$port"; then log "$name already answers on port $port"; return 0; fi
  mkdir -p "$dir"
  setsid "$@" </dev/null >"$dir/serve.log" 2>&1 9>&- &
  echo $! > "$dir/pid"
  for _ in $(seq 40); do port_up "$port" && { log "$name up on 127.0.0.1:$port"; return 0; }; sleep 0.25; done
  log "$name did not start"; cat "$dir/serve.log" >&2; return 1
}
# usage: server_stop DIR
server_stop() {
  if [ -f "$1/pid" ]; then kill "$(cat "$1/pid")" 2>/dev/null || true; fi
  rm -f "$1/pid"
}
