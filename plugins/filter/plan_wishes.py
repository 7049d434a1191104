# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the serving plan's wishes, picked by the one table of them from the role's variables."""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import wishes

DOCUMENTATION = r"""
name: plan_wishes
short_description: The serving plan's wishes from the vllm_service variables, by the table of them
version_added: 0.1.0
description:
  - Picks the C(vllm_service_*) variables that are wishes of the serving plan (C(module_utils/wishes.py), their one
    home) and hands them on without the prefix, as the module C(vllm_serving_plan) takes them. The role names no wish
    itself, so a wish added to the table reaches the plan with no change to the role's tasks.
  - Values are handed on as they are; the planner checks and converts them.
options:
  _input:
    description:
      - The role's variables, name to value (other names are left out).
      - Or a list of variable names, of which those that are wishes are returned (the names to read).
    type: raw
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Make the serving plan
  llmhost.vllm.vllm_serving_plan:
    wishes: "{{ dict(__names | zip(query('ansible.builtin.vars', *__names))) | llmhost.vllm.plan_wishes }}"
    # ...
  vars:
    __names: "{{ query('ansible.builtin.varnames', '^vllm_service_') | llmhost.vllm.plan_wishes }}"
"""

RETURN = r"""
_value:
  description: Each wish the variables hold, without the C(vllm_service_) prefix; or the names that are wishes'.
  type: raw
"""


def plan_wishes(variables):
    """{wish: value} of the variables that are wishes; a list of names gives the names that are wishes' instead."""
    if isinstance(variables, list):
        return [name for name in variables if name[len(wishes.PREFIX):] in wishes.WISHES
                and name.startswith(wishes.PREFIX)]
    return {key: variables[wishes.PREFIX + key] for key in wishes.WISHES if wishes.PREFIX + key in variables}


class FilterModule:
    def filters(self):
        return {"plan_wishes": plan_wishes}
