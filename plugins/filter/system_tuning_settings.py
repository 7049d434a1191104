# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the sysctl settings system_tuning applies."""

from __future__ import annotations

DOCUMENTATION = r"""
name: system_tuning_settings
short_description: The sysctl settings system_tuning applies, with kernel.numa_balancing decided for this host
version_added: 1.0.0
description:
  - The three layers (defaults, the user's, overrides) merged in order, a null value dropping the key.
  - C(kernel.numa_balancing) off on a host of more than one NUMA node, left alone on one, or as forced.
  - Logic in C(module_utils/tuning.py) and C(module_utils/numa.py).
options:
  _input:
    description: The layers, in order.
    type: list
    elements: dict
    required: true
  wish:
    description: I(system_tuning_numa_balancing).
    type: raw
    required: true
  node_count:
    description: The host's NUMA nodes.
    type: int
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle the settings
  ansible.builtin.set_fact:
    __settled: "{{ [{'vm.swappiness': 10}, {}, {}] | llmhost.vllm.system_tuning_settings('auto', 2) }}"
"""

RETURN = r"""
_value:
  description: C(sysctl) (the settings), C(want) (each value as the kernel prints it), C(numa_balancing_reason).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import numa, tuning
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def system_tuning_settings(layers, wish, node_count):
    return tuning.sysctl_settings(plain(layers), numa.balancing(plain(wish), max(int(node_count), 1)))


class FilterModule:
    """llmhost.vllm system tuning filters."""

    def filters(self):
        return {"system_tuning_settings": system_tuning_settings}
