# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation shared by the modules that read the GPUs through module_utils/gpu_sources.py."""

from __future__ import annotations


class ModuleDocFragment:
    """The GPU sources' options: NVML first, then nvidia-smi, then sysfs."""

    DOCUMENTATION = r"""
options:
  nvidia_smi:
    description: Path of the C(nvidia-smi) binary; found in C(PATH) when not given.
    type: path
  use_nvml:
    description: Try NVML first. Set to false to use only nvidia-smi and sysfs.
    type: bool
    default: true
notes:
  - Runs with the target's system Python (3.10 or later); imports nothing beyond the standard library and,
    when present, pynvml.
"""
