# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what an uninstall removes of one role's footprint, given the user's choices."""

from __future__ import annotations

DOCUMENTATION = r"""
name: uninstall_plan
short_description: What an uninstall removes of one role's footprint, given what the user keeps
version_added: 0.2.0
description:
  - Each role names what it put on the host by kind (C(units), C(masked), C(paths), C(folders), C(users), C(groups),
    C(models), C(model_users), C(model_groups), C(reports), C(hold_records), C(hold_files), C(packages)). C(models), C(model_users) and C(model_groups)
    go only with O(flags.models), C(reports) with O(flags.reports), C(hold_records) (the role's unattended-upgrades file,
    which names the packages it held) and C(hold_files) (pins, repository sources and keys) with O(flags.holds),
    C(packages) with O(flags.packages); the rest always.
  - Fails on a kind it does not know, so a footprint cannot silently keep something.
  - Logic in C(module_utils/uninstall.py).
options:
  _input:
    description: The role's footprint, each kind a list of names or paths.
    type: dict
    required: true
  flags:
    description: The user's choices, C(models), C(reports), C(holds) and C(packages), each a boolean.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Work out what goes
  ansible.builtin.set_fact:
    __plan: "{{ {'paths': ['/opt/llmhost/vllm/venv'], 'models': ['/srv/llmhost/models']} | llmhost.vllm.uninstall_plan({'models': false}) }}"
"""

RETURN = r"""
_value:
  description: C(units) to stop and disable, units to C(unmask), C(paths) to remove whole, C(folders) to remove once
    empty (deepest first), C(users) and C(groups) to remove, C(hold_records) to read the held packages from, packages to C(purge).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.llmhost.vllm.plugins.module_utils import uninstall


def uninstall_plan(footprint, flags):
    errors = uninstall.footprint_errors(footprint)
    if errors:
        raise AnsibleFilterError("uninstall footprint: " + "; ".join(errors))
    return uninstall.plan(footprint, {flag: bool(flags.get(flag)) for flag in uninstall.FLAGS})


class FilterModule:
    """llmhost.vllm uninstall filters."""

    def filters(self):
        return {"uninstall_plan": uninstall_plan}
