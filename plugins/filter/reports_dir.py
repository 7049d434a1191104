# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the controller folder the reports go to (llmhost_reports_dir)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: reports_dir
short_description: The controller folder the host report, the doctor and the benchmark write to
version_added: 0.1.0
description:
  - Turns C(llmhost_reports_dir) into an absolute folder on the controller. Empty or unset means C(reports);
    a relative path is taken from the folder C(ansible-playbook) runs from, never from the collection's
    own folder, so reports never land inside an installed collection. C(~) is expanded.
  - Logic in C(module_utils/paths.py).
options:
  _input:
    description: C(llmhost_reports_dir), or none.
    type: path
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Write the reports where the user runs ansible-playbook
  ansible.builtin.include_role:
    name: llmhost.vllm.doctor
  vars:
    doctor_dir: "{{ llmhost_reports_dir | default(none) | llmhost.vllm.reports_dir }}"
"""

RETURN = r"""
_value:
  description: An absolute folder, such as C(/home/me/lab/reports).
  type: path
"""

import os

from ansible_collections.llmhost.vllm.plugins.module_utils.paths import controller_dir


def reports_dir(value):
    return controller_dir(value, os.getcwd())


class FilterModule:
    """llmhost.vllm report filters."""

    def filters(self):
        return {"reports_dir": reports_dir}
