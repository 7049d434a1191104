# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA PCI device id -> (name, CUDA compute capability), for a host whose driver is not loaded yet.

A fresh host has no driver before its first reboot, so neither NVML nor nvidia-smi can say what the GPUs
are; sysfs still shows each GPU's PCI vendor and device id. A source build of vLLM needs the GPUs'
compute capabilities (TORCH_CUDA_ARCH_LIST) then, so it can build in the same pass.

Built from public data:
  - the ids and the chips behind them: the PCI ID Repository (https://pci-ids.ucw.cz/, Debian package
    `pci.ids`), whose entries read like ``2684  AD102 [GeForce RTX 4090]``;
  - the compute capability of each chip family: NVIDIA's CUDA GPUs list
    (https://developer.nvidia.com/cuda-gpus) and the CUDA C Programming Guide's table of compute
    capabilities: Volta GV100 7.0, Turing TU10x 7.5, Ampere GA100 8.0 and GA10x 8.6, Ada AD10x 8.9,
    Hopper GH100 9.0, Blackwell GB202/GB203 (GeForce) 12.0.
tests/unit/plugins/module_utils/test_pci_ids.py checks every entry against the distribution's pci.ids
(name and chip family) and, for ids newer than that file, against a real capture of the GPU.
Not exhaustive: an id missing here gives None, and the build then asks for vllm_install_arch_list."""

from __future__ import annotations

NVIDIA_VENDOR = "0x10de"

# device id: (name, compute capability, chip)
TABLE = {
    "0x1db4": ("Tesla V100-PCIE-16GB", "7.0", "GV100"),
    "0x1db5": ("Tesla V100-SXM2-32GB", "7.0", "GV100"),
    "0x1e04": ("NVIDIA GeForce RTX 2080 Ti", "7.5", "TU102"),
    "0x1eb8": ("Tesla T4", "7.5", "TU104"),
    "0x20b0": ("NVIDIA A100-SXM4-40GB", "8.0", "GA100"),
    "0x20b2": ("NVIDIA A100-SXM4-80GB", "8.0", "GA100"),
    "0x20b5": ("NVIDIA A100 80GB PCIe", "8.0", "GA100"),
    "0x20f1": ("NVIDIA A100-PCIE-40GB", "8.0", "GA100"),
    "0x2203": ("NVIDIA GeForce RTX 3090 Ti", "8.6", "GA102"),
    "0x2204": ("NVIDIA GeForce RTX 3090", "8.6", "GA102"),
    "0x2206": ("NVIDIA GeForce RTX 3080", "8.6", "GA102"),
    "0x2230": ("NVIDIA RTX A6000", "8.6", "GA102"),
    "0x2235": ("NVIDIA A40", "8.6", "GA102"),
    "0x2330": ("NVIDIA H100 80GB HBM3", "9.0", "GH100"),
    "0x2331": ("NVIDIA H100 PCIe", "9.0", "GH100"),
    "0x2335": ("NVIDIA H200", "9.0", "GH100"),
    "0x2684": ("NVIDIA GeForce RTX 4090", "8.9", "AD102"),
    "0x26b1": ("NVIDIA RTX 6000 Ada Generation", "8.9", "AD102"),
    "0x26b5": ("NVIDIA L40", "8.9", "AD102"),
    "0x2702": ("NVIDIA GeForce RTX 4080 SUPER", "8.9", "AD103"),
    "0x2704": ("NVIDIA GeForce RTX 4080", "8.9", "AD103"),
    "0x2782": ("NVIDIA GeForce RTX 4070 Ti", "8.9", "AD104"),
    "0x2786": ("NVIDIA GeForce RTX 4070", "8.9", "AD104"),
    "0x27b8": ("NVIDIA L4", "8.9", "AD104"),
    "0x2803": ("NVIDIA GeForce RTX 4060 Ti", "8.9", "AD106"),
}

# Compute capability by chip family (the letters and the generation digit of the chip's name).
FAMILY_CC = {"GV10": "7.0", "TU10": "7.5", "TU11": "7.5", "GA100": "8.0", "GA10": "8.6", "AD10": "8.9",
             "GH10": "9.0", "GB20": "12.0"}


def family_cc(chip):
    """Compute capability of a chip name such as AD102 or GA102GL; None for a family not listed."""
    for prefix in sorted(FAMILY_CC, key=len, reverse=True):
        if chip.upper().startswith(prefix):
            return FAMILY_CC[prefix]
    return None


def lookup(vendor_id, device_id):
    """(name, compute capability) of an NVIDIA GPU by its sysfs ids ("0x10de", "0x2684"); (None, None) if unknown."""
    if (vendor_id or NVIDIA_VENDOR).lower() != NVIDIA_VENDOR:
        return None, None
    entry = TABLE.get((device_id or "").lower())
    return (entry[0], entry[1]) if entry else (None, None)
