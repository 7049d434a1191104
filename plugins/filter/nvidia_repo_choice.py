# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: NVIDIA's repository for a host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: nvidia_repo_choice
short_description: NVIDIA's CUDA repository URL and key for a host, and why apt could not use them
version_added: 1.0.0
description:
  - The profile's repository flavour for the host's distribution release (C(ubuntu2204)), the URL (the user's mirror,
    else NVIDIA's for that flavour) ending in one C(/), and the key's URL (given, else the repository's key file).
  - C(errors) names a distribution release the profile has no flavour for (without a mirror), and URLs that are not
    C(http://), C(https://) or C(file://).
  - Logic in C(module_utils/apt_pins.py).
options:
  _input:
    description: C(llmhost_stack_nvidia_repo) (what llmhost_stack publishes).
    type: dict
    required: true
  host:
    description: C(distribution), C(distribution_version), C(distribution_major_version) (from C(ansible_facts)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle the repository
  ansible.builtin.set_fact:
    __repo: "{{ llmhost_stack_nvidia_repo | llmhost.vllm.nvidia_repo_choice(__host) }}"
"""

RETURN = r"""
_value:
  description: C(dist), C(url), C(key_source), C(errors).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.apt_pins import nvidia_repo
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def nvidia_repo_choice(repo, host):
    return nvidia_repo(plain(repo), {k: str(v) for k, v in plain(host).items()})


class FilterModule:
    """llmhost.vllm repository filters."""

    def filters(self):
        return {"nvidia_repo_choice": nvidia_repo_choice}
