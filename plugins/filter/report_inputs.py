# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what the host report or the doctor read, from their registered results."""

from __future__ import annotations

DOCUMENTATION = r"""
name: report_inputs
short_description: The host report's or the doctor's input, from the results their tasks registered
version_added: 0.1.0
description:
  - The role hands its registered reads by name (C(query('ansible.builtin.vars', *names, default=''))), an undefined one as an empty string; a return
    code, a first line, a base64 body are read here into the report's input.
  - With C(names=true) returns the names to read instead.
  - Logic in C(module_utils/report_inputs.py).
options:
  _input:
    description: C(doctor) or C(host_report) with I(names), else the reads, name to value.
    type: raw
    required: true
  report:
    description: C(doctor) or C(host_report), when I(_input) holds the reads.
    type: str
  names:
    description: Return the names of the variables the report reads.
    type: bool
    default: false
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Build the doctor's report
  ansible.builtin.set_fact:
    doctor_result: "{{ dict(__names | zip(query('ansible.builtin.vars', *__names, default='')))
                       | llmhost.vllm.report_inputs('doctor') | llmhost.vllm.doctor_report }}"
  vars:
    __names: "{{ 'doctor' | llmhost.vllm.report_inputs(names=true) }}"
"""

RETURN = r"""
_value:
  description: The report's input (a dict), or the names (a list).
  type: raw
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import report_inputs as _inputs
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain

_NAMES = {"doctor": _inputs.DOCTOR_NAMES, "host_report": _inputs.HOST_REPORT_NAMES}
_BUILD = {"doctor": _inputs.doctor, "host_report": _inputs.host_report}


def report_inputs(data, report=None, names=False):
    if names:
        return list(_NAMES[data])
    return _BUILD[report](plain(data))


class FilterModule:
    """llmhost.vllm report filters."""

    def filters(self):
        return {"report_inputs": report_inputs}
