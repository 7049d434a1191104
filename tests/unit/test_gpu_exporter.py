"""The GPU exporter script (roles/monitoring/files/llmhost_gpu_exporter.py) with prometheus_client's real registry
and exposition, over the capture-backed NVML stand-in; its kernel-log follower on /dev/kmsg-shaped records."""
import importlib.util
import os
from pathlib import Path

import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_metrics as gm
from fake_pynvml import FakePynvml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

SCRIPT = Path(__file__).resolve().parents[2] / "roles" / "monitoring" / "files" / "llmhost_gpu_exporter.py"
_spec = importlib.util.spec_from_file_location("llmhost_gpu_exporter", SCRIPT)
exporter = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exporter)

# /dev/kmsg records: "prio,seq,usec,flags;message", continuation lines after it
RECORDS = [
    "6,1201,1843308145,-;NVRM: Xid (PCI:0000:00:07): 79, pid=1818990, name=python3, GPU has fallen off the bus.\n"
    " SUBSYSTEM=pci\n DEVICE=+pci:0000:00:07.0\n",
    "4,1202,1843309000,-;NVRM: GPU at PCI:0000:00:07: GPU-00000000\n",
    "6,1203,1843310000,c;NVRM: Xid (PCI:0000:00:07): 79, pid=1818990, name=python3, GPU has fallen off the bus.\n",
]


def scrape(registry):
    return {s.name + str(sorted(s.labels.items())): s.value
            for fam in text_string_to_metric_families(generate_latest(registry).decode()) for s in fam.samples}


def follower_with(records):
    xids = exporter.XidFollower("/nonexistent", gm.count_xids)
    for record in records:
        xids.feed(record)
    return xids


def test_serves_the_capture_through_prometheus_client(h200x2):
    fake = FakePynvml(h200x2.nvml())
    samples = scrape(exporter.make_registry(fake, gm, follower_with(RECORDS)))
    dev = h200x2.nvml()["devices"][1]
    assert samples["llmhost_gpu_memory_total_bytes" + str(sorted({"gpu": "1", "pci_bus_id": "0000:00:07.0"}.items()))] == \
        dev["nvmlDeviceGetMemoryInfo"]["ok"]["total"]
    assert samples["llmhost_gpu_nvml_up[]"] == 1 and samples["llmhost_gpu_xid_source_up[]"] == 1
    xid = "llmhost_gpu_xid_events" + str(sorted({"gpu": "1", "pci_bus_id": "0000:00:07.0", "xid": "79"}.items()))
    assert samples[xid] == 2


def test_reads_only(h200x2):
    """No NVML setter is ever called while serving."""
    fake = FakePynvml(h200x2.nvml())
    scrape(exporter.make_registry(fake, gm, follower_with([])))
    assert fake.calls == [] and fake.locked == {}


def test_without_nvml_it_serves_nvml_up_0_and_retries():
    class Broken(FakePynvml):
        def nvmlInit(self):
            raise type("NVMLError_LibraryNotFound", (Exception,), {})("NVML Shared Library Not Found")
    registry = exporter.make_registry(Broken({}), gm, follower_with([]))
    samples = scrape(registry)
    assert samples["llmhost_gpu_nvml_up[]"] == 0
    assert not any(k.startswith("llmhost_gpu_memory") for k in samples)
    # no bindings at all (nvidia-ml-py missing): the same, with the reason given at start
    assert scrape(exporter.make_registry(None, gm, follower_with([]), "not importable"))["llmhost_gpu_nvml_up[]"] == 0


def test_the_follower_reads_a_kernel_log_it_can_open(tmp_path):
    """/dev/kmsg gives one record per read; a regular file holding one record reads the same way, then ends."""
    log = tmp_path / "kmsg"
    log.write_text(RECORDS[0])
    xids = exporter.XidFollower(str(log), gm.count_xids)
    thread = xids.start()
    thread.join(5)
    counts, error = xids.snapshot()
    assert not thread.is_alive() and error is None
    assert counts and counts == follower_with(RECORDS[:1]).snapshot()[0]
    assert sum(counts.values()) == 1


def test_an_unreadable_kernel_log_is_a_series_not_a_crash(tmp_path):
    xids = exporter.XidFollower(str(tmp_path / "missing"), gm.count_xids)
    xids.start().join(5)
    counts, error = xids.snapshot()
    assert counts == {} and error.startswith("FileNotFoundError")


@pytest.mark.skipif(not os.access("/dev/kmsg", os.R_OK), reason="/dev/kmsg is not readable here")
def test_the_real_kernel_log_opens_and_is_followed():
    xids = exporter.XidFollower("/dev/kmsg", gm.count_xids)
    thread = xids.start()
    thread.join(1)
    assert thread.is_alive() and xids.snapshot()[1] is None  # blocked on the next record, no error
