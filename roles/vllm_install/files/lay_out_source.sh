#!/bin/sh
# Lays out one offline source of the vLLM source build (vllm_install_*_src) at DEST: a folder is copied,
# a tar archive unpacked with its one top folder stripped. With TAG, the tree becomes a git repository of
# one commit tagged TAG, which the build's CMake clones through git's insteadOf. Written under DEST.partial
# and renamed, so an interrupted run leaves no half tree; DEST/.llmhost-source says where it came from.
# usage: lay_out_source.sh SRC DEST [TAG]
set -eu
src=$1 dest=$2 tag=${3:-}
work="$dest.partial"
[ -e "$src" ] || { echo "$src is not on the host (a folder or a tar archive there)" >&2; exit 1; }
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
if [ -d "$src" ]; then
  cp -a "$src/." "$work/"
else
  tar -xf "$src" -C "$work" --strip-components=1 --no-same-owner
fi
if [ -n "$tag" ]; then
  rm -rf "$work/.git"
  export GIT_AUTHOR_NAME=llmhost GIT_AUTHOR_EMAIL=llmhost@localhost GIT_COMMITTER_NAME=llmhost GIT_COMMITTER_EMAIL=llmhost@localhost
  git -C "$work" init -q
  git -C "$work" add -A
  git -C "$work" commit -q -m "offline source from $src"
  git -C "$work" tag "$tag"
fi
printf '%s\n' "$src" > "$work/.llmhost-source"
rm -rf "$dest"
mv "$work" "$dest"
