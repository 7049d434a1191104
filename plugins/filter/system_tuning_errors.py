# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what system_tuning refuses once it has read the host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: system_tuning_errors
short_description: Refuse sysctl settings, kernel parameters and tuning wishes this host cannot take
version_added: 1.0.0
description:
  - Sysctl keys that are not dotted names, values that are not integers, keys this kernel does not have.
  - Kernel parameters that are malformed, do not exist, or the kernel does not know.
  - A THP mode, CPU governor or platform profile the command line or the host contradicts.
  - Logic in C(module_utils/tuning.py).
options:
  _input:
    description: >-
      C(sysctl) (the settings), C(on_host) (the keys found under /proc/sys), C(cmdline), C(known), C(fake),
      C(thp), C(governor), C(platform_profile), C(numa) (C(ansible_facts.numa)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse what this host cannot take
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: >-
      {{ {'sysctl': {'vm.swappiness': 10}, 'on_host': ['vm.swappiness'], 'cmdline': [], 'known': [], 'fake': {},
          'thp': 'madvise', 'governor': '', 'platform_profile': '', 'numa': {}} | llmhost.vllm.system_tuning_errors }}
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import tuning
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def system_tuning_errors(values):
    return tuning.host_errors(plain(values))


class FilterModule:
    """llmhost.vllm system tuning filters."""

    def filters(self):
        return {"system_tuning_errors": system_tuning_errors}
