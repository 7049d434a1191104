# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the packages a role held, from the records it wrote."""

from __future__ import annotations

DOCUMENTATION = r"""
name: held_packages
short_description: The packages a role held, read from its unattended-upgrades files
version_added: 0.2.0
description:
  - A role that holds packages (kernel, nvidia_driver, cuda_toolkit) writes an unattended-upgrades file whose
    C(// Held with dpkg:) line names them. This reads those lines back, so an uninstall releases exactly the holds
    the collection set and no hold of the user's.
  - Logic in C(module_utils/uninstall.py).
options:
  _input:
    description: The files' texts (an absent file as an empty string).
    type: list
    elements: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Release the holds
  ansible.builtin.dpkg_selections:
    name: "{{ item }}"
    selection: install
  loop: "{{ ['// Held with dpkg: linux-image-generic-hwe-22.04'] | llmhost.vllm.held_packages }}"
"""

RETURN = r"""
_value:
  description: Package names, once each.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.uninstall import held_packages


class FilterModule:
    """llmhost.vllm package filters."""

    def filters(self):
        return {"held_packages": held_packages}
