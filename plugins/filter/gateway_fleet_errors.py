# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: why one upstream cannot front a fleet's hosts."""

from __future__ import annotations

DOCUMENTATION = r"""
name: gateway_fleet_errors
short_description: Refuse a fleet whose hosts one upstream cannot front
version_added: 0.1.0
description:
  - A host whose replicas listen on loopback only, hosts that serve different models, or hosts that hold different
    keys for vLLM (unless I(gateway_upstream_api_key) is set); keys are never quoted.
  - Logic in C(module_utils/gateway.py).
options:
  _input:
    description: The other hosts' variables (C(hostvars) of each).
    type: list
    elements: dict
    required: true
  members:
    description: Every host of the group.
    type: list
    elements: str
    required: true
  served:
    description: The model each member serves, in the order of I(members).
    type: list
    elements: str
    required: true
  key:
    description: The key this gateway presents to vLLM.
    type: str
    required: true
  upstream_key_given:
    description: Whether I(gateway_upstream_api_key) is set.
    type: bool
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse a fleet one upstream cannot front
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ __remote | llmhost.vllm.gateway_fleet_errors(__members, __served, __key, false) }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem; an empty list when the fleet can be fronted.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import fleet_errors


def gateway_fleet_errors(remote, members, served, key, upstream_key_given):
    return fleet_errors(list(remote), list(members), list(served), key, bool(upstream_key_given))


class FilterModule:
    """llmhost.vllm gateway filters."""

    def filters(self):
        return {"gateway_fleet_errors": gateway_fleet_errors}
