# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a host's part in its Ray cluster, with the cluster's checks."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ray_cluster_view
short_description: Say what a host does in its Ray cluster, and refuse a cluster that cannot form or is not guarded
version_added: 0.1.0
description:
  - Reads each member's address on the cluster's interface (its C(ray_cluster_node_address), else its network facts)
    and checks the whole cluster with this host's settings.
  - "Refused by name: an empty interface, a member not in the run, a head outside the group, a node address that is
    not an IP address, is loopback (Ray replaces it), public (Ray has no authentication) or not on the interface, two
    nodes on one address, and ports out of range, repeated, or inside the workers' range."
  - Logic in C(module_utils/ray_cluster.py).
options:
  _input:
    description: Every host's variables (C(hostvars)).
    type: dict
    required: true
  this:
    description: This host (C(inventory_hostname)).
    type: str
    required: true
  in_run:
    description: The hosts of this run (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  settings:
    description:
      - This host's C(group) (C(ray_cluster_group)), C(group_hosts) (that group's hosts), C(interface)
        (C(ray_cluster_interface)), C(head) (C(ray_cluster_head)), C(ports) (C(ray_cluster_ports)) and C(workers)
        (C(ray_cluster_worker_ports)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Read this host's part in the cluster
  ansible.builtin.set_fact:
    __view: "{{ hostvars | llmhost.vllm.ray_cluster_view(inventory_hostname, ansible_play_hosts_all, __settings) }}"
  vars:
    __settings: {group: cluster, group_hosts: "{{ groups.cluster }}", interface: eth1, head: "",
                 ports: "{{ ray_cluster_ports }}", workers: [10002, 10999]}
"""

RETURN = r"""
_value:
  description:
    - C(part) (C(head), C(worker) or C(none)), C(errors) (one sentence each), C(members) (each C(name), C(address),
      C(addresses), C(head)), C(head) (its name), C(node) (this host's member entry) and C(address) (the head's GCS,
      C(host:port)).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import member_values, plain


def ray_cluster_view(hostvars, this, in_run, settings):
    settings = plain(settings)
    nic = str(settings.get("interface") or "").replace("-", "_").replace(".", "_")
    hosts = member_values(hostvars, settings.get("group_hosts") or [], ["ray_cluster_node_address"], [nic])
    return ray_cluster.cluster_view(hosts, this, list(in_run), settings)


class FilterModule:
    """llmhost.vllm Ray cluster filters."""

    def filters(self):
        return {"ray_cluster_view": ray_cluster_view}
