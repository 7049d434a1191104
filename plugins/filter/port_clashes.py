# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: one host, one port each."""

from __future__ import annotations

DOCUMENTATION = r"""
name: port_clashes
short_description: Name every two listeners of the collection that would take the same port on a host
version_added: 0.1.0
description:
  - Compares every listener the roles would put on the host, each where its role would put it, with all the others
    (the vLLM replicas' range, the gateway when wanted, Prometheus, Alertmanager, node_exporter, the GPU exporter,
    and Ray's node ports on a host of C(ray_cluster_group), which Ray takes on every address).
  - The replicas' range counts the GPUs of I(vllm_service_gpus) when it lists them, else 8 (the GPUs are read later).
  - The roles' defaults, read from the collection's own files, stand in for what the host does not set.
  - Logic in C(module_utils/listeners.py).
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])); only the listeners' own are read.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse two listeners on one port
  ansible.builtin.assert:
    that: __clashes | length == 0
    fail_msg: "{{ __clashes | join('; ') }}"
  vars:
    __clashes: "{{ hostvars[inventory_hostname] | llmhost.vllm.port_clashes }}"
"""

RETURN = r"""
_value:
  description: One sentence per clash, naming both variables and their ports; an empty list when there is none.
  type: list
  elements: str
"""

import os

from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import role_values
from ansible_collections.llmhost.vllm.plugins.module_utils.listeners import clash_errors

COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = ("vllm_service", "gateway", "monitoring", "ray_cluster")


def port_clashes(host_vars, collection_dir=COLLECTION_DIR):
    merged = role_values(collection_dir, host_vars, roles=ROLES)
    merged["group_names"] = [str(g) for g in host_vars.get("group_names", [])]
    return clash_errors(merged)


class FilterModule:
    """llmhost.vllm listener filters."""

    def filters(self):
        return {"port_clashes": port_clashes}
