"""The kernel a host gets (module_utils/kernel_choice.py), on the seed profile's kernels."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils.kernel_choice import choice

ROOT = Path(__file__).resolve().parents[4]
KERNELS = yaml.safe_load((ROOT / "roles/llmhost_stack/vars/seed.yml").read_text())["__llmhost_stack_data"]["kernel"]
UBUNTU = {"os_family": "Debian", "distribution": "Ubuntu", "distribution_version": "22.04"}
DEBIAN = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12"}
NONE = {"kernel_packages": [], "kernel_release": ""}


def test_ubuntu_gets_the_seed_kernel():
    got = choice(KERNELS, UBUNTU, NONE, "seed")
    assert got["errors"] == [] and got["release"] == "6.5.0-41-generic"
    assert "linux-image-6.5.0-41-generic" in got["packages"]


@pytest.mark.parametrize("host,own,words", [
    (DEBIAN, NONE, "stack profile seed has no kernel for Debian (llmhost_stack_profile.kernel lists Ubuntu)"),
    (dict(UBUNTU, os_family="RedHat"), NONE, "has no kernel for Ubuntu"),
    (DEBIAN, {"kernel_packages": ["linux-image-amd64"], "kernel_release": ""}, None),
    (DEBIAN, {"kernel_packages": ["linux-image-amd64"], "kernel_release": "6.1.0-41-amd64"}, None),
    (DEBIAN, {"kernel_packages": ["nvidia-kernel"], "kernel_release": ""}, "packages named linux-*"),
    (DEBIAN, {"kernel_packages": ["linux-image-amd64"], "kernel_release": "6.5.0-41-generic"},
     "kernel_release / profile kernel release 6.5.0-41-generic is not a Debian kernel"),
    (UBUNTU, {"kernel_packages": [], "kernel_release": "6.1.0-41-amd64"}, "6.1.0-41-amd64 is not a Ubuntu kernel"),
])
def test_a_kernel_that_does_not_fit_the_host_is_named(host, own, words):
    errors = choice(KERNELS, host, own, "seed")["errors"]
    assert (errors == []) if words is None else (len(errors) == 1 and words in errors[0]), errors
