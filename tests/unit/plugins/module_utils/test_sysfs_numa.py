"""sysfs/procfs readers on captured trees and on a tree made here."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import numa, sysfs


def test_gpus_from_captured_sysfs(capture):
    gpus = sysfs.nvidia_gpus(capture.root)
    assert [g["pci_bus_id"] for g in gpus] == (["0000:00:06.0", "0000:00:07.0"] if capture.name == "h200x2" else ["0000:00:06.0"])
    assert all(g["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16} for g in gpus)
    info = sysfs.driver_info(capture.root)
    assert info["version"] == "580.159.04" and info["open_kernel_module"] is True


def _tree(tmp_path, bdf, **files):
    d = tmp_path / "sys" / "bus" / "pci" / "devices" / bdf
    d.mkdir(parents=True)
    for k, v in files.items():
        (d / k).write_text(v + "\n")
    return d


def test_only_nvidia_display_functions_count(tmp_path):
    _tree(tmp_path, "0000:01:00.0", vendor="0x10de", **{"class": "0x030000"}, device="0x2684", numa_node="1",
          local_cpulist="8-15", current_link_speed="16.0 GT/s PCIe", max_link_speed="16.0 GT/s PCIe",
          current_link_width="8", max_link_width="16")
    _tree(tmp_path, "0000:01:00.1", vendor="0x10de", **{"class": "0x040300"})  # the card's audio function
    _tree(tmp_path, "0000:02:00.0", vendor="0x8086", **{"class": "0x030000"})
    gpus = sysfs.nvidia_gpus(str(tmp_path))
    assert gpus == [{"pci_bus_id": "0000:01:00.0", "device_id": "0x2684", "numa_node": 1, "cpu_affinity": "8-15",
                     "pcie": {"gen_current": 4, "gen_max": 4, "width_current": 8, "width_max": 16}}]


def test_missing_files_degrade(tmp_path):
    _tree(tmp_path, "0000:01:00.0", vendor="0x10de", **{"class": "0x030200"}, local_cpus="000000ff")
    assert sysfs.nvidia_gpus(str(tmp_path))[0]["cpu_affinity"] == "0-7"
    assert sysfs.nvidia_gpus(str(tmp_path / "nowhere")) == []
    assert sysfs.driver_info(str(tmp_path))["loaded"] is False


def test_numa_facts_from_capture(capture):
    fact = numa.numa_facts(capture.root)
    assert fact["node_count"] == 1
    assert fact["nodes"][0]["cpus"] == ("0-31" if capture.name == "h200x2" else "0-15")
    assert fact["thp"]["enabled"] == "madvise" and "never" in fact["thp"]["enabled_choices"]
    assert fact["numa_balancing"] == 0
    assert fact["platform_profile"] is None
    assert fact["cpufreq"]["governors"] == {} and fact["warnings"]


def test_numa_governors_and_platform_profile(tmp_path):
    for cpu, gov in ((0, "performance"), (1, "powersave"), (2, "performance")):
        d = tmp_path / ("sys/devices/system/cpu/cpu%d/cpufreq" % cpu)
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text(gov + "\n")
        (d / "scaling_available_governors").write_text("performance powersave\n")
    fw = tmp_path / "sys/firmware/acpi"
    fw.mkdir(parents=True)
    (fw / "platform_profile").write_text("balanced\n")
    (fw / "platform_profile_choices").write_text("low-power balanced performance\n")
    fact = numa.numa_facts(str(tmp_path))
    assert fact["cpufreq"]["governors"] == {"performance": "0,2", "powersave": "1"}
    assert fact["cpufreq"]["available"] == ["performance", "powersave"]
    assert fact["platform_profile"] == {"current": "balanced", "choices": ["low-power", "balanced", "performance"]}


def test_numactl_public(shared):
    text = (shared / "numactl/numactl-165-threadripper3960x-nps4-memoryless-nodes.txt").read_text()
    nodes = numa.parse_numactl(text)
    assert [n["memory_mib"] for n in nodes] == [0, 64307, 64472, 0]
    assert nodes[0]["distances"] == [10, 12, 12, 12]
    two = numa.parse_numactl((shared / "numactl/aws-c-s3-403-c5n18xlarge-2socket.txt").read_text())
    assert [n["cpus"] for n in two] == ["0-17,36-53", "18-35,54-71"]


@pytest.mark.parametrize("wish,nodes,value,reason", [
    (True, 1, 1, "forced on by system_tuning_numa_balancing"),
    (False, 2, 0, "forced off by system_tuning_numa_balancing"),
    ("auto", 2, 0, "off: 2 NUMA nodes"),
    ("auto", "1", None, "left alone: one NUMA node"),
    ("true", 1, None, "left alone"),
])
def test_numa_balancing_is_off_on_several_nodes_unless_forced(wish, nodes, value, reason):
    got_value, got_reason = numa.balancing(wish, nodes)
    assert got_value == value and got_reason.startswith(reason)
