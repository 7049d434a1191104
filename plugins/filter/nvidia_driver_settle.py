# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the NVIDIA driver a host gets."""

from __future__ import annotations

DOCUMENTATION = r"""
name: nvidia_driver_settle
short_description: The NVIDIA driver's version and packages for a host, and why they do not fit it
version_added: 1.0.0
description:
  - The role's own I(nvidia_driver_version), I(nvidia_driver_packages), I(nvidia_driver_package_version) and
    I(nvidia_driver_pin_packages) where given, else the stack profile's for the host's distribution.
  - C(errors) names a distribution the profile has no packages for, and a version not of the form 535.129.03, outside
    the profile's branch, or that the package version does not start with.
  - Logic in C(module_utils/driver_check.py).
options:
  _input:
    description: C(llmhost_stack_profile.nvidia_driver).
    type: dict
    required: true
  distribution:
    description: C(ansible_facts.distribution).
    type: str
    required: true
  os_family:
    description: C(ansible_facts.os_family).
    type: str
    required: true
  values:
    description: The role's four variables above, by name.
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle the driver
  ansible.builtin.set_fact:
    __settled: >-
      {{ llmhost_stack_profile.nvidia_driver | llmhost.vllm.nvidia_driver_settle('Ubuntu', 'Debian', __values) }}
"""

RETURN = r"""
_value:
  description: C(version), C(packages), C(package_version), C(pin), C(errors).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import driver_check
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def nvidia_driver_settle(spec, distribution, os_family, values):
    spec, values = plain(spec), plain(values)
    settled = driver_check.settle(spec, str(distribution), values)
    settled["errors"] = driver_check.settle_errors(settled, spec, str(os_family), str(distribution),
                                                   bool(values["nvidia_driver_packages"]))
    return settled


class FilterModule:
    """llmhost.vllm driver filters."""

    def filters(self):
        return {"nvidia_driver_settle": nvidia_driver_settle}
