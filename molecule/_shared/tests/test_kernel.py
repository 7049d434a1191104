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
    assert host.file(DROPIN).contains("with Linux %s" % release)
    assert "hold" in host.check_output("dpkg --get-selections linux-image-%s" % release)
    assert host.file(UNATTENDED).contains('"^linux-image-cloud-amd64$";')
    assert "GRUB_DEFAULT=0" in host.file("/etc/default/grub").content_string  # the main file is not edited
    # system_tuning's command line reaches every entry, this one too
    assert "transparent_hugepage=never" in host.file("/proc/cmdline").content_string
