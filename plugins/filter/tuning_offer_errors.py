# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: tuning wishes the command line or the host contradicts."""

from __future__ import annotations

DOCUMENTATION = r"""
name: tuning_offer_errors
short_description: Refuse a THP mode, CPU governor or platform profile the command line or the host contradicts
version_added: 0.1.0
description:
  - The THP mode against C(transparent_hugepage=) on the command line; the CPU governor against cpufreq's list; the
    ACPI platform profile against the firmware's choices. A host that offers no list is not refused.
  - Logic in C(module_utils/tuning.py).
options:
  _input:
    description: I(system_tuning_thp).
    type: str
    required: true
  cmdline:
    description: The command line asked for.
    type: list
    elements: str
    required: true
  governor:
    description: I(system_tuning_cpu_governor).
    type: str
    required: true
  profile:
    description: I(system_tuning_platform_profile).
    type: str
    required: true
  numa:
    description: C(ansible_facts.numa) (module C(numa_facts)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse wishes the host contradicts
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ 'never' | llmhost.vllm.tuning_offer_errors([], 'performance', '', ansible_facts.numa) }}"
"""

RETURN = r"""
_value:
  description: One sentence per contradiction.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.tuning import offer_errors
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def tuning_offer_errors(thp, cmdline, governor, profile, numa):
    return offer_errors(str(thp or ""), plain(cmdline), str(governor or ""), str(profile or ""), plain(numa))


class FilterModule:
    """llmhost.vllm tuning filters."""

    def filters(self):
        return {"tuning_offer_errors": tuning_offer_errors}
