# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: kernel command line parameters that cannot be used."""

from __future__ import annotations

DOCUMENTATION = r"""
name: kernel_cmdline_errors
short_description: Refuse kernel parameters that are malformed, that do not exist, or that the kernel does not know
version_added: 0.1.0
description:
  - Each parameter is C(name) or C(name=value) with no whitespace, quotes, C($) or backslashes (it lands in a GRUB
    drop-in that update-grub reads as shell).
  - Parameters from tuning guides that do not exist are refused with the reason; others must be known.
  - Logic in C(module_utils/tuning.py).
options:
  _input:
    description: The command line asked for, one parameter per item.
    type: list
    elements: str
    required: true
  known:
    description: Parameters the kernel knows.
    type: list
    elements: str
    required: true
  fake:
    description: Parameters that do not exist, to the reason given.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse parameters that cannot be used
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ ['quiet', 'elevator=none'] | llmhost.vllm.kernel_cmdline_errors(['quiet'], {'elevator': 'removed in 5.0'}) }}"
"""

RETURN = r"""
_value:
  description: One phrase per kind of problem, naming the parameters.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.tuning import cmdline_errors
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def kernel_cmdline_errors(cmdline, known, fake):
    return cmdline_errors(plain(cmdline), set(plain(known)), plain(fake))


class FilterModule:
    """llmhost.vllm tuning filters."""

    def filters(self):
        return {"kernel_cmdline_errors": kernel_cmdline_errors}
