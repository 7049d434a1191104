# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the monitoring role's GPU exporter serves: NVML readings and kernel-log Xid lines as metric families.

``read_devices()`` makes the few NVML calls one scrape needs and returns them in the dump shape of
``nvml.collect()`` (``{"ok": value}`` or ``{"err": ...}`` per call), so the same captures test it.
``families()`` turns readings into ``{name: (type, help, [(labels, value), ...])}``: plain data that the
exporter hands to prometheus_client. Nothing here sets anything on a GPU, and nothing raises: a call
NVML does not support on a board (GeForce cards lack several) gives no series, not an error.
"""

from __future__ import annotations

import re

from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils.pci import bus_id

PREFIX = "llmhost_gpu_"
# Per device and scrape: the calls taking only the handle.
SCRAPE_CALLS = (
    "nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo", "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetPerformanceState",
)
# `NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception ...`
_XID_RE = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.([0-7]))?\): (\d+)")


def read_devices(pynvml):
    """One scrape's readings per device (NVML initialised by the caller). Never raises."""
    count = nv.ok(nv.call(pynvml.nvmlDeviceGetCount), 0)
    devices = []
    for index in range(count):
        dev = {"index": index}
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        except Exception as e:  # pylint: disable=broad-except  # e.g. NVMLError_GpuIsLost
            dev["handle"] = {"err": type(e).__name__, "msg": str(e)}
        else:
            dev["handle"] = {"ok": True}
            _read_device(pynvml, handle, dev)
        devices.append(dev)
    return devices


def _read_device(pynvml, handle, dev):
    for name in SCRAPE_CALLS:
        fn = getattr(pynvml, name, None)
        dev[name] = nv.call(fn, handle) if fn else {"err": "AttributeError", "msg": "not in these bindings"}
    # Version 2 keeps the driver's reserved memory out of "used", as nvidia-smi shows it (R510 and later);
    # version 1 counts it in (615 MiB on an idle H200).
    v2 = getattr(pynvml, "nvmlMemory_v2", None)
    dev["memory_v2"] = nv.call(pynvml.nvmlDeviceGetMemoryInfo, handle, v2) if v2 is not None else \
        {"err": "AttributeError", "msg": "not in these bindings"}
    dev["temperature"] = nv.call(pynvml.nvmlDeviceGetTemperature, handle, 0)
    for cname, ctype in nv.CLOCKS.items():
        dev["clock_" + cname] = nv.call(pynvml.nvmlDeviceGetClockInfo, handle, ctype)
        dev["maxclock_" + cname] = nv.call(pynvml.nvmlDeviceGetMaxClockInfo, handle, ctype)
    for key, names in (("nvmlDeviceGetCurrentClocksEventReasons",
                        ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")),
                       ("nvmlDeviceGetSupportedClocksEventReasons",
                        ("nvmlDeviceGetSupportedClocksEventReasons", "nvmlDeviceGetSupportedClocksThrottleReasons"))):
        fn = next((getattr(pynvml, n) for n in names if hasattr(pynvml, n)), None)
        dev[key] = nv.call(fn, handle) if fn else {"err": "AttributeError", "msg": "not in these bindings"}


def xid_event(line):
    """(PCI address, Xid number) of a kernel log line reporting an Xid, else None."""
    m = _XID_RE.search(line)
    if not m:
        return None
    return bus_id("%s.%s" % (m.group(1), m.group(2) or "0")), int(m.group(3))


def count_xids(lines, counts=None):
    """Add the Xid lines among ``lines`` to ``counts`` ({(pci_bus_id, xid): n}) and return it."""
    counts = {} if counts is None else counts
    for line in lines:
        event = xid_event(line)
        if event:
            counts[event] = counts.get(event, 0) + 1
    return counts


def families(devices, xids=None, nvml_error=None, xid_source_error=None):
    """Metric families for one scrape: ``{name: (type, help, [(labels, value), ...])}``."""
    out = {}
    _add(out, "nvml_up", "gauge", "1 when NVML answered this scrape, 0 when it could not be read.",
         {}, 0 if nvml_error else 1)
    _add(out, "xid_source_up", "gauge", "1 when the kernel log could be read for Xid lines.",
         {}, 0 if xid_source_error else 1)
    by_bus = {}
    for dev in devices or []:
        ident = nv.device_identity(dev)
        labels = {"gpu": str(ident["index"]), "pci_bus_id": ident["pci_bus_id"] or ""}
        by_bus[labels["pci_bus_id"]] = labels["gpu"]
        _add(out, "info", "gauge", "The GPU's identity; always 1.",
             dict(labels, uuid=ident["uuid"] or "", name=ident["name"] or ""), 1)
        _device_families(out, dev, labels)
    for (bus, xid), n in sorted((xids or {}).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        _add(out, "xid_events", "gauge",
             "Xid lines the kernel logged for this GPU since boot, as far as the kernel log still holds them.",
             {"gpu": by_bus.get(bus, ""), "pci_bus_id": bus or "", "xid": str(xid)}, n)
    return out


def _device_families(out, dev, labels):
    util = nv.ok(dev.get("nvmlDeviceGetUtilizationRates")) or {}
    mem = nv.ok(dev.get("memory_v2")) or nv.ok(dev.get("nvmlDeviceGetMemoryInfo")) or {}
    plain = (
        ("utilization_ratio", "Share of the last sample period the GPU ran a kernel (0-1).", _ratio(util.get("gpu"))),
        ("memory_utilization_ratio", "Share of the last sample period device memory was read or written (0-1).",
         _ratio(util.get("memory"))),
        ("memory_used_bytes", "Device memory in use (the driver's reserve apart, where NVML tells it).", mem.get("used")),
        ("memory_reserved_bytes", "Device memory the driver reserves for itself.", mem.get("reserved")),
        ("memory_total_bytes", "Device memory in all.", mem.get("total")),
        ("temperature_celsius", "GPU core temperature.", nv.ok(dev.get("temperature"))),
        ("power_watts", "Power draw.", nv.watts(nv.ok(dev.get("nvmlDeviceGetPowerUsage")))),
        ("power_limit_watts", "Power limit in force.", nv.watts(nv.ok(dev.get("nvmlDeviceGetEnforcedPowerLimit")))),
        ("performance_state", "Performance state (0 is P0, the fastest).", nv.ok(dev.get("nvmlDeviceGetPerformanceState"))),
        ("pcie_link_generation", "PCIe generation the link runs at now.",
         nv.ok(dev.get("nvmlDeviceGetCurrPcieLinkGeneration"))),
        ("pcie_link_generation_max", "Highest PCIe generation this GPU's link can run at in its slot.",
         nv.ok(dev.get("nvmlDeviceGetMaxPcieLinkGeneration"))),
        ("pcie_link_width", "PCIe lanes the link runs with now.", nv.ok(dev.get("nvmlDeviceGetCurrPcieLinkWidth"))),
        ("pcie_link_width_max", "Most PCIe lanes this GPU's link can run with.",
         nv.ok(dev.get("nvmlDeviceGetMaxPcieLinkWidth"))),
    )
    for name, doc, value in plain:
        _add(out, name, "gauge", doc, labels, value)
    for cname in nv.CLOCKS:
        _add(out, "clock_hertz", "gauge", "Clock now, per clock domain.", dict(labels, clock=cname),
             _hertz(nv.ok(dev.get("clock_" + cname))))
        _add(out, "clock_max_hertz", "gauge", "Highest clock, per clock domain.", dict(labels, clock=cname),
             _hertz(nv.ok(dev.get("maxclock_" + cname))))
    _event_reasons(out, dev, labels)


def _event_reasons(out, dev, labels):
    """One series per reason the board supports: 1 while it holds the clocks down, else 0."""
    active = nv.decode_event_reasons(nv.ok(dev.get("nvmlDeviceGetCurrentClocksEventReasons")))
    if active is None:
        return
    supported = nv.decode_event_reasons(nv.ok(dev.get("nvmlDeviceGetSupportedClocksEventReasons")))
    names = [n for dummy, n in nv.EVENT_REASONS if supported is None or n in supported]
    for name in names + [n for n in active if n not in names]:
        _add(out, "clock_event_reason", "gauge",
             "1 while this reason holds the clocks down (NVML clock event reasons, formerly throttle reasons).",
             dict(labels, reason=name), 1 if name in active else 0)


def _add(out, name, kind, doc, labels, value):
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    family = out.setdefault(PREFIX + name, (kind, doc, []))
    family[2].append((dict(labels), value))


def _ratio(percent):
    return percent / 100.0 if isinstance(percent, (int, float)) else None


def _hertz(mhz):
    return mhz * 1000000 if isinstance(mhz, (int, float)) else None
