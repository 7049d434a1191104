# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the units systemctl show says exist."""

from __future__ import annotations

DOCUMENTATION = r"""
name: loaded_units
short_description: The units that exist, from the output of systemctl show
version_added: 0.2.0
description:
  - Reads the output of C(systemctl show -p Id -p LoadState -p ActiveState -p UnitFileState UNIT...) and returns the
    names of the units systemd knows (loaded, or still active); a name it does not know is left out, so a role can stop
    and disable exactly the units that are there.
  - Logic in C(module_utils/uninstall.py).
options:
  _input:
    description: The command's standard output.
    type: str
    required: true
  active_state:
    description: Only the units in this C(ActiveState) (C(failed)); empty, every unit that exists.
    type: str
    default: ""
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Stop what is there
  ansible.builtin.systemd_service:
    name: "{{ item }}"
    state: stopped
  loop: "{{ __shown.stdout | llmhost.vllm.loaded_units }}"
"""

RETURN = r"""
_value:
  description: The unit names, in the order shown.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.uninstall import loaded_units


class FilterModule:
    """llmhost.vllm systemd filters."""

    def filters(self):
        return {"loaded_units": loaded_units}
