#!/bin/sh
# Lists the versions a signed apt repository offers for some packages, without touching the
# host's apt configuration: apt runs on a scratch state in a temporary folder, with the
# repository's key as its only trust anchor, and the folder is removed on exit.
# usage: apt-repo-probe.sh REPO_URL KEY PACKAGE...  (KEY: a URL, a file, or - for the key's text in
# $LLMHOST_REPO_KEY, so that no key file outside the temporary folder is shared between runs)
# prints "PACKAGE VERSION" per version found; exits 3 when the repository cannot be read or verified.
set -eu
url=$1; key=$2; shift 2
t=$(mktemp -d /tmp/llmhost-apt-probe.XXXXXX)
trap 'rm -rf "$t"' EXIT INT TERM
mkdir -p "$t/parts" "$t/lists/partial" "$t/cache/archives/partial"
# apt downloads as _apt (its sandbox), so that user needs to reach the lists folder
chmod 0755 "$t"
if id _apt >/dev/null 2>&1; then chown _apt "$t/lists/partial"; fi
case "$key" in
  -) printf '%s\n' "${LLMHOST_REPO_KEY:?no key text in LLMHOST_REPO_KEY}" > "$t/key.asc" ;;
  /*) cp "$key" "$t/key.asc" ;;
  *) /usr/lib/apt/apt-helper -q download-file "$key" "$t/key.asc" >"$t/key.log" 2>&1 \
       || { echo "cannot download the repository key from $key:" >&2; cat "$t/key.log" >&2; exit 3; } ;;
esac
printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: %s\n' "$url" "$t/key.asc" > "$t/parts/probe.sources"
scratch() {
  "$@" -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$t/parts" -o "Dir::State::Lists=$t/lists" \
    -o "Dir::Cache=$t/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1
}
# apt-get update exits 0 on some failures (an unsigned or unreachable repository is only a
# warning), so any W:/E: line counts as a failure too.
if ! scratch apt-get -q update >"$t/update.log" 2>&1 || grep -q '^[WE]:' "$t/update.log"; then
  echo "cannot read or verify the repository $url:" >&2; cat "$t/update.log" >&2; exit 3
fi
for p in "$@"; do
  scratch apt-cache madison "$p" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $1); gsub(/ /, "", $2); print $1, $2 }'
done
