"""gpu_metrics: NVML readings (through the capture-backed NVML stand-in) and kernel-log Xid lines as metric families."""
import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_metrics as gm
from fake_pynvml import FakePynvml

# Xid lines as drivers print them (public threads: leptonai/gpud#46, NVIDIA/open-gpu-kernel-modules#1150).
XID_LINES = [
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
    "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception",
    "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008",
    "kernel: NVRM: Xid (PCI:0000:00:07): 79, pid=1818990, name=python3, GPU has fallen off the bus.",
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
    "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing",
]


def series(fams, name):
    return {tuple(sorted(labels.items())): value for labels, value in fams[gm.PREFIX + name][2]}


def value(fams, name, **labels):
    for lab, val in fams[gm.PREFIX + name][2]:
        if all(lab.get(k) == v for k, v in labels.items()):
            return val
    raise KeyError((name, labels))


def test_xid_lines_are_counted_per_gpu_and_xid():
    counts = gm.count_xids(XID_LINES)
    assert counts == {("0000:cb:00.0", 13): 2, ("0000:cb:00.0", 109): 1, ("0000:00:07.0", 79): 1}
    # counting goes on across calls (the exporter feeds it the kernel log as it grows)
    assert gm.count_xids(XID_LINES[:1], counts)[("0000:cb:00.0", 13)] == 3


def test_a_fallen_off_the_bus_log_has_no_xid_line(shared):
    text = (shared / "errors" / "dmesg-fallen-off-bus-nvsentinel-155.txt").read_text()
    assert gm.count_xids(text.splitlines()) == {}


def test_readings_of_a_real_capture(capture):
    fake = FakePynvml(capture.nvml())
    devices = gm.read_devices(fake)
    assert len(devices) == len(capture.nvml()["devices"])
    fams = gm.families(devices, gm.count_xids(XID_LINES))
    dump = capture.nvml()["devices"][0]
    labels = {"gpu": "0", "pci_bus_id": dump["nvmlDeviceGetPciInfo"]["ok"]["busId"][4:].lower()}
    assert value(fams, "memory_total_bytes", **labels) == dump["nvmlDeviceGetMemoryInfo"]["ok"]["total"]
    assert value(fams, "memory_used_bytes", **labels) == dump["nvmlDeviceGetMemoryInfo"]["ok"]["used"]
    assert value(fams, "temperature_celsius", **labels) == dump["temperature"]["ok"]
    assert value(fams, "power_watts", **labels) == round(dump["nvmlDeviceGetPowerUsage"]["ok"] / 1000.0, 2)
    assert value(fams, "power_limit_watts", **labels) == dump["nvmlDeviceGetEnforcedPowerLimit"]["ok"] / 1000.0
    assert value(fams, "clock_hertz", clock="sm", **labels) == dump["clock_sm"]["ok"] * 1e6
    assert value(fams, "clock_max_hertz", clock="mem", **labels) == dump["maxclock_mem"]["ok"] * 1e6
    assert value(fams, "pcie_link_generation", **labels) == dump["nvmlDeviceGetCurrPcieLinkGeneration"]["ok"]
    assert value(fams, "pcie_link_width_max", **labels) == dump["nvmlDeviceGetMaxPcieLinkWidth"]["ok"]
    info = fams[gm.PREFIX + "info"][2][0][0]
    assert info["uuid"] == dump["nvmlDeviceGetUUID"]["ok"] and info["name"] == dump["nvmlDeviceGetName"]["ok"]
    # the capture has no utilisation reading: no series, no error
    assert gm.PREFIX + "utilization_ratio" not in fams
    assert series(fams, "nvml_up") == {(): 1}


def test_clock_event_reasons_are_one_series_per_reason(h200x2):
    dump = h200x2.nvml()
    dump["devices"][0]["nvmlDeviceGetCurrentClocksEventReasons"] = {"ok": 0x4 | 0x40}  # sw power cap, hw thermal
    fams = gm.families(gm.read_devices(FakePynvml(dump)))
    reasons = {lab["reason"]: val for lab, val in fams[gm.PREFIX + "clock_event_reason"][2] if lab["gpu"] == "0"}
    assert reasons["sw_power_cap"] == 1 and reasons["hw_thermal_slowdown"] == 1
    assert reasons["gpu_idle"] == 0 and sum(reasons.values()) == 2
    # the second GPU is idle (the capture's own mask, 0x1)
    assert value(fams, "clock_event_reason", gpu="1", reason="gpu_idle") == 1


def test_a_pcie_downgrade_is_visible(h200x2):
    dump = h200x2.nvml()
    dump["devices"][1]["nvmlDeviceGetCurrPcieLinkGeneration"] = {"ok": 3}
    dump["devices"][1]["nvmlDeviceGetCurrPcieLinkWidth"] = {"ok": 8}
    fams = gm.families(gm.read_devices(FakePynvml(dump)))
    assert value(fams, "pcie_link_generation", gpu="1") < value(fams, "pcie_link_generation_max", gpu="1")
    assert value(fams, "pcie_link_width", gpu="1") < value(fams, "pcie_link_width_max", gpu="1")


def test_xids_are_labelled_with_the_gpu_index_of_their_pci_address(h200x2):
    fams = gm.families(gm.read_devices(FakePynvml(h200x2.nvml())), gm.count_xids(XID_LINES))
    xids = series(fams, "xid_events")
    # the capture's second H200 sits at 0000:00:07.0 (a microVM's bus)
    assert xids[(("gpu", "1"), ("pci_bus_id", "0000:00:07.0"), ("xid", "79"))] == 1
    # an address no GPU of this host has (the public log's card) keeps an empty gpu label
    assert xids[(("gpu", ""), ("pci_bus_id", "0000:cb:00.0"), ("xid", "13"))] == 2


@pytest.mark.parametrize("broken", ["nvmlDeviceGetMemoryInfo", "temperature", "nvmlDeviceGetPowerUsage"])
def test_a_call_the_board_refuses_drops_only_its_series(h200x2, broken):
    dump = h200x2.nvml()
    for dev in dump["devices"]:
        dev[broken] = {"err": "NVMLError_NotSupported", "msg": "Not Supported"}
    fams = gm.families(gm.read_devices(FakePynvml(dump)))
    dropped = {"nvmlDeviceGetMemoryInfo": "memory_used_bytes", "temperature": "temperature_celsius",
               "nvmlDeviceGetPowerUsage": "power_watts"}[broken]
    assert gm.PREFIX + dropped not in fams
    assert len(fams[gm.PREFIX + "clock_hertz"][2]) == 8


def test_a_lost_gpu_keeps_the_others():
    fake = FakePynvml({"count": {"ok": 2}, "devices": [{"index": 0}, {"index": 1}]})

    def lost(i):
        raise type("NVMLError_GpuIsLost", (Exception,), {})("GPU is lost")
    fake.nvmlDeviceGetHandleByIndex = lost
    devices = gm.read_devices(fake)
    assert [d["handle"].get("err") for d in devices] == ["NVMLError_GpuIsLost"] * 2
    fams = gm.families(devices, nvml_error=None)
    assert set(fams) == {gm.PREFIX + "nvml_up", gm.PREFIX + "xid_source_up", gm.PREFIX + "info"}


def test_nvml_and_kernel_log_failures_are_series_not_errors():
    fams = gm.families([], {}, nvml_error="NVMLError_LibraryNotFound", xid_source_error="PermissionError")
    assert series(fams, "nvml_up") == {(): 0}
    assert series(fams, "xid_source_up") == {(): 0}


def test_memory_used_leaves_the_drivers_reserve_out_where_nvml_tells_it(h200x2):
    """On a lent H200, NVML's version-1 memory info said 615 MiB used where nvidia-smi said 0: the driver's reserve.
    With version 2 (R510 and later) "used" is nvidia-smi's, and the reserve is a series of its own."""
    class WithV2(FakePynvml):
        nvmlMemory_v2 = 0x2000028

        def nvmlDeviceGetMemoryInfo(self, handle, version=None):
            v1 = self._answer(self._dev(handle).get("nvmlDeviceGetMemoryInfo"))
            if version is None:
                return v1
            return {"total": v1["total"], "reserved": v1["used"], "free": v1["free"], "used": 0}
    dump = h200x2.nvml()
    fams = gm.families(gm.read_devices(WithV2(dump)))
    assert value(fams, "memory_used_bytes", gpu="0") == 0
    assert value(fams, "memory_reserved_bytes", gpu="0") == dump["devices"][0]["nvmlDeviceGetMemoryInfo"]["ok"]["used"]
    # bindings without version 2: version 1, no reserve series
    assert gm.PREFIX + "memory_reserved_bytes" not in gm.families(gm.read_devices(FakePynvml(dump)))
