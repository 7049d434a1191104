# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the NVIDIA drivers on a host, and what there stops an install."""

from __future__ import annotations

DOCUMENTATION = r"""
name: nvidia_driver_found
short_description: Sort the NVIDIA driver packages a host has, and refuse what stops an install there
version_added: 1.0.0
description:
  - Installed is dpkg's C(ii), or C(hi) when held; a package at another version than the one wanted is another driver.
  - C(errors) names Secure Boot on without a key pair to sign the module, signing keys that are not on the host,
    NVIDIA's .run installer, and another driver unless I(nvidia_driver_replace).
  - Logic in C(module_utils/driver_check.py).
options:
  _input:
    description: C(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n')'s lines.
    type: list
    elements: str
    required: true
  host:
    description: >-
      C(packages), C(package_version) (as settled), C(secure_boot) (the efivar's byte, or none), C(efivar),
      C(mok_key), C(mok_cert), C(mok_missing) (the key files not on the host), C(runfile), C(replace).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Sort what is installed
  ansible.builtin.set_fact:
    __found: "{{ __dpkg.stdout_lines | llmhost.vllm.nvidia_driver_found(__host) }}"
"""

RETURN = r"""
_value:
  description: C(installed) and C(foreign) ("package version" lines), C(at_wanted), C(errors).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import driver_check
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def nvidia_driver_found(dpkg_lines, host):
    host = plain(host)
    found = driver_check.installed(plain(dpkg_lines), host["packages"], host["package_version"])
    found["errors"] = driver_check.host_errors(dict(host, foreign=found["foreign"]))
    return found


class FilterModule:
    """llmhost.vllm driver filters."""

    def filters(self):
        return {"nvidia_driver_found": nvidia_driver_found}
