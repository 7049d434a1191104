"""The facts modules' view of real lent machines (1x and 2x H200, captured by
tests/device/facts_proof.sh) against each machine's own nvidia-smi output, and our collector
replayed on their NVML dumps."""
import json


from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_sources
from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from fake_pynvml import FakePynvml


def _smi(capture):
    rows = smi.parse_query_csv(capture.cmd("nvidia-smi-query.csv"))
    text = capture.cmd("nvidia-smi-table-topo-p2p.txt")
    topo_part = text[text.index("+\n", text.index("No running processes")) + 2:]
    return rows, smi.parse_topo_matrix(topo_part), smi.parse_p2p_matrix(topo_part[topo_part.index("Legend"):])


def _module_view(capture):
    return json.loads((capture.dir / "modules" / "gpu_facts_direct.json").read_text())["ansible_facts"]["gpu_topology"]


def _assert_matches_smi(fact, capture):
    rows, topo, p2p = _smi(capture)
    assert fact["source"] == "nvml"
    assert len(fact["gpus"]) == len(rows) == len(topo["gpus"])
    for g, row, t in zip(fact["gpus"], rows, topo["gpus"]):
        assert (g["index"], g["name"], g["uuid"]) == (int(row["index"]), row["name"], row["uuid"])
        assert g["pci_bus_id"] == smi.bus_id(row["pci.bus_id"])
        assert g["compute_capability"] == row["compute_cap"]
        assert g["memory_total_mib"] == smi.number(row["memory.total"])
        assert g["pcie"]["gen_max"] == int(row["pcie.link.gen.max"]) and g["pcie"]["width_current"] == int(row["pcie.link.width.current"])
        assert (g["power_limit_w"], g["power_limit_min_w"], g["power_limit_max_w"]) == (
            smi.number(row["power.limit"]), smi.number(row["power.min_limit"]), smi.number(row["power.max_limit"]))
        assert g["persistence_mode"] is True and row["persistence_mode"] == "Enabled"
        assert g["cpu_affinity"] == t["cpu_affinity"] and g["numa_node"] == int(t["numa_affinity"])
    assert fact["links"] == topo["links"] == ({"0,1": "NV18"} if len(rows) == 2 else {})
    assert fact["p2p"] == p2p == ({"0,1": "OK"} if len(rows) == 2 else {})
    assert fact["driver"]["version"] == rows[0]["driver_version"]


def test_module_output_on_the_machine_matches_its_nvidia_smi(device_capture):
    _assert_matches_smi(_module_view(device_capture), device_capture)


def test_collector_resolves_nvswitch_links_without_the_cli(h200x2_device):
    """Each H200 has 18 active NVLinks to NVSwitches (remote type 2): NV18 from NVML alone."""
    calls = []

    def run(argv):
        calls.append(argv)
        return 1, "", "the CLI should not be needed here"
    fact = gpu_sources.gather(root="/nonexistent", run=run, nvidia_smi="/usr/bin/nvidia-smi",
                              pynvml=FakePynvml(h200x2_device.nvml()), live=True)
    assert calls == []
    _assert_matches_smi(fact, h200x2_device)


def test_clock_info_on_the_machine_matches_its_nvidia_smi(device_capture):
    import yaml
    text = (device_capture.dir / "modules" / "gpu_clock_info.txt").read_text()
    result = yaml.safe_load(text.split("=>", 1)[1])
    rows = _smi(device_capture)[0]
    assert result["source"] == "nvml"
    for g, row in zip(result["gpus"], rows):
        assert g["clocks_mhz"]["sm"]["max"] == smi.number(row["clocks.max.sm"])
        assert g["clocks_mhz"]["memory"]["max"] == smi.number(row["clocks.max.memory"])
        assert g["power"]["min_limit_w"] == smi.number(row["power.min_limit"])
        assert g["supported_clocks"]["graphics_max_mhz"] == smi.number(row["clocks.max.sm"])
        assert g["applications_clocks"]["status"] == "ok"


def test_collector_replays_clock_info(device_capture):
    from ansible_collections.llmhost.vllm.plugins.module_utils.clock_sources import read_clock_info
    source, gpus, notes = read_clock_info(pynvml=FakePynvml(device_capture.nvml()))
    assert source == "nvml" and notes == []
    assert all(g["supported_clocks"]["memory_mhz"] == [3201, 2201] for g in gpus) and gpus
