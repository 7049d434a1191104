# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: everything every playbook's first play refuses from a host's values, in one list."""

from __future__ import annotations

DOCUMENTATION = r"""
name: site_input_errors
short_description: Refuse, in one list, what the first play of every playbook refuses from a host's values
version_added: 1.0.0
description:
  - The four checks of C(roles/_common/tasks/inputs.yml), in the order a wrong value would mislead the next one.
  - First the names and the types, together. Variables with a role's prefix that no role knows and tags no task carries
    (C(llmhost.vllm.typo_errors)), then values of the wrong type or choice (C(llmhost.vllm.type_errors)).
  - Only when those pass, since they read the values as their types say, two listeners on one port
    (C(llmhost.vllm.port_clashes)) and values their class refuses (C(llmhost.vllm.input_class_errors)).
  - Returns one sentence per error; an empty list when there is none.
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])).
    type: dict
    required: true
  run_tags:
    description: The tags the run selects (C(ansible_run_tags)), each of which some task must carry.
    type: list
    elements: str
    default: []
  skip_tags:
    description: The tags the run skips (C(ansible_skip_tags)), held to the same rule.
    type: list
    elements: str
    default: []
  allow_unknown:
    description: Let variables with a role's prefix that no role knows through (C(llmhost_allow_unknown_vars)).
    type: bool
    default: false
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse what the first play refuses
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: >-
      {{ hostvars[inventory_hostname] | llmhost.vllm.site_input_errors(ansible_run_tags, ansible_skip_tags,
                                                                       llmhost_allow_unknown_vars | bool) }}
"""

RETURN = r"""
_value:
  description: One sentence per error.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.filter.input_class_errors import input_class_errors
from ansible_collections.llmhost.vllm.plugins.filter.port_clashes import port_clashes
from ansible_collections.llmhost.vllm.plugins.filter.type_errors import type_errors
from ansible_collections.llmhost.vllm.plugins.filter.typo_errors import typo_errors


def site_input_errors(host_vars, run_tags=None, skip_tags=None, allow_unknown=False):
    names = [] if allow_unknown else list(host_vars.keys())
    errors = typo_errors(names, run_tags, skip_tags) + type_errors(host_vars)
    if errors:
        return errors
    return port_clashes(host_vars) + input_class_errors(host_vars)


class FilterModule:
    """llmhost.vllm first-play filters."""

    def filters(self):
        return {"site_input_errors": site_input_errors}
