"""kernel role: the profile's (here: the test's) kernel installed, held, GRUB default, booted."""
import pytest

DROPIN = "/etc/default/grub.d/50-llmhost-kernel.cfg"
UNATTENDED = "/etc/apt/apt.conf.d/51llmhost-kernel-unattended-upgrades"


def test_container_keeps_the_host_kernel(host, kernel_tier):
    if kernel_tier:
        pytest.skip("the VM checks the real thing")
    assert not host.file(DROPIN).exists
    assert not host.package("linux-image-cloud-amd64").is_installed


def test_kernel_installed_held_and_booted(host, kernel_tier):
    if not kernel_tier:
        pytest.skip("containers run the host's kernel")
    assert host.package("linux-image-cloud-amd64").is_installed
    assert "hold" in host.check_output("dpkg --get-selections linux-image-cloud-amd64")
    release = host.check_output("uname -r")
    # side_effect rebooted the VM: GRUB's default (our drop-in) booted the cloud kernel
    assert release.endswith("-cloud-amd64"), release
    assert "with Linux %s" % release in host.file(DROPIN).content_string
    assert "hold" in host.check_output("dpkg --get-selections linux-image-%s" % release)
    assert "\"^linux-image-cloud-amd64$\";" in host.file(UNATTENDED).content_string
    assert "GRUB_DEFAULT=0" in host.file("/etc/default/grub").content_string  # the main file is not edited
    # system_tuning's command line reaches every entry, this one too
    assert "transparent_hugepage=never" in host.file("/proc/cmdline").content_string


def test_grub_reads_what_the_roles_wrote(host, kernel_tier):
    """The drop-ins are shell that grub-mkconfig sources, and the grub.cfg it made from them is grub
    script: each is read by its real consumer's parser (sh -n; grub-script-check from grub-common)."""
    if not kernel_tier:
        pytest.skip("no bootloader in a container")
    for dropin in (DROPIN, "/etc/default/grub.d/60-llmhost-vllm.cfg"):
        host.run_expect([0], "sh -n %s" % dropin)
        # sourced as grub-mkconfig does, each sets only GRUB_* variables
        names = host.check_output("env -i sh -c 'set -a; . %s; env' | cut -d= -f1 | sort" % dropin).split()
        assert names and all(n.startswith("GRUB_") or n in ("PWD", "SHLVL", "_") for n in names), names
    check = host.run("grub-script-check /boot/grub/grub.cfg")
    assert check.rc == 0, check.stdout + check.stderr
