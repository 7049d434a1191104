"""nvidia_driver and cuda_toolkit against the harness's stand-in of NVIDIA's repository.

The repository (tests/harness/nvrepo.py) is served on the controller's loopback and signed with a
throwaway key; its packages carry the real names, versions and inter-package dependencies with
empty payloads, and every driver package also exists in a newer release (580.172.08-1) that the
pin must keep out. So source, keyring, pin, hold, install and upgrade refusal run for real with
apt; a driver that loads and DKMS builds are not here (no GPU, no driver payload).
The apt work runs in the container scenario only; the vm converges nvidia_driver's configure
phase (nouveau blacklist and initramfs), which needs a kernel of its own."""
import pytest

DRIVER = "580.159.04-1"
NEWER = "580.172.08-1"
DRIVER_PACKAGES = ["nvidia-driver-cuda", "nvidia-kernel-open-dkms"]
SOURCES = "/etc/apt/sources.list.d/llmhost-nvidia-cuda.sources"
KEYRING = "/etc/apt/keyrings/llmhost-nvidia-cuda.asc"


def test_repository_is_a_deb822_source_trusting_its_own_key(host, container_scope):
    src = host.file(SOURCES)
    assert src.mode == 0o644
    text = src.content_string
    assert "Suites: /\n" in text
    assert "Signed-By: %s\n" % KEYRING in text
    key = host.file(KEYRING)
    assert key.mode == 0o644 and key.user == "root"
    assert key.content_string.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    # the key is trusted for this source only, not dropped into the global trusted.gpg.d
    assert not host.file("/etc/apt/trusted.gpg.d/llmhost-nvidia-cuda.asc").exists


@pytest.mark.parametrize("package", DRIVER_PACKAGES + ["nvidia-smi", "libcuda1", "nvidia-persistenced"])
def test_driver_packages_are_installed_at_the_pinned_version(host, package, container_scope):
    pkg = host.package(package)
    assert pkg.is_installed
    assert pkg.version == DRIVER


@pytest.mark.parametrize("package", DRIVER_PACKAGES + ["cuda-toolkit-13-0"])
def test_pinned_packages_are_held(host, package, container_scope):
    assert host.check_output("dpkg-query -W -f='${Status}' %s" % package).startswith("hold ")


def test_apt_sees_the_newer_release_but_the_pin_refuses_it(host, container_scope):
    policy = host.check_output("apt-cache policy nvidia-smi")
    assert NEWER in policy, "the stand-in repository should offer the newer release"
    assert "Candidate: %s" % DRIVER in policy
    assert "1001" in policy
    upgrade = host.check_output("apt-get -s -o Debug::NoLocking=1 dist-upgrade")
    assert NEWER not in upgrade
    assert "nvidia" not in " ".join(l for l in upgrade.splitlines() if l.startswith("Inst "))


def test_unattended_upgrades_blacklists_the_driver_and_toolkit(host, container_scope):
    driver = host.file("/etc/apt/apt.conf.d/51llmhost-nvidia-driver-unattended-upgrades").content_string
    assert '"^(lib)?nvidia-";' in driver and '"^libcuda1$";' in driver
    toolkit = host.file("/etc/apt/apt.conf.d/51llmhost-cuda-toolkit-unattended-upgrades").content_string
    assert '"^cuda-toolkit-13-0$";' in toolkit


def test_persistence_daemon_is_enabled(host, container_scope):
    assert host.service("nvidia-persistenced").is_enabled


def test_nvidia_uvm_loads_at_boot(host, kernel_tier):
    conf = host.file("/etc/modules-load.d/60-llmhost-nvidia-uvm.conf")
    if not kernel_tier:
        assert not conf.exists, "containers leave the host's kernel alone"
        return
    assert "\nnvidia-uvm\n" in conf.content_string and conf.mode == 0o644


def test_nouveau_is_blacklisted_in_the_initramfs_too(host, kernel_tier):
    conf = "/etc/modprobe.d/60-llmhost-blacklist-nouveau.conf"
    if not kernel_tier:
        assert not host.file(conf).exists, "containers leave the host's kernel alone"
        return
    assert "blacklist nouveau\n" in host.file(conf).content_string
    kernel = host.check_output("uname -r")
    listing = host.check_output("lsinitramfs /boot/initrd.img-%s" % kernel)
    assert "etc/modprobe.d/60-llmhost-blacklist-nouveau.conf" in listing


def test_toolkit_is_installed_pinned_and_on_path(host, container_scope):
    assert host.package("cuda-toolkit-13-0").version == "13.0.2-1"
    assert "Pin: version 13.0.2-1" in host.file("/etc/apt/preferences.d/60-llmhost-cuda-toolkit").content_string
    out = host.check_output("bash -lc 'echo $CUDA_HOME; nvcc --version'")
    assert out.startswith("/usr/local/cuda-13.0\n")
    assert "Cuda compilation tools, release 13.0," in out


def _transactions(host):
    return host.check_output("grep -c '^Start-Date' /var/log/apt/history.log || true")


def _driver_versions(host):
    return {p: host.package(p).version for p in DRIVER_PACKAGES + ["nvidia-smi", "libcuda1", "nvidia-persistenced"]}


@pytest.mark.after_the_reruns
def test_another_driver_version_is_kept_unless_replaced_then_moved_in_one_transaction(
        host, playbook, container_scope, beside_done):
    """nvidia_driver_version changed on a host with the role's driver (held, as the role leaves it: dpkg's "hi"):
    refused and kept without nvidia_driver_replace; with it, the whole family (the packages and what they depend
    on, same names in NVIDIA's Debian flavour) moves in ONE apt transaction, so no moment has the host without a
    driver; then back the same way, held again. After the work beside the checks (conftest.py), so late: the host
    report of a playbook run meanwhile would find another driver than the profile's."""
    version = NEWER.rsplit("-", 1)[0]
    before = _transactions(host)
    changed, failed, out = playbook("--tags", "nvidia_driver", "-e", "nvidia_driver_version=" + version)
    assert failed and changed == 0, out[-3000:]
    assert "Another NVIDIA driver is installed" in out and "nvidia_driver_replace=true" in " ".join(out.split())
    assert set(_driver_versions(host).values()) == {DRIVER} and _transactions(host) == before
    try:
        changed, failed, out = playbook("--tags", "nvidia_driver", "-e", "nvidia_driver_version=" + version,
                                        "-e", "nvidia_driver_replace=true")
        assert failed == 0 and changed > 0, out[-3000:]
        assert set(_driver_versions(host).values()) == {NEWER}
        assert int(_transactions(host)) == int(before) + 1, host.check_output("tail -n 30 /var/log/apt/history.log")
        last = host.check_output("awk '/^Start-Date/{t=\"\"} {t=t $0 \"\\n\"} END{printf \"%s\", t}' /var/log/apt/history.log")
        assert all(p in last for p in _driver_versions(host)), last
        assert "Remove:" not in last and "Purge:" not in last, last
    finally:
        changed, failed, out = playbook("--tags", "nvidia_driver", "-e", "nvidia_driver_replace=true")
    assert failed == 0, out[-3000:]
    assert set(_driver_versions(host).values()) == {DRIVER}
    assert int(_transactions(host)) == int(before) + 2
    for package in DRIVER_PACKAGES:
        assert host.check_output("dpkg-query -W -f='${Status}' %s" % package).startswith("hold ")
