"""apt pin entries as apt_preferences(5) reads them, on the profiles' own pins: what a driver
replacement purges, and what the same apt transaction moves to the pinned version instead."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.filter.apt_unpinned import apt_unpinned
from ansible_collections.llmhost.vllm.plugins.module_utils import apt_pins
from ansible_collections.llmhost.vllm.plugins.module_utils.apt_pins import covers

VARS = Path(__file__).resolve().parents[4] / "roles" / "llmhost_stack" / "vars"


def _pins(profile, distribution):
    data = yaml.safe_load((VARS / (profile + ".yml")).read_text())["__llmhost_stack_data"]
    return data["nvidia_driver"]["pin_packages"][distribution]


def test_entries_are_names_globs_and_searched_regexes():
    assert covers("libcuda1", "libcuda1") and not covers("libcuda1", "libcuda1-dbg")
    assert covers("nvidia-*", "nvidia-smi") and not covers("nvidia-*", "libnvidia-ml1")
    assert covers("/nvidia-/", "libnvidia-ml1")            # a regex is searched, not anchored
    assert not covers("/", "x") and covers("//", "//")     # too short to be a regex: a plain name


def test_ubuntu_535_to_580_purges_the_old_branch_and_nothing_else():
    installed = ["nvidia-headless-535", "nvidia-utils-535", "libnvidia-compute-535", "nvidia-dkms-535",
                 "nvidia-kernel-common-535", "xserver-xorg-video-nvidia-535", "nvidia-headless-580-open"]
    assert apt_unpinned(installed, _pins("current", "Ubuntu")) == installed[:-1]


def test_debian_flavour_moves_the_family_within_one_transaction():
    """NVIDIA's Debian packages carry no branch: another version of the same names is moved, never purged."""
    installed = ["nvidia-driver-cuda", "nvidia-kernel-open-dkms", "nvidia-kernel-support", "libnvidia-ml1",
                 "libnvidia-cfg1", "libcuda1", "nvidia-smi", "nvidia-persistenced", "firmware-nvidia-gsp"]
    assert apt_unpinned(installed, _pins("current", "Debian")) == []
    assert apt_unpinned(installed + ["cuda-drivers"], _pins("current", "Debian")) == ["cuda-drivers"]


def test_seed_pins_its_branch_only():
    assert apt_unpinned(["nvidia-utils-535", "nvidia-utils-580", "libnvidia-compute-535"], _pins("seed", "Ubuntu")) == [
        "nvidia-utils-580"]


def test_the_repositorys_versions_are_read_and_said_in_order():
    from ansible_collections.llmhost.vllm.plugins.module_utils.apt_pins import repo_offers, repo_versions
    found = repo_versions(["nvidia-driver-cuda 580.172.08-1", "nvidia-driver-cuda 580.159.04-1", "W: a warning line",
                           "nvidia-kernel-open-dkms 580.172.08-1"])
    assert found == {"nvidia-driver-cuda": ["580.172.08-1", "580.159.04-1"], "nvidia-kernel-open-dkms": ["580.172.08-1"]}
    assert repo_offers(["nvidia-driver-cuda", "cuda-toolkit-13-0"], found) == (
        "nvidia-driver-cuda 580.172.08-1, 580.159.04-1; cuda-toolkit-13-0 nothing;")


REPO = {"url": "", "default_url": "https://developer.download.nvidia.com/compute/cuda/repos/{dist}/x86_64/",
        "dists": {"Ubuntu": {"22.04": "ubuntu2204"}}, "key_url": "", "key_name": "3bf863cc.pub", "profile": "seed"}
JAMMY = {"distribution": "Ubuntu", "distribution_version": "22.04", "distribution_major_version": "22"}
BOOKWORM = {"distribution": "Debian", "distribution_version": "12.8", "distribution_major_version": "12"}


@pytest.mark.parametrize("change,host,url,key,words", [
    ({}, JAMMY, "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/",
     "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/3bf863cc.pub", None),
    ({}, BOOKWORM, "", "", "stack profile seed has no NVIDIA repository for Debian 12.8 (its nvidia_driver.repo_dist "
                           "lists Ubuntu)"),
    ({"url": "http://m.lan/cuda//"}, BOOKWORM, "http://m.lan/cuda/", "http://m.lan/cuda/3bf863cc.pub", None),
    ({"url": "file:///srv/cuda", "key_url": "https://m.lan/k.pub"}, JAMMY, "file:///srv/cuda/", "https://m.lan/k.pub",
     None),
    ({"url": "/srv/cuda"}, JAMMY, "/srv/cuda/", "/srv/cuda/3bf863cc.pub", "both must be http://, https:// or file://"),
])
def test_nvidias_repository_is_the_profiles_flavour_or_the_mirror(change, host, url, key, words):
    got = apt_pins.nvidia_repo(dict(REPO, **change), host)
    assert (got["url"], got["key_source"]) == (url, key)
    assert (got["errors"] == []) if words is None else (len(got["errors"]) == 1 and words in got["errors"][0]), got
