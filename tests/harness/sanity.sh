#!/usr/bin/env bash
# ansible-test sanity, locally (no container), on a copy of the tracked tree placed where
# ansible-test wants a collection: .../ansible_collections/llmhost/vllm.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
"$HARNESS_DIR/host-deps.sh" lint
# Outside the checkout: inside it, ansible-test would see a git work tree that ignores the copy.
# One copy per checkout, so two checkouts' runs do not trample each other's copy.
dest=$LLMHOST_TEST_CACHE/sanity/$(printf %s "$REPO_ROOT" | sha256sum | cut -c1-12)/ansible_collections/llmhost/vllm
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
# ansible-test bootstraps pip into its venvs from a host we cannot reach: give it the stand-in,
# under the name it looks for (the pip version ansible-test pins).
pipv=$(python3 -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
class P: version = "3"
print(g(P())["pip"])')
mkdir -p ~/.ansible/test/cache
cp "$HARNESS_DIR/get_pip_standin.py" ~/.ansible/test/cache/"get_pip_${pipv//./_}.py"
cd "$dest"
py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
exec ansible-test sanity --local --python "$py" --color no "$@"
