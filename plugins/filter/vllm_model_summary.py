# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: which model architectures each pinned vLLM serves (vLLM's own model registries)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: vllm_model_summary
short_description: Summarize the model registries of the pinned vLLM versions for the model role's check
version_added: 1.0.0
description:
  - Reads the tables C(roles/llmhost_stack/files/vllm-architectures/<version>.json) (vLLM's own model registries,
    written by C(tools/vllm_model_table.py)) and returns, per vLLM version, the architectures it generates text with,
    with the stack profile in use, its vLLM version and every profile's version.
  - The filter C(model_architecture_errors) judges a model's config.json against that summary; logic in
    C(module_utils/vllm_models.py).
options:
  _input:
    description: The tables' texts (JSON).
    type: list
    elements: str
    required: true
  profile_versions:
    description: Every profile's vLLM version, by profile name.
    type: dict
    required: true
  profile:
    description: The stack profile in use.
    type: str
    required: true
  version:
    description: Its vLLM version (after C(llmhost_stack_overrides)).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Summarize the tables
  ansible.builtin.set_fact:
    __models: "{{ query('ansible.builtin.file', '0.6.3.json') | llmhost.vllm.vllm_model_summary({'seed': '0.6.3'}, 'seed', '0.6.3') }}"
"""

RETURN = r"""
_value:
  description: C(profile), C(version), C(profiles) (every profile's vLLM version) and C(served) (per version with a
    table, the architectures it generates text with).
  type: dict
"""

import json

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_models
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def vllm_model_summary(texts, profile_versions, profile, version):
    tables = [json.loads(t) for t in texts]
    return vllm_models.summary(tables, plain(profile_versions), str(profile), str(version))


class FilterModule:
    """llmhost.vllm vLLM model-registry filters."""

    def filters(self):
        return {"vllm_model_summary": vllm_model_summary}
