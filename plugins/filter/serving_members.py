# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the GPUs of a Ray cluster's members, for the serving plan."""

from __future__ import annotations

DOCUMENTATION = r"""
name: serving_members
short_description: Each member of the Ray cluster with its GPUs, for the serving plan across hosts
version_added: 0.1.0
description:
  - For each member, the GPUs given to the plan (C(vllm_service_plan_gpus) and C(vllm_service_plan_p2p)), else those
    C(gpu_facts) read on it (C(ansible_facts.gpu_topology)).
  - Logic in C(module_utils/cluster_plan.py).
options:
  _input:
    description: Every host's variables (C(hostvars)).
    type: dict
    required: true
  names:
    description: The members, head first (C(ray_cluster_members)' names).
    type: list
    elements: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Say each member's GPU count
  ansible.builtin.debug:
    msg: "{{ hostvars | llmhost.vllm.serving_members(ray_cluster_members | map(attribute='name')) }}"
"""

RETURN = r"""
_value:
  description: Each member's C(name), C(gpus) and C(p2p), in the order given.
  type: list
  elements: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import cluster_plan
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import member_values

READ = ("vllm_service_plan_gpus", "vllm_service_plan_p2p")


def serving_members(hostvars, names):
    names = [str(n) for n in names]
    return cluster_plan.member_gpus(member_values(hostvars, names, READ, ["gpu_topology"]), names)


class FilterModule:
    """llmhost.vllm serving plan filters."""

    def filters(self):
        return {"serving_members": serving_members}
