"""Preflight report: checks and rendering from real facts."""
from ansible_collections.llmhost.vllm.plugins.filter.host_report import host_report
from ansible_collections.llmhost.vllm.plugins.module_utils import numa, report, sysfs, topology


def _by_item(checks):
    return dict((c["item"], c) for c in checks)


def test_gpu_less_host_says_so():
    out = host_report({"host": "ci", "gpu_topology": topology.build(), "numa": {"node_count": 1},
                       "sysctl": {"vm.swappiness": "60"}, "wanted_sysctl": {"vm.swappiness": 1},
                       "cmdline": "BOOT_IMAGE=/vmlinuz ro", "wanted_cmdline": ["transparent_hugepage=never"]})
    checks = _by_item(out["checks"])
    assert checks["NVIDIA GPUs"]["status"] == "FAIL"
    assert checks["vm.swappiness"]["status"] == "WARN" and checks["vm.swappiness"]["have"] == "60"
    assert checks["transparent_hugepage=never"]["status"] == "WARN"
    assert "No NVIDIA GPU found" in out["markdown"]
    assert "Driver: not loaded (CUDA -)." in out["markdown"] and "facts from none" not in out["markdown"]
    assert out["summary"]["FAIL"] == 1


def test_h200_capture_passes_gpu_checks(h200x2):
    topo = topology.build(nvml_dump=h200x2.nvml(), sys_gpus=sysfs.nvidia_gpus(h200x2.root),
                          driver=sysfs.driver_info(h200x2.root), smi_p2p={"0,1": "OK"})
    fact = numa.numa_facts(h200x2.root)
    out = report.build_report("h200", {"os": "Ubuntu 24.04", "kernel": "6.8"}, topo, fact, {"vm.swappiness": "1"},
                              {"vm.swappiness": 1}, "ro transparent_hugepage=never", ["transparent_hugepage=never"])
    checks = _by_item(out["checks"])
    assert checks["driver loaded"]["status"] == "PASS" and checks["driver loaded"]["have"] == "580.159.04"
    assert checks["GPU 0 <-> GPU 1 peer-to-peer"]["status"] == "PASS"
    assert checks["vm.swappiness"]["status"] == "PASS"
    assert checks["transparent huge pages"]["status"] == "WARN"  # the capture's THP is madvise
    assert "| 1 | NVIDIA H200 | 0000:00:07.0 | 9.0 | 143771 |" in out["markdown"]
    assert "Driver: 580.159.04 (CUDA 13.0), GPU facts read through nvml." in out["markdown"]


def test_p2p_and_width_problems_are_warnings_with_fixes():
    topo = {"gpus": [{"index": 0, "pcie": {"width_current": 8, "width_max": 16, "downgraded": True}, "numa_node": 0},
                     {"index": 1, "pcie": {"width_current": 16, "width_max": 16, "downgraded": False}, "numa_node": 1}],
            "driver": {"loaded": True, "version": "535.129.03"}, "p2p": {"0,1": "NS"}, "links": {"0,1": "SYS"},
            "errors": ["GPU 0000:02:00.0 does not answer: GPU is lost."], "source": "nvidia-smi"}
    checks = _by_item(report.gpu_checks(topo))
    assert checks["GPU 0 link width"]["status"] == "WARN"
    assert "NCCL_P2P_DISABLE=1" in checks["GPU 0 <-> GPU 1 peer-to-peer"]["fix"]
    assert checks["GPU NUMA nodes"]["status"] == "WARN"
    assert checks["problem"]["status"] == "FAIL"


def _profile(name):
    import yaml
    from pathlib import Path
    path = Path(__file__).resolve().parents[4] / "roles" / "llmhost_stack" / "vars" / (name + ".yml")
    return yaml.safe_load(path.read_text())["__llmhost_stack_data"]


def test_seed_profile_blocks_on_debian_and_warns_about_r535():
    checks = report.profile_checks(_profile("seed"), {"distribution": "Debian", "distribution_version": "12", "pythons": ["3.11"]},
                                   topology.build())
    by = _by_item(checks)
    assert by["OS release"]["status"] == "FAIL" and by["OS release"]["blocking"]
    warnings = [c["have"] for c in checks if c["item"] == "profile seed"]
    assert len(warnings) == 2 and "end of life in June 2026" in warnings[0]
    assert "AutoAWQ 0.2.6, which its authors deprecated" in warnings[1] and "llm-compressor" in warnings[1]
    assert by["Python for the venvs"]["status"] == "WARN"
    # Debian 12 has no python3.10-venv: the fix names the profile that fits, not a package that is not there
    fix = by["Python for the venvs"]["fix"]
    assert "python3.10" not in fix and "llmhost_stack=current" in fix


def test_python_fix_names_the_package_where_the_profile_supports_the_os():
    system = {"distribution": "Ubuntu", "distribution_version": "22.04", "pythons": ["3.12"]}
    by = _by_item(report.profile_checks(_profile("seed"), system, topology.build()))
    assert by["Python for the venvs"]["fix"] == "install python3.10-venv"


def test_thp_fix_says_the_role_sets_it_live():
    fact = {"thp": {"enabled": "always"}}
    by = _by_item(report.tuning_checks(fact, {}, {}, "", ["transparent_hugepage=never"], {"thp": "never"}))
    assert by["transparent huge pages"]["status"] == "WARN"
    assert "live, no reboot needed" in by["transparent huge pages"]["fix"]


def test_current_profile_on_the_h200_capture(h200x2):
    topo = topology.build(nvml_dump=h200x2.nvml(), sys_gpus=sysfs.nvidia_gpus(h200x2.root), driver=sysfs.driver_info(h200x2.root))
    system = {"distribution": "Ubuntu", "distribution_version": "24.04", "kernel": "6.8.0-50-generic", "pythons": ["3.12"]}
    checks = report.profile_checks(_profile("current"), system, topo)
    by = _by_item(checks)
    assert [c for c in checks if c.get("blocking")] == []
    assert (by["NVIDIA driver"]["status"], by["NVIDIA driver"]["have"]) == ("PASS", "580.159.04")
    assert by["driver CUDA version"]["status"] == "PASS"
    assert by["GPU 0 arch sm_90"]["status"] == "PASS"


def test_r535_cannot_drive_blackwell_and_old_driver_cuda_blocks():
    topo = {"gpus": [{"index": 0, "compute_capability": "12.0"}], "driver": {"version": "535.129.03", "cuda_version": "12.2"}}
    seed = report.profile_checks(_profile("seed"), {"distribution": "Ubuntu", "distribution_version": "22.04"}, topo)
    assert _by_item(seed)["GPU 0 arch sm_120"]["blocking"]
    current = report.profile_checks(_profile("current"), {"distribution": "Ubuntu", "distribution_version": "22.04"}, topo)
    assert _by_item(current)["driver CUDA version"]["blocking"]


def test_debian_point_release_counts_as_its_major():
    system = {"distribution": "Debian", "distribution_version": "12.15", "distribution_major_version": "12"}
    checks = report.profile_checks(_profile("current"), system, topology.build())
    assert _by_item(checks)["OS release"]["status"] == "PASS"


def test_governor_and_platform_profile_against_what_is_wanted():
    profile = {"current": "balanced", "choices": ["balanced", "performance"]}
    fact = {"cpufreq": {"governors": {"powersave": "0-15"}}, "platform_profile": profile, "thp": {"enabled": "never"}}
    wanted = {"governor": "performance", "platform_profile": "performance", "thp": "never"}
    checks = _by_item(report.tuning_checks(fact, {}, {}, "", [], wanted))
    assert checks["frequency governor"]["status"] == "WARN" and "llmhost-cpu-policy" in checks["frequency governor"]["fix"]
    assert checks["ACPI platform profile"]["status"] == "WARN"
    assert checks["transparent huge pages"]["status"] == "PASS"
    bare = {"cpufreq": {"governors": {}}, "platform_profile": None}
    vm = _by_item(report.tuning_checks(bare, {}, {}, "", [], {"governor": "performance", "platform_profile": "performance"}))
    assert vm["frequency governor"]["status"] == "INFO" and vm["ACPI platform profile"]["status"] == "INFO"


def test_the_python_check_reads_what_the_profile_role_settled():
    """The report does not re-derive the venvs' Python: it checks the one llmhost_stack published for this
    distribution (llmhost_stack_python; current on Debian 12: 3.11), and only without it the profile's own."""
    system = {"distribution": "Debian", "distribution_version": "12", "distribution_major_version": "12",
              "pythons": ["3.11"]}
    settled = {"version": "3.11", "package": "python3.11-venv"}
    assert _by_item(report.profile_checks(_profile("current"), system, topology.build(), settled))[
        "Python for the venvs"]["status"] == "PASS"
    unsettled = _by_item(report.profile_checks(_profile("current"), system, topology.build()))["Python for the venvs"]
    assert unsettled["want"] == _profile("current")["python"]["version"]
