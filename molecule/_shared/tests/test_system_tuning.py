"""system_tuning on a real systemd host: sysctl.d file, live values, kernel command line after a reboot."""
import pytest

SYSCTL_FILE = "/etc/sysctl.d/60-llmhost-vllm.conf"
GRUB_DROPIN = "/etc/default/grub.d/60-llmhost-vllm.cfg"
WANTED = {"vm.swappiness": 1, "net.core.somaxconn": 65535}


def test_sysctl_file_carries_the_merged_layers(host):
    f = host.file(SYSCTL_FILE)
    assert f.is_file
    assert f.user == "root" and f.mode == 0o644
    lines = [line for line in f.content_string.splitlines() if line and not line.startswith("#")]
    assert sorted(lines) == sorted(f"{k} = {v}" for k, v in WANTED.items())


def test_sysctl_conf_is_never_touched(host):
    conf = host.file("/etc/sysctl.conf")
    assert not conf.exists or "llmhost" not in conf.content_string


def test_sysctl_values_are_live_after_reboot(host, kernel_tier):
    if not kernel_tier:
        pytest.skip("containers share the host kernel: vm.swappiness is not namespaced (the vm scenario checks it)")
    for key, value in WANTED.items():
        assert host.sysctl(key) == value, key


def test_single_numa_node_leaves_numa_balancing_alone(host):
    nodes = host.check_output("ls -d /sys/devices/system/node/node[0-9]* | wc -l")
    if int(nodes) > 1:
        pytest.skip("multi-node host")
    assert "numa_balancing" not in host.file(SYSCTL_FILE).content_string


def test_kernel_cmdline_dropin_reaches_the_running_kernel(host, kernel_tier):
    if not kernel_tier:
        assert not host.file(GRUB_DROPIN).exists, "a container has no bootloader: the role must not write one"
        return
    dropin = host.file(GRUB_DROPIN)
    assert dropin.is_file and "transparent_hugepage=never" in dropin.content_string
    assert "transparent_hugepage=never" in host.file("/boot/grub/grub.cfg").content_string
    # side_effect rebooted the VM: the parameter is on the running kernel's command line and in force
    assert "transparent_hugepage=never" in host.file("/proc/cmdline").content_string.split()
    # the VM scenario opts in to iommu=pt (system_tuning_iommu_passthrough); pci=noacs stays off
    assert "iommu=pt" in host.file("/proc/cmdline").content_string.split()
    assert "pci=noacs" not in host.file("/proc/cmdline").content_string
    assert "[never]" in host.file("/sys/kernel/mm/transparent_hugepage/enabled").content_string


def test_main_grub_file_untouched(host, kernel_tier):
    if not kernel_tier:
        pytest.skip("no bootloader in a container")
    assert "transparent_hugepage" not in host.file("/etc/default/grub").content_string


def test_thp_is_never_at_runtime(host, kernel_tier):
    if not kernel_tier:
        pytest.skip("a container's /sys is read-only; the role says so and leaves it")
    assert "[never]" in host.file("/sys/kernel/mm/transparent_hugepage/enabled").content_string


def test_cpu_policy_unit_is_enabled_and_runs_cleanly(host):
    unit = "llmhost-cpu-policy.service"
    text = host.file("/etc/systemd/system/" + unit).content_string
    assert "ConditionPathExistsGlob=|/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor" in text
    assert host.file("/usr/local/sbin/llmhost-cpu-policy").mode == 0o755
    assert host.service(unit).is_enabled
    host.run_test("systemctl start %s" % unit)
    show = host.check_output("systemctl show -p Result -p ConditionResult %s" % unit)
    assert "Result=success" in show  # ConditionResult=no where the host has no cpufreq (VMs, containers)


def test_apt_timers_are_not_masked_by_default(host):
    out = host.run("systemctl is-enabled apt-daily.timer")
    assert "masked" not in out.stdout
