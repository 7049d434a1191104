#!/usr/bin/env bash
# Downloads a source archive into the test cache once, checks its sha256, and prints its path. Test hosts
# read it through a file:// URL (the roles' offline path), as the benchmark role does the pinned vLLM
# release whose benchmarks/benchmark_serving.py it runs.
# usage: sdist.sh URL SHA256
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
url=${1:?url} sum=${2:?sha256}
D=$LLMHOST_TEST_CACHE/sdist
f=$D/$(basename "$url")
take_lock "sdist-$(basename "$url")"
if [ ! -f "$f" ] || ! echo "$sum  $f" | sha256sum -c --status; then
  mkdir -p "$D"
  log "downloading $(basename "$url") into $D (once)"
  python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$url" "$f.part"
  echo "$sum  $f.part" | sha256sum -c --status || { rm -f "$f.part"; echo "sha256 of $url is not $sum" >&2; exit 1; }
  mv "$f.part" "$f"
fi
echo "$f"
