#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_clock_info
short_description: Read NVIDIA GPU clocks, clock event (throttle) reasons, power and temperature
version_added: 0.1.0
description:
  - Per GPU, reports current and maximum graphics, SM and memory clocks; application clocks and their defaults
    where the GPU supports them; the supported memory clocks and the graphics clocks supported at the highest
    memory clock; the active and supported clock event reasons (formerly throttle reasons) decoded to names;
    persistence mode; power draw, limit and limit constraints; temperature and performance state.
  - Reads NVML through the C(pynvml) import first, then C(nvidia-smi --query-gpu) and C(--query-supported-clocks).
  - GeForce GPUs report application clocks as deprecated or not supported; that is reported in
    C(applications_clocks.status), not treated as a failure.
  - Without a GPU or driver it returns an empty list and says why in C(notes).
options:
  nvidia_smi:
    description: Path of the C(nvidia-smi) binary; found in C(PATH) when not given.
    type: path
  use_nvml:
    description: Try NVML first.
    type: bool
    default: true
extends_documentation_fragment:
  - llmhost.vllm.read_only
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Read the clocks
  llmhost.vllm.gpu_clock_info:
  register: clocks

- name: Show why GPU 0 runs slow
  ansible.builtin.debug:
    msg: "{{ clocks.gpus[0].event_reasons.active }}"
"""

RETURN = r"""
source:
  description: C(nvml), C(nvidia-smi) or C(none).
  returned: always
  type: str
gpus:
  description:
    - One entry per GPU with C(index), C(uuid), C(pci_bus_id), C(name), C(clocks_mhz) (C(graphics)/C(sm)/C(memory),
      each C(current) and C(max)), C(applications_clocks) (C(status) ok, deprecated, not_supported, no_permission or error,
      and the clocks), C(supported_clocks) (C(memory_mhz), C(graphics_mhz_at_max_memory), C(graphics_min_mhz),
      C(graphics_max_mhz)), C(event_reasons) (C(active) and C(supported), lists of names), C(persistence_mode),
      C(power) (C(draw_w), C(limit_w), C(default_limit_w), C(min_limit_w), C(max_limit_w)), C(temperature_c), C(pstate).
  returned: always
  type: list
  elements: dict
notes:
  description: Sources that were not available, as sentences.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import smi_command
from ansible_collections.llmhost.vllm.plugins.module_utils.clock_sources import read_clock_info


def main():
    module = AnsibleModule(
        argument_spec=dict(nvidia_smi=dict(type="path"), use_nvml=dict(type="bool", default=True)),
        supports_check_mode=True,
    )
    smi, note = smi_command.find(module, module.params["nvidia_smi"])
    try:
        source, gpus, warnings = read_clock_info(run=smi_command.runner(module), nvidia_smi=smi,
                                                 use_nvml=module.params["use_nvml"])
    except Exception as e:  # pylint: disable=broad-except  # a read-only report must not take a play down
        source, gpus, warnings = "none", [], ["gpu_clock_info could not read this host: %s: %s" % (type(e).__name__, e)]
    module.exit_json(changed=False, source=source, gpus=gpus, notes=([note] if note else []) + warnings)


if __name__ == "__main__":
    main()
