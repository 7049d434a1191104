# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a role's input checks in one call."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_input_errors
short_description: Check a role's inputs, given as one dict, against the role's table of checks
version_added: 0.1.0
description:
  - Numbers within their range, lists that are lists, names that stay what they become (a host, a user, a unit, an apt
    name or version, a source URL, one argument), paths checked for what they become, and the checks a table cannot
    say (vLLM's environment, a TLS pair, a benchmark's phases).
  - The role's table is in C(module_utils/role_inputs.py); C(llmhost.vllm.role_input_names) lists the variables it
    reads.
options:
  _input:
    description: Each of the role's variables (see C(role_input_names)) to its value.
    type: dict
    required: true
  role:
    description: The role, for example C(vllm_service).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse the role's bad inputs
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __names: "{{ 'gateway' | llmhost.vllm.role_input_names }}"
    __errors: "{{ dict(__names | zip(query('ansible.builtin.vars', *__names))) | llmhost.vllm.role_input_errors('gateway') }}"
"""

RETURN = r"""
_value:
  description: One sentence per bad variable, naming it; an empty list when all are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def role_input_errors(values, role):
    return role_inputs.errors(role, plain(values))


class FilterModule:
    """llmhost.vllm role input filters."""

    def filters(self):
        return {"role_input_errors": role_input_errors}
