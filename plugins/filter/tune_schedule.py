# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: how each tuning candidate is measured without breaking serving, and those that cannot be."""

from __future__ import annotations

DOCUMENTATION = r"""
name: tune_schedule
short_description: How each tuning candidate is measured - one replica alone, or the whole host - and those left out
version_added: 0.4.0
description:
  - With two replicas or more, a candidate is served on the first replica alone (C(alone) true), which the gateway
    leaves out meanwhile, while the others serve on. A candidate that changes the replicas themselves (the other
    layout) needs every GPU at once - left out, with the reason, unless C(tune_allow_downtime).
  - With one replica, or with C(tune_allow_downtime), every candidate is served on the whole host (C(alone) false).
  - Logic in C(module_utils/tune.py).
options:
  _input:
    description: The candidates kept (vllm_service's C(vllm_service_tuning.candidates)), each with its C(plan).
    type: list
    elements: dict
    required: true
  plan:
    description: The plan the host serves now (C(vllm_service_plan)).
    type: dict
    required: true
  allow_downtime:
    description: C(tune_allow_downtime).
    type: bool
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Schedule the candidates
  ansible.builtin.set_fact:
    __schedule: "{{ vllm_service_tuning.candidates | llmhost.vllm.tune_schedule(vllm_service_plan, false) }}"
"""

RETURN = r"""
_value:
  description: C(measured) (the candidates, each with C(alone)) and C(skipped) (name to the reason).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import tune
from ansible_collections.llmhost.vllm.plugins.module_utils.value_checks import is_on


def tune_schedule(candidates, plan, allow_downtime):
    measured, skipped = tune.schedule(list(candidates), dict(plan), is_on(allow_downtime))
    return {"measured": measured, "skipped": skipped}


class FilterModule:
    def filters(self):
        return {"tune_schedule": tune_schedule}
