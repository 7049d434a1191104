# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the kernel a host gets."""

from __future__ import annotations

DOCUMENTATION = r"""
name: kernel_choice
short_description: The kernel packages and release for a host, and why they do not fit it
version_added: 1.0.0
description:
  - The role's own I(kernel_packages) and I(kernel_release) where given, else the stack profile's for the host's
    distribution (per distribution release where the profile names packages by release).
  - C(errors) names a host without a kernel to install (not Debian's family, none in the profile, a package not named
    C(linux-*)), and a release of another distribution's flavour.
  - Logic in C(module_utils/kernel_choice.py).
options:
  _input:
    description: C(llmhost_stack_profile.kernel).
    type: dict
    required: true
  host:
    description: C(os_family), C(distribution), C(distribution_version) (from C(ansible_facts)).
    type: dict
    required: true
  own:
    description: C(kernel_packages), C(kernel_release).
    type: dict
    required: true
  profile_name:
    description: The stack profile's name, for the message.
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle the kernel
  ansible.builtin.set_fact:
    __kernel: "{{ llmhost_stack_profile.kernel | llmhost.vllm.kernel_choice(__host, __own, llmhost_stack) }}"
"""

RETURN = r"""
_value:
  description: C(packages), C(release), C(errors).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.kernel_choice import choice
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def kernel_choice(kernels, host, own, profile_name):
    return choice(plain(kernels), plain(host), plain(own), str(profile_name))


class FilterModule:
    """llmhost.vllm kernel filters."""

    def filters(self):
        return {"kernel_choice": kernel_choice}
