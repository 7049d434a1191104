# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: kernel.numa_balancing for a host, and why."""

from __future__ import annotations

DOCUMENTATION = r"""
name: numa_balancing
short_description: Decide kernel.numa_balancing from the wish and the host's NUMA nodes, with the reason
version_added: 0.1.0
description:
  - A boolean wish forces it; else off on a host of several NUMA nodes (page migration stalls the threads that feed
    the GPUs), and left alone on one node.
  - Logic in C(module_utils/numa.py).
options:
  _input:
    description: I(system_tuning_numa_balancing) (true, false, or C(auto)).
    type: raw
    required: true
  node_count:
    description: The host's NUMA nodes.
    type: int
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Decide kernel.numa_balancing
  ansible.builtin.set_fact:
    __decision: "{{ system_tuning_numa_balancing | llmhost.vllm.numa_balancing(ansible_facts.numa.node_count) }}"
"""

RETURN = r"""
_value:
  description: C(value) (0, 1, or none when left alone) and C(reason).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.numa import balancing


def numa_balancing(wish, node_count):
    value, reason = balancing(wish, node_count)
    return {"value": value, "reason": reason}


class FilterModule:
    """llmhost.vllm NUMA filters."""

    def filters(self):
        return {"numa_balancing": numa_balancing}
