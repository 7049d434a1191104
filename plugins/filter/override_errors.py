# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: stack profile overrides of the wrong shape."""

from __future__ import annotations

DOCUMENTATION = r"""
name: override_errors
short_description: Refuse overrides of a stack profile that are not its keys, or not of their shape
version_added: 0.1.0
description:
  - A key the profile does not have, or a value that is not a dict where the profile has a dict (which is merged).
  - Logic in C(module_utils/role_inputs.py).
options:
  _input:
    description: I(llmhost_stack_overrides).
    type: dict
    required: true
  profile:
    description: The profile as its file has it.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse overrides of the wrong shape
  ansible.builtin.assert:
    that: __bad | length == 0
  vars:
    __bad: "{{ llmhost_stack_overrides | llmhost.vllm.override_errors(__llmhost_stack_data) }}"
"""

RETURN = r"""
_value:
  description: One phrase per bad key.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def override_errors(overrides, profile):
    return role_inputs.override_errors(plain(overrides), plain(profile))


class FilterModule:
    """llmhost.vllm stack profile filters."""

    def filters(self):
        return {"override_errors": override_errors}
