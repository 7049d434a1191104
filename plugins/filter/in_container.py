# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: whether the facts describe a container that runs the host's kernel."""

from __future__ import annotations

DOCUMENTATION = r"""
name: in_container
short_description: Whether Ansible's facts describe a container guest, which runs the host's kernel
version_added: 0.1.0
description:
  - True when C(virtualization_role) is C(guest) and C(virtualization_type) is a container type (docker, podman,
    container, containerd, lxc, systemd-nspawn, openvz). The kernel, nvidia_driver and system_tuning roles then leave
    the kernel, its modules, the initramfs and the bootloader alone.
  - The one place this is decided (logic in C(module_utils/virtualization.py)).
options:
  _input:
    description: C(ansible_facts) (needs the C(virtual) subset).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Leave the kernel alone in a container
  ansible.builtin.set_fact:
    __kernel_in_container: "{{ ansible_facts | llmhost.vllm.in_container }}"
"""

RETURN = r"""
_value:
  description: True in a container guest.
  type: bool
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.virtualization import in_container


class FilterModule:
    """llmhost.vllm host filters."""

    def filters(self):
        return {"in_container": in_container}
