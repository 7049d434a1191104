# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: nginx upstream weights that give a model upgrade's canary its share of the requests."""

from __future__ import annotations

DOCUMENTATION = r"""
name: canary_weights
short_description: nginx upstream weights that send a share of the requests to the canary replica
version_added: 0.3.0
description:
  - The canary weighs I(percent) times the number of other replicas, each other one 100 - I(percent), divided by their
    common factor (10% of 2 replicas - 1 and 9; of 3 - 2, 9 and 9). Empty when the canary is not among them or alone.
  - Logic in C(module_utils/canary.py).
options:
  _input:
    description: Every replica the gateway fronts, C(host:port).
    type: list
    elements: str
    required: true
  canary:
    description: The canary's C(host:port).
    type: str
    required: true
  percent:
    description: Its share, in percent.
    type: int
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Give the canary 10% of the requests
  ansible.builtin.set_fact:
    gateway_backend_weights: "{{ ['127.0.0.1:8000', '127.0.0.1:8001'] | llmhost.vllm.canary_weights('127.0.0.1:8000', 10) }}"
"""

RETURN = r"""
_value:
  description: C(host:port) to a whole-number weight.
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import canary


def canary_weights(endpoints, canary_endpoint, percent):
    return canary.weights([str(e) for e in endpoints], str(canary_endpoint), int(percent))


class FilterModule:
    def filters(self):
        return {"canary_weights": canary_weights}
