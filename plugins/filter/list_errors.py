# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: Values that must be lists."""

from __future__ import annotations

DOCUMENTATION = r"""
name: list_errors
short_description: Values that must be lists (of unique items, of GPU indices)
version_added: 0.1.0
description:
  - Each value must be a list; a string is refused rather than read character by character.
  - One of the input checks of the roles' C(validate.yml) (logic in C(module_utils/value_checks.py)).
options:
  _input:
    description: Variable name to value.
    type: dict
    required: true
  unique:
    description: Names whose list must not hold an item twice.
    type: list
    elements: str
    default: []
  ints:
    description: Names whose list holds GPU indices (whole numbers from 0); those must be unique too.
    type: list
    elements: str
    default: []
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse values that must be lists
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'gpu_tuning_gpus': gpu_tuning_gpus} | llmhost.vllm.list_errors(ints=['gpu_tuning_gpus']) }}"
"""

RETURN = r"""
_value:
  description: Sentences naming each bad variable; empty when all are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import value_checks


def list_errors(spec, unique=None, ints=None):
    return value_checks.list_errors(spec, unique or (), ints or ())


class FilterModule:
    """llmhost.vllm input filter list_errors."""

    def filters(self):
        return {"list_errors": list_errors}
