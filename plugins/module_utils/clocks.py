# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU clocks and power: reading them (gpu_clock_info) and deciding changes (gpu_clocks).

Pure functions over NVML dumps (module_utils.nvml) and nvidia-smi CSV rows. The setter's
decisions (validate, compare with the recorded state, list the actions) live here too, so
they are unit-tested without a GPU; the module only executes the actions.
"""

from __future__ import annotations

import re

from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils import pci

SMI_CLOCK_FIELDS = ("index", "uuid", "pci.bus_id", "name", "clocks.current.graphics", "clocks.current.sm",
                    "clocks.current.memory", "clocks.max.graphics", "clocks.max.sm", "clocks.max.memory",
                    "clocks.applications.graphics", "clocks.applications.memory",
                    "clocks.default_applications.graphics", "clocks.default_applications.memory",
                    "clocks_event_reasons.active", "clocks_event_reasons.supported", "persistence_mode",
                    "power.draw", "power.limit", "power.default_limit", "power.min_limit", "power.max_limit",
                    "temperature.gpu", "pstate")
# Before driver 535 the event reasons were called throttle reasons.
LEGACY_FIELD_NAMES = {"clocks_event_reasons.active": "clocks_throttle_reasons.active",
                      "clocks_event_reasons.supported": "clocks_throttle_reasons.supported"}
_ERR_STATUS = {"NVMLError_NotSupported": "not_supported", "NVMLError_NoPermission": "no_permission",
               "NVMLError_FunctionNotFound": "not_supported", "AttributeError": "not_supported"}


def _status(entry):
    if nv.err(entry):
        return _ERR_STATUS.get(nv.err(entry), "error")
    return "ok" if isinstance(entry, dict) and "ok" in entry else "unknown"


def info_from_nvml(dump):
    """Per-GPU clock, power and thermal state from an NVML dump collected with clocks=True."""
    out = []
    for dev in (dump or {}).get("devices") or []:
        if nv.err(dev.get("handle")):
            continue
        app = dev.get("appclock_graphics")
        limit_min, limit_max = nv.power_constraints_w(dev)
        pmode = nv.ok(dev.get("nvmlDeviceGetPersistenceMode"))
        supported_gr = nv.ok(dev.get("supported_graphics_clocks_at_max_mem")) or []
        out.append(dict(nv.device_identity(dev), **{
            "clocks_mhz": dict((c, {"current": nv.ok(dev.get("clock_" + k)), "max": nv.ok(dev.get("maxclock_" + k))})
                               for c, k in (("graphics", "graphics"), ("sm", "sm"), ("memory", "mem"))),
            "applications_clocks": {
                "status": _status(app),
                "graphics_mhz": nv.ok(app),
                "memory_mhz": nv.ok(dev.get("appclock_mem")),
                "default_graphics_mhz": nv.ok(dev.get("defappclock_graphics")),
                "default_memory_mhz": nv.ok(dev.get("defappclock_mem")),
            },
            "supported_clocks": {
                "memory_mhz": sorted(nv.ok(dev.get("nvmlDeviceGetSupportedMemoryClocks")) or [], reverse=True),
                "graphics_mhz_at_max_memory": sorted(supported_gr, reverse=True),
                "graphics_min_mhz": min(supported_gr) if supported_gr else None,
                "graphics_max_mhz": max(supported_gr) if supported_gr else nv.ok(dev.get("maxclock_graphics")),
            },
            "event_reasons": {
                "active": nv.decode_event_reasons(nv.ok(dev.get("nvmlDeviceGetCurrentClocksEventReasons"),
                                                        nv.ok(dev.get("nvmlDeviceGetCurrentClocksThrottleReasons")))),
                "supported": nv.decode_event_reasons(nv.ok(dev.get("nvmlDeviceGetSupportedClocksEventReasons"))),
            },
            "persistence_mode": bool(pmode) if pmode is not None else None,
            "power": {
                "draw_w": nv.watts(nv.ok(dev.get("nvmlDeviceGetPowerUsage"))),
                "limit_w": nv.watts(nv.ok(dev.get("nvmlDeviceGetPowerManagementLimit"))),
                "default_limit_w": nv.watts(nv.ok(dev.get("nvmlDeviceGetPowerManagementDefaultLimit"))),
                "min_limit_w": limit_min,
                "max_limit_w": limit_max,
            },
            "temperature_c": nv.ok(dev.get("temperature")),
            "pstate": "P%s" % nv.ok(dev.get("nvmlDeviceGetPerformanceState")) if nv.ok(dev.get("nvmlDeviceGetPerformanceState")) is not None else None,
        }))
    return out


def _app_status(value):
    kind = smi.placeholder(value) if value is not None else "na"
    return "ok" if kind is None else kind


def info_from_smi(rows, supported=None):
    """The same shape from `--query-gpu=SMI_CLOCK_FIELDS` rows (kept placeholders) and supported clocks."""
    out = []
    for row in rows or []:
        def num(field):
            v = row.get(field)
            return None if v is None or smi.placeholder(v) else smi.number(v)
        bus = pci.bus_id(row.get("pci.bus_id"))
        sup = (supported or {}).get(row.get("uuid")) or (supported or {}).get(bus) or {}
        gr = sup.get("graphics_mhz_at_max_memory") or []
        app_gr = row.get("clocks.applications.graphics")
        pmode = row.get("persistence_mode")
        active = row.get("clocks_event_reasons.active") or row.get("clocks_throttle_reasons.active")
        sup_mask = row.get("clocks_event_reasons.supported") or row.get("clocks_throttle_reasons.supported")
        out.append({
            "index": num("index"),
            "uuid": row.get("uuid"),
            "pci_bus_id": bus,
            "name": row.get("name"),
            "clocks_mhz": dict((c, {"current": num("clocks.current." + c), "max": num("clocks.max." + c)})
                               for c in ("graphics", "sm", "memory")),
            "applications_clocks": {
                "status": _app_status(app_gr),
                "graphics_mhz": num("clocks.applications.graphics"),
                "memory_mhz": num("clocks.applications.memory"),
                "default_graphics_mhz": num("clocks.default_applications.graphics"),
                "default_memory_mhz": num("clocks.default_applications.memory"),
            },
            "supported_clocks": {
                "memory_mhz": sup.get("memory_mhz") or [],
                "graphics_mhz_at_max_memory": gr,
                "graphics_min_mhz": min(gr) if gr else None,
                "graphics_max_mhz": max(gr) if gr else num("clocks.max.graphics"),
            },
            "event_reasons": {
                "active": nv.decode_event_reasons(active) if active and not smi.placeholder(active) else None,
                "supported": nv.decode_event_reasons(sup_mask) if sup_mask and not smi.placeholder(sup_mask) else None,
            },
            "persistence_mode": {"Enabled": True, "Disabled": False}.get(pmode),
            "power": {"draw_w": num("power.draw"), "limit_w": num("power.limit"), "default_limit_w": num("power.default_limit"),
                      "min_limit_w": num("power.min_limit"), "max_limit_w": num("power.max_limit")},
            "temperature_c": num("temperature.gpu"),
            "pstate": row.get("pstate") if row.get("pstate") and not smi.placeholder(row.get("pstate")) else None,
        })
    return out


def parse_supported_clocks(text):
    """`--query-supported-clocks=gpu_uuid,memory,graphics --format=csv,noheader,nounits` -> {uuid: {...}}."""
    per = {}
    for row in smi.parse_query_csv(text, ("gpu_uuid", "memory", "graphics")):
        mem, gr = smi.number(row.get("memory")), smi.number(row.get("graphics"))
        if row.get("gpu_uuid") is None or mem is None or gr is None:
            continue
        per.setdefault(row["gpu_uuid"], {}).setdefault(mem, []).append(gr)
    out = {}
    for uuid, table in per.items():
        top = max(table)
        out[uuid] = {"memory_mhz": sorted(table, reverse=True), "graphics_mhz_at_max_memory": sorted(table[top], reverse=True)}
    return out


# --------------------------------------------------------------------------- setting clocks
def parse_range(value, name):
    """``"2100"``, ``2100``, ``"210,2100"``, ``[210, 2100]`` -> (min, max); None stays None. Raises ValueError."""
    if value is None or value == "":
        return None
    if isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        parts = [p for p in re.split(r"\s*,\s*", str(value).strip()) if p != ""]
    try:
        nums = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise ValueError("%s=%r: give one clock in MHz (e.g. 2100) or min,max (e.g. 210,2100)" % (name, value))
    if len(nums) == 1:
        nums = nums * 2
    if len(nums) != 2 or nums[0] <= 0 or nums[0] > nums[1]:
        raise ValueError("%s=%r: give one clock in MHz or min,max with 0 < min <= max" % (name, value))
    return tuple(nums)


def select_gpus(infos, wanted):
    """GPUs chosen by index or UUID (all when ``wanted`` is empty); raises ValueError on unknown ones."""
    if not wanted:
        return list(infos)
    chosen, unknown = [], []
    for w in wanted:
        hit = [g for g in infos if str(g.get("index")) == str(w) or (g.get("uuid") or "").lower() == str(w).lower()]
        if hit:
            chosen.extend(h for h in hit if h not in chosen)
        else:
            unknown.append(str(w))
    if unknown:
        raise ValueError("gpus: %s not found; present: %s" % (", ".join(unknown), ", ".join(
            "%s (%s)" % (g.get("index"), g.get("uuid")) for g in infos) or "no GPU"))
    return chosen


def validate(gpu, graphics, memory, power_w):
    """Problems with the wanted settings on this GPU, as sentences (empty when all is valid)."""
    problems = []
    sup = gpu.get("supported_clocks") or {}
    gname = "GPU %s (%s)" % (gpu.get("index"), gpu.get("name") or gpu.get("uuid"))
    if graphics:
        lo = sup.get("graphics_min_mhz")
        hi = sup.get("graphics_max_mhz") or (gpu.get("clocks_mhz") or {}).get("graphics", {}).get("max")
        if hi is None:
            problems.append("graphics_clocks: %s does not report its supported graphics clocks" % gname)
        elif graphics[1] > hi or (lo is not None and graphics[0] < lo):
            problems.append("graphics_clocks=%d,%d is outside %s's supported range %s-%d MHz"
                            % (graphics[0], graphics[1], gname, lo if lo is not None else "?", hi))
    if memory:
        mems = sup.get("memory_mhz") or []
        if not mems:
            problems.append("memory_clocks: %s does not report its supported memory clocks" % gname)
        elif memory[0] < min(mems) or memory[1] > max(mems):
            problems.append("memory_clocks=%d,%d is outside %s's supported memory clocks %s MHz"
                            % (memory[0], memory[1], gname, ", ".join(str(m) for m in mems)))
    if power_w is not None:
        p = gpu.get("power") or {}
        lo, hi = p.get("min_limit_w"), p.get("max_limit_w")
        if lo is None or hi is None:
            problems.append("power_limit: %s does not report its power limit constraints" % gname)
        elif not lo <= power_w <= hi:
            problems.append("power_limit=%s W is outside %s's constraints %s-%s W" % (power_w, gname, lo, hi))
    return problems


def plan(gpu, state, boot_id, graphics, memory, power_w, reset):
    """Actions that bring one GPU to the wanted settings.

    NVML cannot read locked clocks back, so what was locked is taken from ``state`` (the
    module's state file entry for this GPU), valid only within the boot it was written in:
    a reboot or driver reload clears locked clocks. The power limit is read back live.
    Returns (actions, new_state): actions are tuples such as ("lock_graphics", min, max).
    """
    state = state if state and state.get("boot_id") == boot_id else {}
    actions = []
    new = {"boot_id": boot_id}
    if reset:
        if state.get("graphics"):
            actions.append(("reset_graphics",))
        if state.get("memory"):
            actions.append(("reset_memory",))
        if state.get("power_w") is not None and (gpu.get("power") or {}).get("default_limit_w") is not None:
            current = (gpu.get("power") or {}).get("limit_w")
            if current != gpu["power"]["default_limit_w"]:
                actions.append(("power", gpu["power"]["default_limit_w"]))
        return actions, {}
    if graphics:
        new["graphics"] = list(graphics)
        if state.get("graphics") != list(graphics):
            actions.append(("lock_graphics",) + tuple(graphics))
    elif state.get("graphics"):
        new["graphics"] = state["graphics"]
    if memory:
        new["memory"] = list(memory)
        if state.get("memory") != list(memory):
            actions.append(("lock_memory",) + tuple(memory))
    elif state.get("memory"):
        new["memory"] = state["memory"]
    if power_w is not None:
        new["power_w"] = power_w
        current = (gpu.get("power") or {}).get("limit_w")
        if current is None or abs(current - power_w) > 0.5:
            actions.append(("power", power_w))
    elif state.get("power_w") is not None:
        new["power_w"] = state["power_w"]
    return actions, new


def apply_nvml(pynvml, handle, actions):
    """Execute plan() actions on one GPU through NVML. Raises the NVML error of the first failure."""
    for action in actions:
        kind = action[0]
        if kind == "lock_graphics":
            pynvml.nvmlDeviceSetGpuLockedClocks(handle, action[1], action[2])
        elif kind == "reset_graphics":
            pynvml.nvmlDeviceResetGpuLockedClocks(handle)
        elif kind == "lock_memory":
            pynvml.nvmlDeviceSetMemoryLockedClocks(handle, action[1], action[2])
        elif kind == "reset_memory":
            pynvml.nvmlDeviceResetMemoryLockedClocks(handle)
        elif kind == "power":
            pynvml.nvmlDeviceSetPowerManagementLimit(handle, int(round(action[1] * 1000)))
        else:
            raise ValueError("unknown action %r" % (action,))


def smi_argv(nvidia_smi, index, action):
    """The nvidia-smi command line for one plan() action (used when NVML is not importable)."""
    kind = action[0]
    base = [nvidia_smi, "-i", str(index)]
    if kind == "lock_graphics":
        return base + ["--lock-gpu-clocks=%d,%d" % (action[1], action[2])]
    if kind == "reset_graphics":
        return base + ["--reset-gpu-clocks"]
    if kind == "lock_memory":
        return base + ["--lock-memory-clocks=%d,%d" % (action[1], action[2])]
    if kind == "reset_memory":
        return base + ["--reset-memory-clocks"]
    if kind == "power":
        return base + ["--power-limit=%s" % action[1]]
    raise ValueError("unknown action %r" % (action,))
