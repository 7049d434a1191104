# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what the first play refuses of one role's own variables, for that role used alone in a user's playbook."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_alone_errors
short_description: The first play's type and class checks, over one role's own variables
version_added: 0.3.0
description:
  - "A role put in a user's own playbook (C(roles: [llmhost.vllm.vllm_service])) runs without the collection's first
    play, so neither C(llmhost.vllm.type_errors) nor C(llmhost.vllm.input_class_errors) judges its values. Each role's
    C(validate.yml) calls this filter, which runs the same two checks over the variables with the role's prefix that the
    host sets, and returns the same sentences."
  - Checks that need several roles (two listeners on one port, a folder one role hands to another) stay in the
    collection's playbooks.
  - Returns an empty list when I(checked) is true (the first play already ran both checks over every variable).
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])).
    type: dict
    required: true
  role:
    description: The role whose variables (those named C(<role>_*)) are judged.
    type: str
    required: true
  checked:
    description: The first play's checks ran in this run (C(_common_inputs_checked)); nothing is judged twice.
    type: bool
    default: false
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse what the first play would refuse of this role's variables, when it did not run
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ hostvars[inventory_hostname] | llmhost.vllm.role_alone_errors('gateway', _common_inputs_checked is defined) }}"
"""

RETURN = r"""
_value:
  description: One sentence per error, as the first play says it.
  type: list
  elements: str
"""

from collections.abc import Mapping

from ansible_collections.llmhost.vllm.plugins.filter.input_class_errors import input_class_errors
from ansible_collections.llmhost.vllm.plugins.filter.type_errors import type_errors


class _Only(Mapping):
    """The host's variables with one prefix; each value is read (templated) only when a check asks for it, so one that
    fails to template is left to the role's own check, as the first play leaves it."""

    def __init__(self, host_vars, prefix):
        self._vars = host_vars
        self._names = [name for name in host_vars.keys() if str(name).startswith(prefix)]

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        return self._vars[name]

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)


def role_alone_errors(host_vars, role, checked=False):
    if checked:
        return []
    own = _Only(host_vars, "%s_" % role)
    return type_errors(own) or input_class_errors(own)


class FilterModule:
    """llmhost.vllm role-alone input filters."""

    def filters(self):
        return {"role_alone_errors": role_alone_errors}
