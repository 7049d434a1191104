# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what the model role does with the folder it serves from."""

from __future__ import annotations

DOCUMENTATION = r"""
name: model_swap_plan
short_description: Decide whether the model role fetches, puts back the model kept from before, or keeps what is there
version_added: 1.0.0
description:
  - Reads module C(path_info)'s answer about the model's folder, C(<dest>.old), C(<dest>.previous) and their manifests.
  - C(errors) names a local source that is not a real folder holding config.json, and folders there without the
    manifest this collection writes (someone else's, which nothing replaces or removes).
  - C(fetch) when the folder in place holds another model; C(restore) when the one wanted is the one kept from before
    (I(model_keep_previous)), which comes back by renames, without a download.
  - Logic in C(module_utils/model_check.py).
options:
  _input:
    description: Module C(path_info)'s C(paths).
    type: dict
    required: true
  dest:
    description: The model's folder.
    type: str
    required: true
  origin:
    description: The source the manifest records (C(<repo>@<revision>), or the local folder).
    type: str
    required: true
  keep_previous:
    description: I(model_keep_previous).
    type: bool
    required: true
  local_path:
    description: I(model_local_path) when the source is local; empty otherwise.
    type: str
    default: ""
  rollback:
    description: I(model_rollback) - the model wanted is the one kept from before, whatever I(origin) says.
    type: bool
    default: false
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    __plan: "{{ __found.paths | llmhost.vllm.model_swap_plan('/srv/llmhost/models/qwen', 'Qwen/Qwen3-4B@abc', true) }}"
"""

RETURN = r"""
_value:
  description: C(errors) (sentences), C(fetch), C(restore), and C(origin), the source the manifests will record
    (the one kept from before's under I(rollback)).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.model_check import swap_plan
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def model_swap_plan(seen, dest, origin, keep_previous, local_path="", rollback=False):
    return swap_plan(plain(seen), str(dest), str(origin), bool(keep_previous), str(local_path) or None, bool(rollback))


class FilterModule:
    """llmhost.vllm model filters."""

    def filters(self):
        return {"model_swap_plan": model_swap_plan}
