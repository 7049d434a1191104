# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the verdict on a model's architecture, before anything is downloaded."""

from __future__ import annotations

DOCUMENTATION = r"""
name: model_architecture_errors
short_description: Refuse a model whose architecture the user does not accept or the profile's vLLM cannot serve
version_added: 1.0.0
description:
  - Reads C(architectures[0]) of a model's config.json (the hub's answer, or a local folder's file).
  - Refuses it when it is not in I(model_architectures), or when the stack profile's vLLM has no model class for it
    (its model registry, C(roles/llmhost_stack/files/vllm-architectures/)), naming the vLLM version, the profile and
    the profiles whose vLLM has it.
  - A vLLM version without a table (one set by C(llmhost_stack_overrides)) checks I(model_architectures) alone.
  - Logic in C(module_utils/vllm_models.py); module C(model_verify) gives the same verdict on the downloaded folder.
options:
  _input:
    description: The model's config.json, as a dict.
    type: dict
    required: true
  accepted:
    description: I(model_architectures); empty accepts any.
    type: list
    elements: str
    required: true
  models:
    description: The fact C(llmhost_stack_vllm_models) (filter C(vllm_model_summary)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Judge the config the hub answered with
  ansible.builtin.set_fact:
    __errors: "{{ __config | llmhost.vllm.model_architecture_errors(model_architectures, llmhost_stack_vllm_models) }}"
"""

RETURN = r"""
_value:
  description: Sentences; empty when the model passes.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_models
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def model_architecture_errors(config, accepted, models):
    config = plain(config) or {}
    return vllm_models.architecture_errors(vllm_models.architecture(config), list(plain(accepted) or []), plain(models))


class FilterModule:
    """llmhost.vllm model filters."""

    def filters(self):
        return {"model_architecture_errors": model_architecture_errors}
