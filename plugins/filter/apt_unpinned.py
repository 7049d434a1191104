# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: package names that an apt pin does not cover."""

from __future__ import annotations

DOCUMENTATION = r"""
name: apt_unpinned
short_description: Package names that an apt preferences pin does not cover
version_added: 0.1.0
description:
  - Reads each pin entry as apt_preferences(5) reads a C(Package:) line's entries, an exact name, a glob
    (C(nvidia-*)) or a C(/regex/) (searched, not anchored), and returns the names none of them covers.
  - The internal role's packages step uses it to tell the packages a replacement purges from those of the
    same family that the same apt transaction moves to the pinned version (logic in C(module_utils/apt_pins.py)).
options:
  _input:
    description: Package names.
    type: list
    elements: str
    required: true
  patterns:
    description: The pin's entries.
    type: list
    elements: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Keep the old branch's packages to purge
  ansible.builtin.set_fact:
    purge: "{{ ['nvidia-headless-535', 'libcuda1'] | llmhost.vllm.apt_unpinned(['/^(lib)?nvidia-.*-580$/', 'libcuda1']) }}"
"""

RETURN = r"""
_value:
  description: The names no entry covers, in their order.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import apt_pins


def apt_unpinned(names, patterns):
    return apt_pins.unpinned(list(names or []), list(patterns or []))


class FilterModule:
    """llmhost.vllm filter apt_unpinned."""

    def filters(self):
        return {"apt_unpinned": apt_unpinned}
