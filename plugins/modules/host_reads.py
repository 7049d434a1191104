#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: host_reads
short_description: What the host report reads, in one round trip
version_added: 0.2.0
description:
  - Reads, in one run on the host, what C(llmhost.vllm.host_report) sets against the stack profile, that is
    the GPU topology (the same collector and fact as M(llmhost.vllm.gpu_facts)), the live values of the given
    sysctl keys, the running kernel's command line and the C(python3.N) interpreters the venvs could use.
  - One module instead of five tasks; each is a round trip to the host, and the report runs at the start of every
    site run.
  - Never fails for a missing file, a missing key or a missing GPU driver; what could not be read is left out and
    said in C(notes).
options:
  sysctl:
    description:
      - Dotted sysctl keys to read from C(/proc/sys) (a C(/) inside one name part stands for a dot, as C(sysctl) writes
        it). A key the kernel does not have is left out of the answer.
    type: list
    elements: str
    default: []
  root:
    description:
      - Filesystem root under which C(/sys), C(/proc) and the Python folders are read (a mounted image or a capture).
        With anything but C(/), only sysfs and procfs describe the GPUs.
    type: path
    default: /
  python_dirs:
    description: Folders where the C(python3.N) interpreters are looked for (links count).
    type: list
    elements: path
    default: [/usr/bin, /usr/local/bin]
extends_documentation_fragment:
  - llmhost.vllm.read_only
  - llmhost.vllm.read_only.facts
  - llmhost.vllm.gpu_sources
author: llmhost.vllm maintainers (@llmhost)
seealso:
  - module: llmhost.vllm.gpu_facts
"""

EXAMPLES = r"""
- name: Read what the report needs
  llmhost.vllm.host_reads:
    sysctl: [vm.swappiness, kernel.numa_balancing]
  register: reads

- name: Show them
  ansible.builtin.debug:
    msg: "{{ reads.sysctl }} {{ reads.pythons }} {{ ansible_facts.gpu_topology.source }}"
"""

RETURN = r"""
ansible_facts:
  description: The GPU topology, as M(llmhost.vllm.gpu_facts) returns it.
  returned: always
  type: dict
  contains:
    gpu_topology:
      description: See M(llmhost.vllm.gpu_facts).
      returned: always
      type: dict
sysctl:
  description: Live value of each asked key the kernel has, whitespace made single spaces.
  returned: always
  type: dict
  sample: {vm.swappiness: "60", net.ipv4.tcp_rmem: "4096 131072 6291456"}
cmdline:
  description: The running kernel's command line (C(/proc/cmdline)); empty when it cannot be read.
  returned: always
  type: str
  sample: "BOOT_IMAGE=/vmlinuz-6.5.0-41-generic root=UUID=... ro quiet"
pythons:
  description: Versions of the C(python3.N) interpreters found in I(python_dirs), ascending.
  returned: always
  type: list
  elements: str
  sample: ["3.10", "3.11"]
notes:
  description: What could not be read, as sentences.
  returned: always
  type: list
  elements: str
"""


from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import host_reads, smi_command
from ansible_collections.llmhost.vllm.plugins.module_utils.gpu_sources import gather


def _gpus(module, notes):
    p = module.params
    smi, note = smi_command.find(module, p["nvidia_smi"])
    try:
        return gather(root=p["root"], run=smi_command.runner(module), nvidia_smi=smi, use_nvml=p["use_nvml"],
                      notes=[note] if note else [])
    except Exception as e:  # pylint: disable=broad-except  # a read must never take a play down
        notes.append("the GPUs could not be read: %s: %s" % (type(e).__name__, e))
        return {"source": "none", "driver": {"version": None, "cuda_version": None, "loaded": False}, "gpus": [],
                "links": {}, "p2p": {}, "arch_list": None, "arch_list_source": None, "warnings": [], "errors": []}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysctl=dict(type="list", elements="str", default=[]),
            python_dirs=dict(type="list", elements="path", default=["/usr/bin", "/usr/local/bin"]),
            root=dict(type="path", default="/"),
            **smi_command.GPU_SOURCE_ARGS,
        ),
        supports_check_mode=True,
    )
    root, notes = module.params["root"], []
    topology = _gpus(module, notes)
    module.exit_json(changed=False, ansible_facts={"gpu_topology": topology},
                     sysctl=host_reads.sysctl_values(root, module.params["sysctl"], notes),
                     cmdline=host_reads.cmdline(root, notes), pythons=host_reads.pythons(root, module.params["python_dirs"]),
                     notes=notes)


if __name__ == "__main__":
    main()
