# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: why a gateway has no upstream it can front."""

from __future__ import annotations

DOCUMENTATION = r"""
name: gateway_upstream_errors
short_description: Refuse a gateway with nothing behind it, or a fleet whose hosts one upstream cannot front
version_added: 1.0.0
description:
  - A host of the group (or this host) without a serving plan in this run.
  - A host whose replicas listen on loopback only, hosts that serve different models, or hosts that hold different
    keys for vLLM (unless I(gateway_upstream_api_key) is set); keys are never quoted.
  - Nothing is refused without a gateway here, or under --check (a fresh host has no plan yet).
  - Logic in C(module_utils/gateway.py).
options:
  _input:
    description: >-
      C(wanted), C(check_mode), C(group) (I(gateway_backends_group)), C(missing) (hosts without a plan), C(remote)
      (the other hosts' C(hostvars)), C(members) (every host of the group), C(served) (the model each serves, in the
      order of C(members)), C(key) (the key this gateway presents to vLLM), C(upstream_key_given).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse a gateway without an upstream it can front
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ __fleet | llmhost.vllm.gateway_upstream_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem; an empty list when the gateway has an upstream it can front.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import upstream_errors


def gateway_upstream_errors(values):
    v = dict(values)
    v.update(remote=list(v["remote"]), members=list(v["members"]), served=list(v["served"]),
             missing=list(v["missing"]), wanted=bool(v["wanted"]), check_mode=bool(v["check_mode"]),
             upstream_key_given=bool(v["upstream_key_given"]), group=str(v["group"]), key=str(v["key"]))
    return upstream_errors(v)


class FilterModule:
    """llmhost.vllm gateway filters."""

    def filters(self):
        return {"gateway_upstream_errors": gateway_upstream_errors}
