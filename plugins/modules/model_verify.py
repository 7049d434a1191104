#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: model_verify
short_description: Verify a model folder (config, Qwen's special tokens, chat template, file hashes) and keep its manifest
version_added: 0.1.0
description:
  - Reads C(config.json) and checks the architecture; checks that Qwen's special tokens
    (C(<|endoftext|>) 151643, C(<|im_start|>) 151644, C(<|im_end|>) 151645) and a ChatML chat template are present.
  - Computes the sha256 of every model file. With I(state=present) and no manifest yet, writes
    C(llmhost-manifest.json) into the folder (atomically); with a manifest, every file must match it.
  - Never changes a model file; the tokenizer is read, never rewritten.
options:
  path:
    description: The model folder.
    type: path
    required: true
  architectures:
    description: Architectures accepted (C(config.json) C(architectures[0])); empty accepts any.
    type: list
    elements: str
    default: []
  vllm_models:
    description:
      - Which architectures each pinned vLLM serves, and the profile's version (the fact C(llmhost_stack_vllm_models)
        that role C(llmhost_stack) publishes). The architecture must be one the profile's vLLM has a model class for;
        the message names that version and the profiles whose vLLM has it.
      - Empty, or a version without a table, checks I(architectures) alone.
    type: dict
    default: {}
  qwen_tokens:
    description: Check Qwen's special tokens and chat template.
    type: bool
    default: true
  state:
    description: C(present) records the manifest when there is none; C(checked) only compares.
    type: str
    choices: [present, checked]
    default: present
  source:
    description: Where the files came from (repo and revision, or a folder), recorded in the manifest.
    type: str
    default: ""
attributes:
  check_mode:
    support: full
    description: Verifies; does not write the manifest.
  diff_mode:
    support: none
    description: The manifest is reported in the result instead.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Verify the model and record its manifest
  llmhost.vllm.model_verify:
    path: /srv/llmhost/models/Qwen2.5-3B-Instruct
    architectures: [Qwen2ForCausalLM]
    source: Qwen/Qwen2.5-3B-Instruct@aa8e72537993ba99e69dfaafa59ed015b17504d1
"""

RETURN = r"""
architecture:
  description: C(architectures[0]) of C(config.json).
  returned: always
  type: str
config:
  description: The model's C(config.json).
  returned: always
  type: dict
quantization_config:
  description: The checkpoint's C(quantization_config), or null.
  returned: always
  type: dict
tokens:
  description: Qwen's special tokens and the ids the tokenizer gives them.
  returned: when qwen_tokens
  type: dict
files:
  description: Number of files in the manifest.
  returned: always
  type: int
size_bytes:
  description: Total size of the model files.
  returned: always
  type: int
"""

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import model_check


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            architectures=dict(type="list", elements="str", default=[]),
            vllm_models=dict(type="dict", default={}),
            qwen_tokens=dict(type="bool", default=True),
            state=dict(type="str", choices=["present", "checked"], default="present"),
            source=dict(type="str", default=""),
        ),
        supports_check_mode=True,
    )
    p = module.params
    folder = p["path"]
    if not os.path.isdir(folder):
        module.fail_json(msg="model folder %s does not exist" % folder)
    info = model_check.check(folder, p["architectures"], p["qwen_tokens"], p["vllm_models"])
    if info["errors"]:
        module.fail_json(msg="model %s: %s" % (folder, "; ".join(info["errors"])), **_result(info, {}))
    current = model_check.manifest(folder)
    path = os.path.join(folder, model_check.MANIFEST)
    changed = False
    if os.path.exists(path):
        try:
            with open(path) as f:
                recorded = json.load(f)["files"]
        except (OSError, ValueError, KeyError) as e:
            module.fail_json(msg="manifest %s cannot be read: %s" % (path, e))
        problems = model_check.compare_manifest(recorded, current)
        if problems:
            module.fail_json(msg="model %s no longer matches its manifest: %s. Fetch it again (delete the folder) if "
                                 "the change is wanted." % (folder, "; ".join(problems)), **_result(info, current))
    elif p["state"] == "present":
        changed = True
        if not module.check_mode:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".manifest-")
            with os.fdopen(fd, "w") as f:
                json.dump({"source": p["source"], "files": current}, f, indent=1, sort_keys=True)
            module.atomic_move(tmp, path)
            module.set_mode_if_different(path, "0644", False)
    module.exit_json(changed=changed, **_result(info, current))


def _result(info, current):
    return dict(architecture=info.get("architecture"), config=info.get("config"),
                quantization_config=info.get("quantization_config"), tokens=info.get("tokens"),
                files=len(current), size_bytes=sum(v["size"] for v in current.values()))


if __name__ == "__main__":
    main()
