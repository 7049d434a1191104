# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the variables a role's input table reads."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_input_names
short_description: The variables C(llmhost.vllm.role_input_errors) reads for a role
version_added: 0.1.0
description:
  - From the role's table in C(module_utils/role_inputs.py), sorted.
options:
  _input:
    description: The role, for example C(vllm_service).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: The values the check reads
  ansible.builtin.debug:
    msg: "{{ query('ansible.builtin.vars', *('kernel' | llmhost.vllm.role_input_names)) }}"
"""

RETURN = r"""
_value:
  description: Variable names.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs


def role_input_names(role):
    return role_inputs.names(role)


class FilterModule:
    """llmhost.vllm role input filters."""

    def filters(self):
        return {"role_input_names": role_input_names}
