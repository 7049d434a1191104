# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: The gateway's clients checked, never quoting a key."""

from __future__ import annotations

DOCUMENTATION = r"""
name: gateway_client_errors
short_description: Sentences for each bad gateway client, never quoting a key
version_added: 0.1.0
description:
  - Each client is a mapping with C(name) and C(key), and optional whole numbers C(rate) (1-100000) and C(burst) (0-100000).
  - Names are 1-64 letters, digits, C(. _ -), starting with a letter or digit, unique without regard to case, and
    not a word nginx reserves (C(default), C(hostnames), C(include), C(volatile)).
  - Keys are 20 to 256 letters, digits or C(. _ ~ + / = -) of at least 8 different characters, no two clients share
    one, and none is the key the gateway presents to vLLM. A sentence about a key names the client, never the key.
  - Logic in C(module_utils/gateway.py).
options:
  _input:
    description: The clients.
    type: list
    elements: dict
    required: true
  variable:
    description: The variable's name, for the sentences.
    type: str
    default: gateway_clients
  upstream_key:
    description: The key the gateway presents to vLLM; no client may hold it.
    type: str
    default: ""
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse clients nginx cannot use
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ gateway_clients | llmhost.vllm.gateway_client_errors }}"
  no_log: true
"""

RETURN = r"""
_value:
  description: Sentences naming each bad client; empty when all are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import gateway


def gateway_client_errors(clients, variable="gateway_clients", upstream_key=""):
    return gateway.client_errors(clients, variable, upstream_key=str(upstream_key or ""))


class FilterModule:
    """llmhost.vllm filter gateway_client_errors."""

    def filters(self):
        return {"gateway_client_errors": gateway_client_errors}
