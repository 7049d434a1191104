# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the Ray cluster's nftables table."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ray_firewall
short_description: The nftables table that lets only the cluster's members reach its ports
version_added: 0.1.0
description:
  - Ray has no authentication, and its GCS, raylet and object manager listen on every address. This table, of its
    own (C(inet llmhost_ray)), accepts the cluster's TCP ports from loopback and the members, and drops them from
    anyone else. Loaded with C(nft -f), it replaces the table in one transaction; nothing else of the host's firewall
    is touched.
  - Logic in C(module_utils/ray_cluster.py).
options:
  _input:
    description: The members' addresses.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - llmhost.vllm.ray_ports
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Write the table
  ansible.builtin.copy:
    content: "{{ ['10.0.0.1', '10.0.0.2'] | llmhost.vllm.ray_firewall(ray_cluster_ports, [10002, 10999]) }}"
    dest: /etc/llmhost/ray/firewall.nft
    mode: "0600"
"""

RETURN = r"""
_value:
  description: The nftables script.
  type: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def ray_firewall(addresses, ports, workers):
    return ray_cluster.firewall_ruleset([str(a) for a in addresses], plain(ports), plain(workers))


class FilterModule:
    """llmhost.vllm Ray firewall filters."""

    def filters(self):
        return {"ray_firewall": ray_firewall}
