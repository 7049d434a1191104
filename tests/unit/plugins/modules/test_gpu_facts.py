"""gpu_facts end to end: the live collector against a capture-backed NVML stand-in (fake_pynvml,
labelled as such) and captured nvidia-smi outputs; and every degraded path."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_sources
from ansible_collections.llmhost.vllm.plugins.modules import gpu_facts
from fake_pynvml import FakePynvml


def test_nvml_path_on_captures(capture):
    calls = []
    fact = gpu_sources.gather(root=capture.root, run=capture.runner(calls), nvidia_smi="/usr/bin/nvidia-smi",
                              pynvml=FakePynvml(capture.nvml()), live=True)
    assert fact["source"] == "nvml"
    assert len(fact["gpus"]) == (2 if capture.name == "h200x2" else 1)
    assert fact["arch_list"] == "9.0" and fact["driver"]["cuda_version"] == "13.0"
    if capture.name == "h200x2":
        # NVML could not resolve the NVLink peer in this capture, so topo -m was asked: NV18.
        assert fact["links"] == {"0,1": "NV18"} and fact["p2p"] == {"0,1": "OK"}
        assert ["/usr/bin/nvidia-smi", "topo", "-m"] in calls
    # power limit constraints are missing from the capture: the CSV fills what it has
    assert any(a[1].startswith("--query-gpu=") for a in calls)


def test_cli_path_when_nvml_is_missing(capture):
    fact = gpu_sources.gather(root=capture.root, run=capture.runner(), nvidia_smi="/usr/bin/nvidia-smi",
                              use_nvml=False, live=True)
    assert fact["source"] == "nvidia-smi"
    assert [g["uuid"] for g in fact["gpus"]] == [d["nvmlDeviceGetUUID"]["ok"] for d in capture.nvml()["devices"]]
    assert all(g["compute_capability"] == "9.0" and g["memory_total_mib"] is None for g in fact["gpus"])


def test_driver_mismatch_from_nvml_and_cli(h200x2):
    def broken(argv):
        return 18, "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.95\n", ""
    fact = gpu_sources.gather(root=h200x2.root, run=broken, nvidia_smi="/usr/bin/nvidia-smi",
                              pynvml=FakePynvml(h200x2.nvml(), init_error="NVMLError_LibRmVersionMismatch"), live=True)
    assert fact["source"] == "sysfs"
    assert any("mismatch" in e for e in fact["errors"])
    assert len(fact["gpus"]) == 2


def test_sysfs_only_without_nvml_or_smi(h200x2):
    fact = gpu_sources.gather(root=h200x2.root, run=None, nvidia_smi=None, use_nvml=False, live=True)
    assert fact["source"] == "sysfs" and len(fact["gpus"]) == 2
    assert any("nvidia-smi is not installed" in w for w in fact["warnings"])


def test_captured_tree_is_never_mixed_with_the_live_host(h200x2):
    fact = gpu_sources.gather(root=h200x2.root, run=None, nvidia_smi="/usr/bin/nvidia-smi")
    assert fact["source"] == "sysfs" and any("describe the running host" in w for w in fact["warnings"])


def test_module_on_a_gpu_less_host(tmp_path, capsys):
    """The module itself, as Ansible runs it: no GPU, no driver, no bindings -> success, source none."""
    with patch_module_args({"root": str(tmp_path), "use_nvml": False}):
        with pytest.raises(SystemExit) as exc:
            gpu_facts.main()
    assert exc.value.code == 0
    out = json.loads(capsys.readouterr().out)
    fact = out["ansible_facts"]["gpu_topology"]
    assert out["changed"] is False and fact["source"] == "none" and fact["gpus"] == []
    assert fact["warnings"]


def test_module_with_a_capture_root(h200x2, capsys):
    with patch_module_args({"root": h200x2.root, "nvidia_smi": "/nonexistent/nvidia-smi"}):
        with pytest.raises(SystemExit):
            gpu_facts.main()
    fact = json.loads(capsys.readouterr().out)["ansible_facts"]["gpu_topology"]
    assert fact["source"] == "sysfs" and [g["pci_bus_id"] for g in fact["gpus"]] == ["0000:00:06.0", "0000:00:07.0"]
    assert any("not an executable file" in w for w in fact["warnings"])
