# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what `ray status` says of the cluster."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ray_status
short_description: Read the active nodes and the GPUs from C(ray status)
version_added: 0.1.0
description:
  - The head waits on this before vLLM's API server starts (every member and GPU present), and the doctor reports it.
  - Logic in C(module_utils/ray_cluster.py).
options:
  _input:
    description: C(ray status)'s output.
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Say how many nodes the cluster has
  ansible.builtin.debug:
    msg: "{{ (__status.stdout | llmhost.vllm.ray_status).nodes }} node(s)"
"""

RETURN = r"""
_value:
  description: C(nodes) (active), C(gpus) (the cluster's total) and C(gpus_used).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster


def ray_status(text):
    return ray_cluster.parse_status(text)


class FilterModule:
    """llmhost.vllm Ray status filters."""

    def filters(self):
        return {"ray_status": ray_status}
