# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the versions a repository offers, from its probe."""

from __future__ import annotations

DOCUMENTATION = r"""
name: repo_versions
short_description: The versions NVIDIA's repository offers per package, or them as one phrase
version_added: 0.1.0
description:
  - From the probe's C(package version) lines, a mapping of each package to its versions, in their order.
  - With I(offers), the packages named there as one phrase, such as C(pkg 1.2-1, 1.1-1; other nothing;).
  - Logic in C(module_utils/apt_pins.py).
options:
  _input:
    description: The probe's lines, or (with I(offers)) the versions found.
    type: raw
    required: true
  offers:
    description: Packages to say the versions of.
    type: list
    elements: str
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: The versions found
  ansible.builtin.set_fact:
    __versions: "{{ ['nvidia-driver-cuda 580.95.05-1'] | llmhost.vllm.repo_versions }}"
"""

RETURN = r"""
_value:
  description: The versions per package, or the phrase.
  type: raw
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.apt_pins import repo_offers, repo_versions as _versions
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def repo_versions(data, offers=None):
    if offers is not None:
        return repo_offers(plain(offers), plain(data))
    return _versions(plain(data))


class FilterModule:
    """llmhost.vllm repository filters."""

    def filters(self):
        return {"repo_versions": repo_versions}
