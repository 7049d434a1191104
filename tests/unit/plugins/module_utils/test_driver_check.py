"""The NVIDIA driver a host gets, and what on the host stops the install (module_utils/driver_check.py)."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import driver_check

ROOT = Path(__file__).resolve().parents[4]
SEED = yaml.safe_load((ROOT / "roles/llmhost_stack/vars/seed.yml").read_text())["__llmhost_stack_data"]
SPEC = SEED["nvidia_driver"]
NONE = {"nvidia_driver_version": "", "nvidia_driver_packages": [], "nvidia_driver_package_version": "",
        "nvidia_driver_pin_packages": []}


def settled(distribution="Ubuntu", os_family="Debian", **own):
    values = dict(NONE, **own)
    got = driver_check.settle(SPEC, distribution, values)
    return got, driver_check.settle_errors(got, dict(SPEC, name="seed"), os_family, distribution,
                                           bool(values["nvidia_driver_packages"]))


def test_the_seed_profile_gives_ubuntu_its_pinned_driver():
    got, errors = settled()
    assert errors == [] and got["version"] == "535.129.03"
    assert got["package_version"].startswith("535.129.03-") and got["packages"] and got["pin"]


@pytest.mark.parametrize("own,distribution,words", [
    ({}, "Fedora", "stack profile seed has no NVIDIA driver packages for Fedora"),
    ({"nvidia_driver_version": "535.129"}, "Ubuntu", None),
    ({"nvidia_driver_version": "535"}, "Ubuntu", "nvidia_driver_version=535 (package version 535-"),
    ({"nvidia_driver_version": "550.54.15"}, "Ubuntu", "belong to the profile's driver branch 535"),
    ({"nvidia_driver_version": "550.54.15", "nvidia_driver_packages": ["nvidia-driver-550"],
      "nvidia_driver_package_version": "550.54.15-0ubuntu1"}, "Ubuntu", None),
    ({"nvidia_driver_package_version": "545.23.08-1"}, "Ubuntu", "nvidia_driver_package_version must start with it"),
])
def test_a_version_or_distribution_that_does_not_fit_is_named(own, distribution, words):
    errors = settled(distribution, **own)[1]
    assert (errors == []) if words is None else (len(errors) == 1 and words in errors[0]), errors


def test_a_version_of_its_own_replaces_the_profiles_in_the_package_version():
    got = settled(nvidia_driver_version="535.154.05")[0]
    assert got["package_version"].startswith("535.154.05-")


DPKG = ["ii nvidia-driver-535 535.129.03-0ubuntu1", "hi nvidia-dkms-535 535.129.03-0ubuntu1",
        "rc nvidia-driver-530 530.30.02-0ubuntu1", "ii libnvidia-gl-545 545.23.08-0ubuntu1"]


def test_installed_is_ii_or_hi_and_another_version_is_another_driver():
    got = driver_check.installed(DPKG, ["nvidia-driver-535", "nvidia-dkms-535"], "535.129.03-0ubuntu1")
    assert got["installed"] == ["nvidia-driver-535 535.129.03-0ubuntu1", "nvidia-dkms-535 535.129.03-0ubuntu1",
                                "libnvidia-gl-545 545.23.08-0ubuntu1"]
    assert got["foreign"] == ["libnvidia-gl-545 545.23.08-0ubuntu1"] and got["at_wanted"]
    assert not driver_check.installed(DPKG, ["nvidia-utils-535"], "535.129.03-0ubuntu1")["at_wanted"]


HOST = {"packages": ["nvidia-driver-535"], "package_version": "535.129.03-0ubuntu1", "secure_boot": "0",
        "efivar": "/sys/firmware/efi/efivars/SecureBoot-x", "mok_key": "", "mok_cert": "", "mok_missing": [],
        "runfile": False, "replace": False, "foreign": []}


@pytest.mark.parametrize("change,words", [
    ({}, []),
    ({"secure_boot": ""}, []),
    ({"secure_boot": "1"}, ["Secure Boot is on (/sys/firmware/efi/efivars/SecureBoot-x)"]),
    ({"secure_boot": "1", "mok_key": "/k", "mok_cert": "/c"}, []),
    ({"secure_boot": "1", "mok_key": "/k", "mok_cert": "/c", "mok_missing": ["/c"]},
     ["name files that do not exist on the host: /c."]),
    ({"runfile": True}, ["NVIDIA's .run installer is present"]),
    ({"foreign": ["nvidia-driver-545 545.23.08-1"]}, ["Another NVIDIA driver is installed (nvidia-driver-545"]),
    ({"foreign": ["nvidia-driver-545 545.23.08-1"], "replace": True}, []),
])
def test_what_stops_the_install_is_named_once(change, words):
    got = driver_check.host_errors(dict(HOST, **change))
    assert len(got) == len(words) and all(w in g for w, g in zip(words, got)), got
