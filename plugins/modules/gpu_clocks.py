#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_clocks
short_description: Lock NVIDIA GPU clocks and set power limits, idempotently
version_added: 0.1.0
description:
  - Locks graphics clocks (C(nvmlDeviceSetGpuLockedClocks), what C(nvidia-smi -lgc) does) and memory clocks
    (C(nvmlDeviceSetMemoryLockedClocks), C(-lmc)), and sets the power limit (C(-pl)), per GPU selected by index or
    UUID; C(state=reset) undoes what this module set.
  - Every wanted value is checked against the GPU's supported ranges (supported graphics and memory clocks,
    power limit constraints) for every selected GPU before anything is changed; one bad value changes nothing.
  - NVML cannot read locked clocks back. Idempotence therefore comes from a state file (C(state_file), by default
    C(/var/lib/llmhost/gpu_clocks.json)) recording what was set, per GPU UUID, together with the boot id; after a
    reboot or driver reload (which clear locked clocks) the record no longer counts and the clocks are set again.
    The power limit is read back from the GPU and compared directly.
  - Locked clocks and power limits do not survive a reboot; the C(gpu_tuning) role installs a boot-time unit that
    reapplies them.
  - Uses NVML through the C(pynvml) import, or C(nvidia-smi) when the bindings are missing. Needs root.
options:
  gpus:
    description: GPU indices or UUIDs to act on; all GPUs when empty.
    type: list
    elements: str
    default: []
  graphics_clocks:
    description: Locked graphics clock in MHz, as one value (C(2100), min = max) or C(min,max). Omit to leave as is.
    type: raw
  memory_clocks:
    description: Locked memory clock in MHz, one value or C(min,max). Omit to leave as is.
    type: raw
  power_limit:
    description: Power limit in watts. Omit to leave as is.
    type: float
  state:
    description: C(present) applies the settings; C(reset) returns what this module set to the defaults.
    type: str
    choices: [present, reset]
    default: present
  state_file:
    description: Where what was set is recorded (written atomically, mode 0644).
    type: path
    default: /var/lib/llmhost/gpu_clocks.json
  nvidia_smi:
    description: Path of C(nvidia-smi), used when NVML bindings are missing; found in C(PATH) when not given.
    type: path
attributes:
  check_mode:
    support: full
    description: Validates and reports what would change without changing anything.
  diff_mode:
    support: full
    description: Shows the recorded settings per GPU before and after.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Lock graphics clocks at 2100 MHz on every GPU (the seed's nvidia-smi -lgc 2100)
  llmhost.vllm.gpu_clocks:
    graphics_clocks: 2100

- name: Cap GPU 1 at 300 W
  llmhost.vllm.gpu_clocks:
    gpus: ["1"]
    power_limit: 300

- name: Undo
  llmhost.vllm.gpu_clocks:
    state: reset
"""

RETURN = r"""
gpus:
  description: Per GPU acted on, C(index), C(uuid) and the C(actions) taken (or that would be taken in check mode).
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "uuid": "GPU-...", "actions": [["lock_graphics", 2100, 2100]]}]
"""

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import clocks
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils import smi_command
from ansible_collections.llmhost.vllm.plugins.module_utils.clock_sources import read_clock_info


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except (OSError, IOError):
        return None


def _load_state(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, IOError, ValueError):
        return {}


def _write_state(module, path, data):
    """Write the state file through a temporary file in its folder and Ansible's atomic_move."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(prefix=".gpu_clocks.", dir=directory)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    module.atomic_move(tmp, path)
    module.set_mode_if_different(path, "0644", False)


def _apply_smi(run, smi_path, index, actions):
    """plan() actions through nvidia-smi; raises on the first that fails, so that the caller records what was done."""
    for action in actions:
        argv = clocks.smi_argv(smi_path, index, action)
        rc, out, err = run(argv)
        if rc != 0:
            raise RuntimeError("%s exited %d: %s" % (" ".join(argv[1:]), rc, (err or out).strip()[:300]))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gpus=dict(type="list", elements="str", default=[]),
            graphics_clocks=dict(type="raw"),
            memory_clocks=dict(type="raw"),
            power_limit=dict(type="float"),
            state=dict(type="str", choices=["present", "reset"], default="present"),
            state_file=dict(type="path", default="/var/lib/llmhost/gpu_clocks.json"),
            nvidia_smi=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        graphics = clocks.parse_range(p["graphics_clocks"], "graphics_clocks")
        memory = clocks.parse_range(p["memory_clocks"], "memory_clocks")
    except ValueError as e:
        module.fail_json(msg=str(e))
    reset = p["state"] == "reset"
    if not reset and not (graphics or memory or p["power_limit"] is not None):
        module.fail_json(msg="state=present needs at least one of graphics_clocks, memory_clocks, power_limit")

    smi_path, note = smi_command.find(module, p["nvidia_smi"])
    run = smi_command.runner(module)
    pynvml = nv.import_pynvml()[0]
    source, infos, notes = read_clock_info(run=run, nvidia_smi=smi_path, pynvml=pynvml)
    notes = ([note] if note else []) + notes
    if not infos:
        module.fail_json(msg="no GPU to set clocks on: %s" % " ".join(notes))
    try:
        chosen = clocks.select_gpus(infos, p["gpus"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    problems = []
    if not reset:
        for g in chosen:
            problems.extend(clocks.validate(g, graphics, memory, p["power_limit"]))
    if problems:
        module.fail_json(msg="nothing was changed: " + "; ".join(problems))

    boot_id = _boot_id()
    state = _load_state(p["state_file"])
    new_state = dict(state)
    results = []
    for g in chosen:
        actions, entry = clocks.plan(g, state.get(g["uuid"]), boot_id, graphics, memory, p["power_limit"], reset)
        results.append({"index": g["index"], "uuid": g["uuid"], "actions": [list(a) for a in actions]})
        if entry:
            new_state[g["uuid"]] = entry
        else:
            new_state.pop(g["uuid"], None)
    changed = any(r["actions"] for r in results) or new_state != state
    diff = {"before": json.dumps(state, indent=2, sort_keys=True) + "\n",
            "after": json.dumps(new_state, indent=2, sort_keys=True) + "\n",
            "before_header": p["state_file"], "after_header": p["state_file"]}
    if module.check_mode or not changed:
        module.exit_json(changed=changed, gpus=results, diff=diff)

    for g, r in zip(chosen, results):
        if not r["actions"]:
            continue
        try:
            if source == "nvml" and pynvml is not None:
                pynvml.nvmlInit()
                try:
                    handle = pynvml.nvmlDeviceGetHandleByUUID(g["uuid"])
                    clocks.apply_nvml(pynvml, handle, [tuple(a) for a in r["actions"]])
                finally:
                    pynvml.nvmlShutdown()
            else:
                _apply_smi(run, smi_path, g["index"], r["actions"])
        except Exception as e:  # pylint: disable=broad-except  # NVMLError_* carry the reason
            _write_state(module, p["state_file"], _partial(state, new_state, chosen, results, g))
            hint = " (run as root)" if "Permission" in type(e).__name__ or "ermission" in str(e) else ""
            module.fail_json(msg="GPU %s: %s failed: %s: %s%s" % (g["index"], r["actions"], type(e).__name__, e, hint),
                             gpus=results)
    _write_state(module, p["state_file"], new_state)
    module.exit_json(changed=True, gpus=results, diff=diff)


def _partial(state, new_state, chosen, results, failed):
    """State to record when GPU ``failed`` broke: the GPUs before it were done, it and later ones were not."""
    out = dict(state)
    for g in chosen:
        if g is failed:
            break
        if g["uuid"] in new_state:
            out[g["uuid"]] = new_state[g["uuid"]]
        else:
            out.pop(g["uuid"], None)
    return out


if __name__ == "__main__":
    main()
