# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: model folders that are someone else's."""

from __future__ import annotations

DOCUMENTATION = r"""
name: foreign_model_folders
short_description: The model folders the model role must neither replace nor remove
version_added: 0.1.0
description:
  - The model's folder, its C(.old) and its C(.previous), each when it is there without the C(llmhost-manifest.json)
    this collection writes.
  - Logic in C(module_utils/model_check.py).
options:
  _input:
    description: The C(paths) of C(llmhost.vllm.path_info)'s answer (the folders looked at, the manifests read).
    type: dict
    required: true
  dest:
    description: The model's folder.
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse to replace a folder the collection did not make
  ansible.builtin.assert:
    that: __foreign | length == 0
  vars:
    __foreign: "{{ __found.paths | llmhost.vllm.foreign_model_folders('/srv/llmhost/models/qwen') }}"
"""

RETURN = r"""
_value:
  description: Phrases such as C(/srv/llmhost/models/qwen exists).
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.model_check import foreign_folders
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def foreign_model_folders(seen, dest):
    return foreign_folders(plain(seen), str(dest))


class FilterModule:
    """llmhost.vllm model filters."""

    def filters(self):
        return {"foreign_model_folders": foreign_model_folders}
