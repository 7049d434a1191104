"""Write the table of model architectures one vLLM version can serve (roles/llmhost_stack/files/vllm-architectures/).

The table is vLLM's own model registry (vllm/model_executor/models/registry.py): every architecture name a
config.json may carry, grouped as the registry groups them (text generation, multimodal, ...). The model role refuses,
before anything is downloaded, a model whose architecture the stack profile's vLLM lacks, so a table must come from the
exact vLLM version a profile pins.

The registry is read as source, never imported: the dicts are literal, so a wheel is enough and no venv, torch or GPU
is needed. Regenerate from the wheel of the pinned version:
    pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \\
        --platform manylinux1_x86_64 -d /tmp/w vllm==0.33.0
    python tools/vllm_model_table.py /tmp/w/vllm-0.33.0-*.whl > roles/llmhost_stack/files/vllm-architectures/0.33.0.json
A registry.py file works as well, with its version given: tools/vllm_model_table.py registry.py --version 0.6.3
"""
import argparse
import ast
import json
import re
import sys
import zipfile

REGISTRY = "vllm/model_executor/models/registry.py"
# The registry's dicts of architectures; _VLLM_MODELS is their union, the other dicts are not architectures served.
SKIP = ("_VLLM_MODELS", "_PREVIOUSLY_SUPPORTED_MODELS", "_OOT_SUPPORTED_MODELS", "_ROCM_UNSUPPORTED_MODELS",
        "_ROCM_PARTIALLY_SUPPORTED_MODELS")
GROUP = re.compile(r"_([A-Z_]+)_MODELS\Z")


def groups(source):
    """{group: [architecture, ...]} from registry.py's literal dicts named _<GROUP>_MODELS."""
    out = {}
    for node in ast.parse(source).body:
        target, value = _assignment(node)
        if target is None or target in SKIP or not isinstance(value, ast.Dict):
            continue
        match = GROUP.match(target)
        names = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if match and names:
            out[match.group(1).lower()] = sorted(set(names))
    return out


def _assignment(node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def read(path, version=None):
    """(registry source, version) from a vLLM wheel (its version from the wheel's name) or a registry.py file."""
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as wheel:
            source = wheel.read(REGISTRY).decode("utf-8")
        version = version or path.rsplit("/", 1)[-1].split("-")[1]
    else:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    if not version:
        sys.exit("give --version for a registry.py file")
    return source, version


def table(source, version):
    found = groups(source)
    if not found.get("text_generation"):
        sys.exit("no _TEXT_GENERATION_MODELS in this registry: not a vLLM model registry the tool knows")
    return {"vllm_version": version, "source": REGISTRY, "architectures": found}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", help="a vLLM wheel, or its vllm/model_executor/models/registry.py")
    ap.add_argument("--version", help="the vLLM version (read from a wheel's name when not given)")
    args = ap.parse_args()
    json.dump(table(*read(args.path, args.version)), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
