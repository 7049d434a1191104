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
