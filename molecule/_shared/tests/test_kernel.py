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
