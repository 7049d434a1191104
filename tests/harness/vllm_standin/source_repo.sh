#!/usr/bin/env bash
# Makes the STAND-IN vLLM source repository for the source-build test: the tree in source/ at VERSION,
# one commit tagged v<VERSION> (the tag the vllm_install role fetches), as a bare repository packed into
# OUT (a .tar.gz holding vllm-src.git/). The test host takes it as a git mirror of vLLM's GitHub URL.
# usage: source_repo.sh VERSION OUT
set -euo pipefail
version=${1:?version}; out=${2:?output .tar.gz}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$here/source" "$work/tree"
echo "$version" > "$work/tree/VERSION"
export GIT_AUTHOR_NAME=llmhost-test GIT_AUTHOR_EMAIL=test@llmhost.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
export GIT_COMMITTER_NAME=llmhost-test GIT_COMMITTER_EMAIL=test@llmhost.invalid GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
git -C "$work/tree" init -q
git -C "$work/tree" add -A
git -C "$work/tree" commit -q -m "STAND-IN vLLM source tree $version"
git -C "$work/tree" tag "v$version"
git clone -q --bare "$work/tree" "$work/vllm-src.git"
rm -f "$work/vllm-src.git/hooks/"*.sample
tar -C "$work" -czf "$out.tmp" vllm-src.git
mv "$out.tmp" "$out"
