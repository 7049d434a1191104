"""sysctl_output: what `sysctl KEY...` prints becomes a comparable dict."""
import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.llmhost.vllm.plugins.filter.sysctl_output import sysctl_output


def test_parses_lines_and_normalises_tabs():
    out = ["vm.swappiness = 1", "net.ipv4.tcp_rmem = 4096\t131072\t6291456", "kernel.core_pattern = core"]
    assert sysctl_output(out) == {
        "vm.swappiness": "1",
        "net.ipv4.tcp_rmem": "4096 131072 6291456",
        "kernel.core_pattern": "core",
    }


def test_accepts_a_whole_string_and_skips_noise():
    text = "sysctl: cannot stat /proc/sys/foo: No such file\nvm.swappiness = 60\n\nkernel.domainname = \n"
    assert sysctl_output(text) == {"vm.swappiness": "60", "kernel.domainname": ""}


def test_rejects_other_types():
    with pytest.raises(AnsibleFilterError):
        sysctl_output({"vm.swappiness": 1})
