#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_facts
short_description: NVIDIA GPU, PCIe, NVLink and P2P topology as facts
version_added: 0.1.0
description:
  - Sets C(ansible_facts.gpu_topology) from the best source available, each degrading to the next (in this order)
    NVML through the C(pynvml) import (PyPI C(nvidia-ml-py), or the deprecated C(pynvml) package),
    then C(nvidia-smi)'s machine interfaces (C(--query-gpu) CSV, C(topo -m), C(topo -p2p r)),
    then sysfs and procfs alone (NVIDIA PCI functions of class 0x0300/0x0302 and C(/proc/driver/nvidia)).
  - Sources are merged per GPU by PCI address; a field one source lacks is taken from the next.
    The CLI is only run when NVML left something unknown, which keeps the module fast.
  - Links come from C(nvidia-smi topo -m) when it runs, because NVML's common-ancestor call reports
    a host bridge between NVLink-joined GPUs; NVML's NVLink state and remote device are used otherwise.
  - Never fails for want of a GPU, a driver or a permission; it reports C(source=none) or a lower source
    and says why in C(warnings). Problems it finds on the host (a GPU that fell off the bus, a driver/library
    mismatch) go to C(errors) and do not fail the module either.
  - C(pcie.downgraded) is true when the link runs narrower than its maximum width. A lower link
    generation than the maximum is not flagged, because GPUs drop their link speed when idle.
options:
  root:
    description:
      - Filesystem root under which C(/sys) and C(/proc) are read. With anything but C(/), only sysfs and
        procfs are used (NVML and nvidia-smi describe the running host); this inspects a mounted image or a capture.
    type: path
    default: /
extends_documentation_fragment:
  - llmhost.vllm.read_only
  - llmhost.vllm.read_only.facts
  - llmhost.vllm.gpu_sources
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Read the GPU topology
  llmhost.vllm.gpu_facts:

- name: Build for the GPUs present
  ansible.builtin.debug:
    msg: "TORCH_CUDA_ARCH_LIST={{ ansible_facts.gpu_topology.arch_list }}"

- name: Inspect a mounted image's sysfs capture
  llmhost.vllm.gpu_facts:
    root: /mnt/capture
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpu_topology:
      description: The GPU topology.
      returned: always
      type: dict
      contains:
        source:
          description: The best source that named the GPUs, one of C(nvml), C(nvidia-smi), C(sysfs), C(none).
          type: str
          sample: nvml
        driver:
          description: Driver version, the CUDA version the driver supports, and whether the kernel module is loaded.
          type: dict
          sample: {version: "580.159.04", cuda_version: "13.0", loaded: true}
        gpus:
          description:
            - One entry per GPU with C(index), C(name), C(uuid), C(pci_bus_id) (lowercase, 4-digit domain),
              C(compute_capability), C(memory_total_mib), C(numa_node) (null when unknown), C(cpu_affinity) (a cpulist),
              C(pcie) (C(gen_current), C(gen_max), C(width_current), C(width_max), C(downgraded)), C(persistence_mode),
              C(power_limit_w), C(power_limit_min_w), C(power_limit_max_w).
          type: list
          elements: dict
        links:
          description: Map C("i,j") (i < j) to the C(nvidia-smi topo -m) legend code (SYS, NODE, PHB, PXB, PIX, NV<n>).
          type: dict
          sample: {"0,1": "PHB"}
        p2p:
          description: Map C("i,j") to the C(topo -p2p r) legend code (OK, CNS, GNS, TNS, NS, DR, U).
          type: dict
          sample: {"0,1": "NS"}
        arch_list:
          description: TORCH_CUDA_ARCH_LIST for the GPUs present (unique compute capabilities, ascending, C(;)-separated).
          type: str
          sample: "8.9"
        arch_list_source:
          description:
            - Where the compute capabilities of the arch list came from, best first, C(+)-joined. C(nvml) and
              C(nvidia-smi) read the driver; C(pci-id table) looked up the GPUs' PCI device ids from sysfs in the
              collection's table (plugins/module_utils/pci_ids.py, built from the PCI ID Repository and NVIDIA's
              compute capability list), which works on a fresh host before its driver is loaded.
            - Null when no GPU's compute capability is known.
          type: str
          sample: "pci-id table"
        warnings:
          description: Plain sentences about the topology and about sources that were not available.
          type: list
          elements: str
        errors:
          description: Plain sentences about problems found on the host (lost GPUs, version mismatches).
          type: list
          elements: str
"""


from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import smi_command
from ansible_collections.llmhost.vllm.plugins.module_utils.gpu_sources import gather


def main():
    module = AnsibleModule(
        argument_spec=dict(root=dict(type="path", default="/"), **smi_command.GPU_SOURCE_ARGS),
        supports_check_mode=True,
    )
    p = module.params
    smi, note = smi_command.find(module, p["nvidia_smi"])
    notes = [note] if note else []
    try:
        fact = gather(root=p["root"], run=smi_command.runner(module), nvidia_smi=smi, use_nvml=p["use_nvml"],
                      notes=notes)
    except Exception as e:  # pylint: disable=broad-except  # facts must never take a play down
        fact = {"source": "none", "driver": {"version": None, "cuda_version": None, "loaded": False}, "gpus": [],
                "links": {}, "p2p": {}, "arch_list": None, "arch_list_source": None, "warnings": [],
                "errors": ["gpu_facts could not read this host: %s: %s" % (type(e).__name__, e)]}
    module.exit_json(changed=False, ansible_facts={"gpu_topology": fact})


if __name__ == "__main__":
    main()
