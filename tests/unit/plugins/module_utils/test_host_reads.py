"""host_reads: the host report's plain reads (sysctl values, /proc/cmdline, the Pythons), on the real H200 captures
and on trees that lack what a host may lack."""
import os

import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import host_reads


def test_sysctl_values_come_from_the_capture_and_missing_keys_are_left_out(h200x2):
    notes = []
    got = host_reads.sysctl_values(h200x2.root, ["vm.swappiness", "kernel.numa_balancing", "vm.no_such_key"], notes)
    want = {k: open(os.path.join(h200x2.root, "proc/sys", k.replace(".", "/"))).read().strip()
            for k in ("vm.swappiness", "kernel.numa_balancing")}
    assert got == want and notes == []


@pytest.mark.parametrize("key", ["../../etc/shadow", "vm..swappiness", "vm.//", "", " vm.swappiness", "vm.swappiness\n"])
def test_a_name_that_is_not_a_sysctl_key_is_not_read(tmp_path, key):
    notes = []
    assert host_reads.sysctl_values(str(tmp_path), [key], notes) == {}
    assert notes == ["%r is not a sysctl key; not read" % key]


def test_values_are_spaced_as_sysctl_prints_them_and_a_slash_is_a_dot_in_a_name(tmp_path):
    (tmp_path / "proc/sys/net/ipv4/conf/eth0.100").mkdir(parents=True)
    (tmp_path / "proc/sys/net/ipv4/tcp_rmem").write_text("4096\t131072\t6291456\n")
    (tmp_path / "proc/sys/net/ipv4/conf/eth0.100/rp_filter").write_text("2\n")
    got = host_reads.sysctl_values(str(tmp_path), ["net.ipv4.tcp_rmem", "net.ipv4.conf.eth0/100.rp_filter"], [])
    assert got == {"net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.conf.eth0/100.rp_filter": "2"}


def test_an_unreadable_key_is_a_note_not_a_failure(tmp_path):
    (tmp_path / "proc/sys/vm/swappiness").mkdir(parents=True)  # reading a folder fails like a denied read does
    notes = []
    assert host_reads.sysctl_values(str(tmp_path), ["vm.swappiness"], notes) == {}
    assert len(notes) == 1 and notes[0].startswith("sysctl vm.swappiness could not be read")


def test_the_command_line_is_read_as_is_or_said_missing(tmp_path):
    notes = []
    assert host_reads.cmdline(str(tmp_path), notes) == "" and "/proc/cmdline could not be read" in notes[0]
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz-6.5.0-41-generic ro quiet\n")
    assert host_reads.cmdline(str(tmp_path), []) == "BOOT_IMAGE=/vmlinuz-6.5.0-41-generic ro quiet\n"


def test_pythons_are_the_versioned_interpreters_of_the_folders_in_version_order(tmp_path):
    for folder, names in {"usr/bin": ["python3", "python3.9", "python3.10", "python3.10-config", "python3.11m"],
                          "usr/local/bin": ["python3.12", "python3.9", "pythonx.1"]}.items():
        (tmp_path / folder).mkdir(parents=True)
        for name in names:
            (tmp_path / folder / name).write_text("")
    (tmp_path / "usr/local/bin/python3.13").symlink_to("/nonexistent/python3.13")  # a link counts, as find's did
    got = host_reads.pythons(str(tmp_path), ["/usr/bin", "/usr/local/bin", "/opt/missing"])
    assert got == ["3.9", "3.10", "3.12", "3.13"]
