#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: numa_facts
short_description: NUMA nodes, transparent huge pages and CPU frequency policy as facts
version_added: 0.1.0
description:
  - Sets C(ansible_facts.numa) from sysfs and procfs. Nothing is run and nothing is changed.
  - Reports the NUMA nodes (CPUs as a cpulist, memory in MiB, distances), online CPUs, the transparent huge page
    mode and defrag setting with their choices, C(kernel.numa_balancing), the CPU frequency governors in use
    (governor to cpulist) and available, and the ACPI C(platform_profile) with its choices where the file exists.
  - Missing files (a VM without cpufreq, a kernel without NUMA) give null or empty values and a warning, never a failure.
options:
  root:
    description: Filesystem root under which C(/sys) and C(/proc) are read (a mounted image or a capture).
    type: path
    default: /
extends_documentation_fragment:
  - llmhost.vllm.read_only
  - llmhost.vllm.read_only.facts
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Read NUMA and CPU policy
  llmhost.vllm.numa_facts:

- name: Bind only when there is more than one node
  ansible.builtin.debug:
    msg: "{{ ansible_facts.numa.node_count > 1 }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    numa:
      description: NUMA and CPU policy of the host.
      returned: always
      type: dict
      contains:
        nodes:
          description: One entry per node with C(id), C(cpus) (cpulist, null for a CPU-less node), C(memory_mib), C(distances).
          type: list
          elements: dict
        node_count:
          description: Number of NUMA nodes.
          type: int
        online_cpus:
          description: Online CPUs as a cpulist.
          type: str
          sample: "0-31"
        thp:
          description: C(enabled), C(enabled_choices), C(defrag), C(defrag_choices) of transparent huge pages.
          type: dict
        numa_balancing:
          description: Value of C(kernel.numa_balancing), null when the kernel has no such key.
          type: int
        cpufreq:
          description: C(governors) (governor in use to cpulist), C(available) (union of available governors), C(driver).
          type: dict
        platform_profile:
          description: C(current) and C(choices) of the ACPI platform profile; null when the firmware offers none.
          type: dict
        warnings:
          description: What could not be read, as sentences.
          type: list
          elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils.numa import numa_facts


def main():
    module = AnsibleModule(argument_spec=dict(root=dict(type="path", default="/")), supports_check_mode=True)
    try:
        fact = numa_facts(module.params["root"])
    except Exception as e:  # pylint: disable=broad-except  # facts must never take a play down
        fact = {"nodes": [], "node_count": 0, "online_cpus": None, "thp": {}, "numa_balancing": None, "cpufreq": {},
                "platform_profile": None, "warnings": ["numa_facts could not read this host: %s: %s" % (type(e).__name__, e)]}
    module.exit_json(changed=False, ansible_facts={"numa": fact})


if __name__ == "__main__":
    main()
