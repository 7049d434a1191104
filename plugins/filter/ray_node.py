# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: one Ray node's command line and environment."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ray_node
short_description: The C(ray start --block) command line and the environment of one node of the cluster
version_added: 0.1.0
description:
  - The head starts the cluster (C(--head), the dashboard off); a worker joins the head's GCS. Every port is fixed,
    so the firewall can name them, and no usage report leaves the host. NCCL's and Gloo's traffic between the ranks
    Ray places goes over the cluster's interface.
  - Logic in C(module_utils/ray_cluster.py), which the lent-GPU proof (C(tests/device/ray_proof.sh)) runs too.
options:
  _input:
    description: This node, C(address), C(head) (bool) and C(gpus) (how many Ray may hand out).
    type: dict
    required: true
  ray:
    description: The C(ray) program (in vLLM's venv).
    type: str
    required: true
  head_address:
    description: The head's address on the cluster's interface.
    type: str
    required: true
  temp_dir:
    description: Ray's temp folder, inside the role's own.
    type: str
    required: true
  interface:
    description: The cluster's network interface (C(ray_cluster_interface)).
    type: str
    required: true
extends_documentation_fragment:
  - llmhost.vllm.ray_ports
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Say the head's command line
  ansible.builtin.debug:
    msg: "{{ ({'address': '10.0.0.1', 'head': true, 'gpus': 2}
             | llmhost.vllm.ray_node('/opt/vllm/venv/bin/ray', '10.0.0.1', ray_cluster_ports, [10002, 10999],
                                     '/var/lib/llmhost-ray/tmp', 'eth1')).argv | join(' ') }}"
"""

RETURN = r"""
_value:
  description: C(argv) (the command line, one argument each) and C(env) (the environment, name to value).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def ray_node(node, ray, head_address, ports, workers, temp_dir, interface):
    return {"argv": ray_cluster.node_argv(str(ray), plain(node), str(head_address), plain(ports), plain(workers),
                                          str(temp_dir)),
            "env": ray_cluster.node_environment(str(interface))}


class FilterModule:
    """llmhost.vllm Ray node filters."""

    def filters(self):
        return {"ray_node": ray_node}
