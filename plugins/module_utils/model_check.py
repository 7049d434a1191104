# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify a Hugging Face model folder without changing it: config, Qwen's special tokens, chat
template, and a manifest of file hashes. Pure functions over a folder; standard library only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_models as vllm_models_lib

MANIFEST = "llmhost-manifest.json"
# Files of our own inside a model folder: never part of the manifest.
OWN_FILES = (MANIFEST, "llmhost-quantize.json")
# Qwen's special tokens and their ids, the same in Qwen2, Qwen2.5 and Qwen3.
QWEN_SPECIAL_TOKENS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}


def sha256_file(path, chunk=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def list_files(folder):
    """Relative paths of the model's files (hidden folders such as .cache skipped)."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fn in sorted(files):
            rel = os.path.relpath(os.path.join(root, fn), folder)
            if rel not in OWN_FILES and not fn.startswith("."):
                out.append(rel)
    return out


def manifest(folder):
    """{relative path: {"sha256", "size"}} of every model file."""
    return dict((rel, {"sha256": sha256_file(os.path.join(folder, rel)),
                       "size": os.path.getsize(os.path.join(folder, rel))}) for rel in list_files(folder))


def compare_manifest(recorded, current):
    """Sentences for every file that differs from the recorded manifest."""
    problems = []
    for rel in sorted(set(recorded) | set(current)):
        if rel not in current:
            problems.append("%s is missing (recorded in the manifest)" % rel)
        elif rel not in recorded:
            problems.append("%s is not in the manifest (added after it was recorded)" % rel)
        elif recorded[rel]["sha256"] != current[rel]["sha256"]:
            problems.append("%s does not match the manifest (sha256 %s, recorded %s)"
                            % (rel, current[rel]["sha256"][:12], recorded[rel]["sha256"][:12]))
    return problems


def _load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def special_tokens(folder):
    """Map token -> id as the tokenizer files define them (tokenizer.json, then tokenizer_config.json)."""
    found = {}
    path = os.path.join(folder, "tokenizer.json")
    if os.path.exists(path):
        tok = _load_json(path)
        for added in tok.get("added_tokens") or []:
            found[added.get("content")] = added.get("id")
        vocab = (tok.get("model") or {}).get("vocab")
        if isinstance(vocab, dict):
            for t in QWEN_SPECIAL_TOKENS:
                if t in vocab and t not in found:
                    found[t] = vocab[t]
    path = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(path):
        for sid, spec in (_load_json(path).get("added_tokens_decoder") or {}).items():
            content = spec.get("content") if isinstance(spec, dict) else None
            if content and content not in found:
                found[content] = int(sid)
    return found


def chat_template(folder):
    """The chat template text, from tokenizer_config.json or a chat_template.jinja/.json file."""
    path = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(path):
        t = _load_json(path).get("chat_template")
        if isinstance(t, list):  # named templates
            t = next((x.get("template") for x in t if x.get("name") == "default"), None)
        if t:
            return t
    if os.path.exists(os.path.join(folder, "chat_template.jinja")):
        with open(os.path.join(folder, "chat_template.jinja"), encoding="utf-8") as f:
            return f.read()
    if os.path.exists(os.path.join(folder, "chat_template.json")):
        return _load_json(os.path.join(folder, "chat_template.json")).get("chat_template")
    return None


def check(folder, architectures=None, qwen_tokens=True, vllm_models=None):
    """Read-only verification of a model folder. Returns {"config", "errors", "tokens", ...}. ``architectures``: the
    ones the user accepts; ``vllm_models``: which ones the profile's vLLM serves (vllm_models.summary)."""
    errors, info = [], {"folder": folder}
    cfg_path = os.path.join(folder, "config.json")
    try:
        config = _load_json(cfg_path)
    except (OSError, ValueError) as e:
        return {"folder": folder, "errors": ["config.json cannot be read: %s" % e], "config": None}
    info["config"] = config
    arch = vllm_models_lib.architecture(config)
    info["architecture"] = arch
    errors += vllm_models_lib.architecture_errors(arch, architectures, vllm_models)
    info["quantization_config"] = config.get("quantization_config")
    if qwen_tokens:
        tokens = special_tokens(folder)
        info["tokens"] = dict((t, tokens.get(t)) for t in QWEN_SPECIAL_TOKENS)
        for t, want in sorted(QWEN_SPECIAL_TOKENS.items(), key=lambda kv: kv[1]):
            if tokens.get(t) != want:
                errors.append("special token %s has id %s, Qwen's is %d" % (t, tokens.get(t), want))
        template = chat_template(folder)
        info["chat_template"] = bool(template)
        if not template:
            errors.append("no chat template (tokenizer_config.json chat_template or chat_template.jinja)")
        elif "<|im_start|>" not in template or "<|im_end|>" not in template:
            errors.append("the chat template does not use <|im_start|>/<|im_end|> (not Qwen's ChatML)")
    weights = [f for f in list_files(folder) if f.endswith((".safetensors", ".bin"))]
    info["weights"] = weights
    if not weights:
        errors.append("no weight files (*.safetensors)")
    info["errors"] = errors
    return info


def foreign_folders(seen, dest):
    """What the model role must neither replace nor remove: ``dest``, ``dest.old`` or ``dest.previous`` there without
    the manifest this collection writes (so someone else's). ``seen`` is path_info's answer: the folders looked at,
    dest's and dest.previous's manifests read, dest.old's looked at."""
    def there(path):
        return bool((seen.get(path) or {}).get("exists"))

    def read(path):
        return "content" in (seen.get(path) or {})

    out = []
    if there(dest) and not read(dest + "/" + MANIFEST):
        out.append(dest + " exists")
    if there(dest + ".old") and not there(dest + ".old/" + MANIFEST):
        out.append(dest + ".old exists")
    if there(dest + ".previous") and not read(dest + ".previous/" + MANIFEST):
        out.append(dest + ".previous exists")
    return out


def _source_of(seen, path):
    entry = seen.get(path) or {}
    return json.loads(entry["content"]).get("source") if "content" in entry else None


def local_source_errors(seen, local_path):
    """The folder copied is the one named, a real folder holding config.json: links are not followed."""
    if (local_path.startswith("/") and (seen.get(local_path) or {}).get("type") == "directory"
            and (seen.get(local_path + "/config.json") or {}).get("type") == "file"):
        return []
    return ["model_local_path=%s is not a real folder holding config.json (links are not followed); give the "
            "absolute path of a model folder." % local_path]


def swap_plan(seen, dest, origin, keep_previous, local_path=None, rollback=False):
    """What the model role does with ``dest`` (path_info's answer in ``seen``): ``errors`` (a local source that is not
    a model folder; folders there that are not the collection's, which it must neither replace nor remove),
    ``fetch`` (another model wanted), ``restore`` (the one wanted is the one kept from before: renames, no download),
    and ``origin``, the source the manifests record (repo@revision, or the local folder). ``rollback``: the model
    wanted is the one kept from before, whatever ``origin`` says (model_rollback)."""
    errors = local_source_errors(seen, local_path) if local_path is not None and not rollback else []
    foreign = foreign_folders(seen, dest)
    if foreign:
        errors.append("%s without %s, so not a model this collection put there; nothing replaces or removes it. Move "
                      "it away, or set model_name or model_store to another folder." % (" and ".join(foreign), MANIFEST))
    if rollback:
        origin = _source_of(seen, dest + ".previous/" + MANIFEST)
        if origin is None:
            errors.append("model_rollback=true: no model is kept from before (%s.previous with its %s); nothing to "
                          "roll back to" % (dest, MANIFEST))
            return {"errors": errors, "fetch": False, "restore": False, "origin": None}
    elsewhere = _source_of(seen, dest + "/" + MANIFEST) != origin
    back = (bool(keep_previous) or rollback) and _source_of(seen, dest + ".previous/" + MANIFEST) == origin
    return {"errors": errors, "fetch": elsewhere and not back, "restore": elsewhere and back, "origin": origin}
