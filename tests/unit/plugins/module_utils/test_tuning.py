"""system_tuning's command line and host checks (module_utils/tuning.py)."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import tuning

KNOWN = {"quiet", "iommu", "transparent_hugepage", "pci"}
FAKE = {"mmu_notifier_invalidate_range": "no such kernel parameter exists: an internal\n function"}


@pytest.mark.parametrize("cmdline,words", [
    (["quiet", "iommu=pt", "transparent_hugepage=never"], []),
    (["quiet splash"], ["quiet splash: not of the form name or name=value"]),
    (["quiet=$(id)"], ["quiet=$(id): not of the form"]),
    (["mmu_notifier_invalidate_range=on"], ["mmu_notifier_invalidate_range: no such kernel parameter exists: an internal function."]),
    (["nosuchparam"], ["nosuchparam: not a known kernel parameter (add it to system_tuning_kernel_cmdline_extra_known"]),
])
def test_each_parameter_is_plain_real_and_known(cmdline, words):
    got = tuning.cmdline_errors(cmdline, KNOWN, FAKE)
    assert len(got) == len(words) and all(g.startswith(w) for w, g in zip(words, got)), got


NUMA = {"cpufreq": {"available": ["performance", "powersave"]}, "platform_profile": {"choices": ["balanced", "performance"]}}


@pytest.mark.parametrize("thp,cmdline,governor,profile,numa,words", [
    ("never", ["transparent_hugepage=never"], "performance", "performance", NUMA, []),
    ("", ["transparent_hugepage=never"], "", "", NUMA, []),
    ("always", ["transparent_hugepage=never"], "", "", NUMA,
     ["system_tuning_thp=always contradicts transparent_hugepage=never"]),
    ("", [], "ondemand", "", NUMA, ["system_tuning_cpu_governor=ondemand is not offered by this CPU; choose one of "
                                    "performance, powersave."]),
    ("", [], "ondemand", "", {"cpufreq": {"available": []}, "platform_profile": None}, []),
    ("", [], "", "quiet", NUMA, ["system_tuning_platform_profile=quiet is not one of this firmware's choices"]),
    ("", [], "", "quiet", {"platform_profile": None}, []),
])
def test_wishes_the_command_line_or_the_host_contradicts_are_named(thp, cmdline, governor, profile, numa, words):
    got = tuning.offer_errors(thp, cmdline, governor, profile, numa)
    assert len(got) == len(words) and all(g.startswith(w) for w, g in zip(words, got)), got


NUMA_OFF = (0, "off: 2 NUMA nodes")


@pytest.mark.parametrize("layers,numa,sysctl", [
    ([{"vm.swappiness": 10}, {"vm.swappiness": 5}, {}], (None, "left alone"), {"vm.swappiness": 5}),
    ([{"vm.swappiness": 10, "vm.max_map_count": 1}, {}, {"vm.swappiness": None}], (None, "x"), {"vm.max_map_count": 1}),
    ([{"vm.swappiness": 10}, {}, {}], NUMA_OFF, {"vm.swappiness": 10, "kernel.numa_balancing": 0}),
])
def test_the_layers_merge_in_order_and_numa_balancing_is_added_when_decided(layers, numa, sysctl):
    got = tuning.sysctl_settings(layers, numa)
    assert got["sysctl"] == sysctl and got["numa_balancing_reason"] == numa[1]


def test_the_wanted_values_read_as_the_kernel_prints_them():
    got = tuning.sysctl_settings([{"net.ipv4.tcp_rmem": "4096\t87380   6291456"}], (None, ""))
    assert got["want"] == {"net.ipv4.tcp_rmem": "4096 87380 6291456"}


HOST = {"sysctl": {"vm.swappiness": 10}, "on_host": ["vm.swappiness"], "cmdline": [], "known": sorted(KNOWN),
        "fake": FAKE, "thp": "madvise", "governor": "", "platform_profile": "", "numa": {}}


@pytest.mark.parametrize("change,words", [
    ({}, []),
    ({"sysctl": {"vm/swappiness": 10}}, ["sysctl vm/swappiness=10 (from system_tuning_sysctl_defaults"]),
    ({"sysctl": {"vm.swappiness": "ten"}}, ["sysctl vm.swappiness=ten"]),
    ({"sysctl": {"vm.swappiness": 10, "vm.nosuch": 1}}, ["unknown sysctl key(s) vm.nosuch"]),
    ({"cmdline": ["nosuchparam"]}, ["system_tuning_kernel_cmdline is refused: nosuchparam: not a known"]),
    ({"cmdline": ["transparent_hugepage=never"]}, ["system_tuning_thp=madvise contradicts transparent_hugepage=never"]),
    ({"governor": "ondemand", "numa": {"cpufreq": {"available": ["performance"]}}},
     ["system_tuning_cpu_governor=ondemand is not offered"]),
])
def test_what_the_host_cannot_take_is_named_once(change, words):
    got = tuning.host_errors(dict(HOST, **change))
    assert len(got) == len(words) and all(w in g for w, g in zip(words, got)), got
