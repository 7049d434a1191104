# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: parse ``sysctl KEY...`` output into a dict with whitespace-normalised values."""

from __future__ import annotations

DOCUMENTATION = r"""
name: sysctl_output
short_description: Parse the output of C(sysctl KEY...) into a dict
version_added: 0.1.0
description:
  - Turns the C(key = value) lines that C(sysctl) prints into a dict of key to value.
  - Runs of whitespace inside a value (multi-number keys such as C(net.ipv4.tcp_rmem) print tabs)
    become one space, so the result compares equal to a value written with spaces.
  - Lines that are not of the C(key = value) form are ignored.
options:
  _input:
    description: The output lines (a list) or the whole output (a string).
    type: raw
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Compare live values with the wanted ones
  ansible.builtin.debug:
    msg: "{{ sysctl_run.stdout_lines | llmhost.vllm.sysctl_output }}"
"""

RETURN = r"""
_value:
  description: Key to value, both strings.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.module_utils.host_reads import parse_sysctl


def sysctl_output(data):
    """Parse ``sysctl`` output (list of lines, or one string) into ``{key: value}``."""
    if isinstance(data, str):
        lines = data.splitlines()
    elif isinstance(data, (list, tuple)):
        lines = data
    else:
        raise AnsibleFilterError("sysctl_output expects a string or a list of lines, got %s" % type(data).__name__)
    return parse_sysctl(lines)


class FilterModule:
    """llmhost.vllm sysctl filters."""

    def filters(self):
        return {"sysctl_output": sysctl_output}
