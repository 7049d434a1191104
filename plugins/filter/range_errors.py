# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: Numbers outside their range."""

from __future__ import annotations

DOCUMENTATION = r"""
name: range_errors
short_description: Numbers outside their range, one sentence per variable
version_added: 0.1.0
description:
  - Each value must be a number from its lowest to its highest.
  - One of the input checks of the roles' C(validate.yml) (logic in C(module_utils/value_checks.py)).
options:
  _input:
    description: Variable name to C([value, lowest, highest]); highest C(null) means no upper bound.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse numbers out of range
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'vllm_service_base_port': [vllm_service_base_port, 1024, 65535]} | llmhost.vllm.range_errors }}"
"""

RETURN = r"""
_value:
  description: Sentences naming each bad variable; empty when all are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import value_checks


def range_errors(spec):
    return value_checks.range_errors(spec)


class FilterModule:
    """llmhost.vllm input filter range_errors."""

    def filters(self):
        return {"range_errors": range_errors}
