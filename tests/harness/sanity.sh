#!/usr/bin/env bash
# ansible-test sanity, locally (no container), on a copy of the tracked tree placed where
# ansible-test wants a collection: .../ansible_collections/llmhost/vllm.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
"$HARNESS_DIR/host-deps.sh" lint
dest=$REPO_ROOT/.cache/sanity/ansible_collections/llmhost/vllm
mkdir -p "$dest"
cd "$REPO_ROOT"
git ls-files -z --cached --others --exclude-standard | rsync -a --delete --from0 --files-from=- ./ "$dest/"
# rsync --files-from does not delete files gone from the list: rebuild when the list changed.
( cd "$dest" && find . -type f ! -path './tests/output/*' | sed 's|^\./||' | sort ) > "$dest/../.copied"
git ls-files --cached --others --exclude-standard | sort > "$dest/../.wanted"
if ! cmp -s "$dest/../.copied" "$dest/../.wanted"; then
  rm -rf "$dest"; mkdir -p "$dest"
  git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ "$dest/"
fi
cd "$dest"
py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
exec ansible-test sanity --local --python "$py" --color no "$@"
