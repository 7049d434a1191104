# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVML through the ``pynvml`` import (PyPI ``nvidia-ml-py``, or the deprecated ``pynvml``).

``collect()`` makes every NVML call the facts modules need and records each result as
``{"ok": value}`` or ``{"err": exception class name, "msg": text}``: a *dump*, the same shape
as the captures in tests/fixtures. Everything else in the collection reads dumps, so the
decisions are tested on real captures without a GPU. Nothing here raises: a missing library,
a failed init or a NotSupported call become entries in the dump.
"""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils.pci import bus_id

# Topology levels of nvmlDeviceGetTopologyCommonAncestor -> `nvidia-smi topo -m` legend codes.
TOPOLOGY_CODES = {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
# nvmlGpuP2PStatus_t -> `nvidia-smi topo -p2p` legend codes.
P2P_CODES = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
# NVML_P2P_CAPS_INDEX_READ is 0; nvidia-ml-py 13.6x exports it as the tuple (0,), so the
# literal is passed.
P2P_CAPS_INDEX_READ = 0
NVLINK_MAX_LINKS = 18
# nvmlIntNvLinkDeviceType_t: GPU 0, IBMNPU 1, SWITCH 2, UNKNOWN 0xFF.
NVLINK_DEVICE_TYPE_SWITCH = 2
# Clock types: NVML_CLOCK_GRAPHICS, _SM, _MEM, _VIDEO.
CLOCKS = {"graphics": 0, "sm": 1, "mem": 2, "video": 3}
# nvmlClocksEventReasons bits -> names.
EVENT_REASONS = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
]


def device_identity(dev):
    """index, name, uuid and PCI address of one device of a dump."""
    pci = ok(dev.get("nvmlDeviceGetPciInfo_v3")) or ok(dev.get("nvmlDeviceGetPciInfo")) or {}
    return {
        "index": dev.get("index"),
        "name": ok(dev.get("nvmlDeviceGetName")),
        "uuid": ok(dev.get("nvmlDeviceGetUUID")),
        "pci_bus_id": bus_id(pci.get("busId") or pci.get("busIdLegacy")),
    }


def watts(milliwatts):
    """NVML's milliwatts as watts (2 decimals); None when NVML gave no number."""
    return round(milliwatts / 1000.0, 2) if isinstance(milliwatts, (int, float)) else None


def power_constraints_w(dev):
    """(min, max) power limit in watts a device accepts; (None, None) when NVML did not say."""
    pair = ok(dev.get("nvmlDeviceGetPowerManagementLimitConstraints"))
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        return watts(pair[0]), watts(pair[1])
    return None, None


def decode_event_reasons(mask):
    """Bitmask (int, or a hex string such as ``"0x0000000000000004"``) -> list of names."""
    if mask is None:
        return None
    if isinstance(mask, str):
        try:
            mask = int(mask, 16) if mask.lower().startswith("0x") else int(mask)
        except ValueError:
            return None
    names = [name for bit, name in EVENT_REASONS if mask & bit]
    known = 0
    for bit, dummy in EVENT_REASONS:
        known |= bit
    if mask & ~known:
        names.append("unknown_0x%x" % (mask & ~known))
    return names


def ok(entry, default=None):
    """Value of a dump entry, or ``default`` when the call failed or is missing."""
    if isinstance(entry, dict) and "ok" in entry:
        return entry["ok"]
    return default


def err(entry):
    """Exception name of a failed dump entry, else None."""
    if isinstance(entry, dict) and "err" in entry:
        return entry["err"]
    return None


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _plain(value):
    """ctypes structures and arrays -> JSON-friendly values."""
    if isinstance(value, (bytes, str, int, float, bool)) or value is None:
        return _text(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return dict((k, _plain(v)) for k, v in value.items())
    fields = getattr(value, "_fields_", None)
    if fields:
        return dict((f[0], _plain(getattr(value, f[0]))) for f in fields)
    if hasattr(value, "_length_"):  # a ctypes array; never iterate a pointer (it has no end)
        return [_plain(v) for v in value]
    return str(value)


def call(fn, *args):
    """One NVML call as a dump entry: ``{"ok": value}`` or ``{"err": class name, "msg": text}``; never raises."""
    try:
        return {"ok": _plain(fn(*args))}
    except Exception as e:  # pylint: disable=broad-except  # NVMLError_* and ctypes errors alike
        return {"err": type(e).__name__, "msg": str(e)}


def import_pynvml():
    """The pynvml module, or (None, reason)."""
    try:
        import pynvml  # pylint: disable=import-outside-toplevel
        return pynvml, None
    except Exception as e:  # pylint: disable=broad-except
        return None, "NVML Python bindings are not importable (%s: %s); install nvidia-ml-py" % (type(e).__name__, e)


def collect_or_note(pynvml, notes, clocks=False):
    """collect() with the bindings given or imported; None (and the reason in ``notes``) without them."""
    if pynvml is None:
        pynvml, why = import_pynvml()
        if pynvml is None:
            notes.append(why + ".")
            return None
    return collect(pynvml, clocks=clocks)


def collect(pynvml, clocks=False):
    """Make the NVML calls and return a dump (see module docstring). Never raises."""
    dump = {"init": call(pynvml.nvmlInit)}
    if err(dump["init"]):
        return dump
    try:
        dump["driver"] = call(pynvml.nvmlSystemGetDriverVersion)
        dump["nvml"] = call(pynvml.nvmlSystemGetNVMLVersion)
        dump["cuda_driver"] = call(pynvml.nvmlSystemGetCudaDriverVersion)
        dump["count"] = call(pynvml.nvmlDeviceGetCount)
        handles = []
        devices = []
        for i in range(ok(dump["count"], 0)):
            try:
                handles.append(pynvml.nvmlDeviceGetHandleByIndex(i))
                devices.append({"index": i, "handle": {"ok": True}})
            except Exception as e:  # pylint: disable=broad-except  # e.g. NVMLError_GpuIsLost
                handles.append(None)
                devices.append({"index": i, "handle": {"err": type(e).__name__, "msg": str(e)}})
        for dev, h in zip(devices, handles):
            if h is None:
                continue
            for name in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo",
                         "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetNumaNodeId",
                         "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
                         "nvmlDeviceGetGpuMaxPcieLinkGeneration",
                         "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetPersistenceMode",
                         "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetPowerManagementLimitConstraints",
                         "nvmlDeviceGetPowerManagementDefaultLimit", "nvmlDeviceGetEnforcedPowerLimit"):
                fn = getattr(pynvml, name, None)
                dev[name] = call(fn, h) if fn else {"err": "AttributeError", "msg": "not in these bindings"}
            dev["cpu_affinity_64"] = call(pynvml.nvmlDeviceGetCpuAffinity, h, 16)
            scope = getattr(pynvml, "NVML_AFFINITY_SCOPE_NODE", 0)
            if hasattr(pynvml, "nvmlDeviceGetMemoryAffinity"):
                dev["mem_affinity_node"] = call(pynvml.nvmlDeviceGetMemoryAffinity, h, 4, scope)
            links = []
            for link in range(NVLINK_MAX_LINKS):
                state = call(pynvml.nvmlDeviceGetNvLinkState, h, link)
                if err(state) or not ok(state):
                    if err(state) and link == 0:
                        links.append({"link": 0, "state": state})
                        break
                    continue
                entry = {"link": link, "state": state,
                         "remote_pci": call(pynvml.nvmlDeviceGetNvLinkRemotePciInfo, h, link)}
                if hasattr(pynvml, "nvmlDeviceGetNvLinkRemoteDeviceType"):
                    entry["remote_type"] = call(pynvml.nvmlDeviceGetNvLinkRemoteDeviceType, h, link)
                links.append(entry)
            dev["nvlinks"] = links
            dev["topology"] = {}
            dev["p2p_read"] = {}
            for j, hj in enumerate(handles):
                if hj is None or j == dev["index"]:
                    continue
                dev["topology"][str(j)] = call(pynvml.nvmlDeviceGetTopologyCommonAncestor, h, hj)
                dev["p2p_read"][str(j)] = call(pynvml.nvmlDeviceGetP2PStatus, h, hj, P2P_CAPS_INDEX_READ)
            if clocks:
                _collect_clocks(pynvml, h, dev)
        dump["devices"] = devices
    finally:
        call(pynvml.nvmlShutdown)
    return dump


def _collect_clocks(pynvml, h, dev):
    for cname, ctype in CLOCKS.items():
        dev["clock_" + cname] = call(pynvml.nvmlDeviceGetClockInfo, h, ctype)
        dev["maxclock_" + cname] = call(pynvml.nvmlDeviceGetMaxClockInfo, h, ctype)
        dev["appclock_" + cname] = call(pynvml.nvmlDeviceGetApplicationsClock, h, ctype)
        dev["defappclock_" + cname] = call(pynvml.nvmlDeviceGetDefaultApplicationsClock, h, ctype)
    mem = call(pynvml.nvmlDeviceGetSupportedMemoryClocks, h)
    dev["nvmlDeviceGetSupportedMemoryClocks"] = mem
    top_mem = max(ok(mem, []) or [0])
    if top_mem:
        dev["supported_graphics_clocks_at_max_mem"] = call(pynvml.nvmlDeviceGetSupportedGraphicsClocks, h, top_mem)
    reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    dev["nvmlDeviceGetCurrentClocksEventReasons"] = call(reasons, h)
    supported = getattr(pynvml, "nvmlDeviceGetSupportedClocksEventReasons", None) or \
        getattr(pynvml, "nvmlDeviceGetSupportedClocksThrottleReasons", None)
    if supported:
        dev["nvmlDeviceGetSupportedClocksEventReasons"] = call(supported, h)
    dev["temperature"] = call(pynvml.nvmlDeviceGetTemperature, h, 0)
    dev["nvmlDeviceGetPowerUsage"] = call(pynvml.nvmlDeviceGetPowerUsage, h)
    dev["nvmlDeviceGetPerformanceState"] = call(pynvml.nvmlDeviceGetPerformanceState, h)
