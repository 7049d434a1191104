# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a wrong type or choice in one line, before Ansible's own check prints the whole spec."""

from __future__ import annotations

DOCUMENTATION = r"""
name: type_errors
short_description: Name each variable whose value no role's argument spec takes, in one line
version_added: 0.1.0
description:
  - For each variable of the host that a role of this collection declares in C(meta/argument_specs.yml), runs
    Ansible's own argument spec validator on the value, so exactly the values Ansible would refuse are refused.
  - Says it in one line (the variable, what it got and what it needs) instead of Ansible's failed result, which
    carries the whole spec. The value of a C(no_log) option is never shown.
  - Reads the collection's own files on the controller, in the copy this filter belongs to.
  - Logic in C(module_utils/input_types.py).
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])); only the declared names are read.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse wrong types in one line each
  ansible.builtin.assert:
    that: __wrong | length == 0
    fail_msg: "{{ __wrong | join('; ') }}"
  vars:
    __wrong: "{{ hostvars[inventory_hostname] | llmhost.vllm.type_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per wrong value; an empty list when there is none.
  type: list
  elements: str
"""

import os

from ansible_collections.llmhost.vllm.plugins.module_utils import input_types
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import host_values, load_yaml, role_files

# This collection's root: plugins/filter/ is two levels below it, in a checkout as in an installed copy.
COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def type_errors(host_vars, collection_dir=COLLECTION_DIR):
    options = input_types.options_by_name(load_yaml(role_files(collection_dir, "meta", "argument_specs.yml")))
    return input_types.errors(host_values(host_vars, options), options)


class FilterModule:
    """llmhost.vllm input filters."""

    def filters(self):
        return {"type_errors": type_errors}
