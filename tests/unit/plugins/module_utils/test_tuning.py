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
