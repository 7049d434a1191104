"""Paths the roles create, own, write or remove: what may land in a unit, a script or an rm."""
import re

import pytest

from ansible_collections.llmhost.vllm.plugins.filter.path_errors import path_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import paths


@pytest.mark.parametrize("value", ["/var/cache/vllm", "/srv/llmhost/models", "/opt/llmhost/vllm/", "/data/m@2+x_y-z.1"])
def test_plain_deep_paths_pass(value):
    assert paths.path_problem(value) is None


def test_a_unit_file_the_roles_write_and_remove_passes_but_is_no_folder_to_hand_over():
    """The roles' own units live in /etc/systemd/system, and the uninstall removes them through path_problem; a
    folder handed over there is refused by the first play's folder check (input_classes), not here."""
    assert paths.path_problem("/etc/systemd/system/llmhost-gpu-exporter.service") is None
    assert "lies inside systemd's unit folder" in paths.unit_dir_problem("/etc/systemd/system/vllm@.service.d/x")
    assert paths.unit_dir_problem("/etc/systemd/systemx/y") is None


@pytest.mark.parametrize("value,words", [
    ("/", "system folder"),
    ("/var/cache", "system folder"),
    ("/etc", "system folder"),
    ("/srv", "at least 2 levels"),
    ("/etc/systemd/system", "system folder"),
    # shared memory, PATH's folders, key stores, systemd's and the schedulers' folders
    ("/dev/shm", "system folder"), ("/usr/local/sbin", "system folder"), ("/etc/ssl/private", "system folder"),
    ("/lib/systemd/system", "system folder"), ("/etc/cron.d/", "system folder"), ("/etc/sudoers.d", "system folder"),
    ("var/cache/vllm", "not an absolute path"),
    ("", "not an absolute path"),
    (["/a/b"], "not an absolute path"),
    ("/srv/../etc/x", "an empty, . or .. part"),
    ("/srv//x", "an empty, . or .. part"),
    ("/var/cache/vllm\nExecStartPre=+/bin/sh", "characters other than"),
    ("/var/cache/my models", "characters other than"),
    ("/var/cache/$HOME", "characters other than"),
    ("/var/cache/a\"b", "characters other than"),
    ("/var/cache/vllm\\", "characters other than"),
])
def test_what_cannot_land_in_a_unit_or_an_rm_is_refused(value, words):
    assert words in paths.path_problem(value)


def test_errors_name_the_variable_and_honour_optional_and_dropins():
    found = path_errors({"a_dir": "/", "b_dir": "", "c_file": "/etc/sysctl.conf", "d_file": "/etc/sysctl.d/60-x.conf"},
                        optional=["b_dir"], dropins={"c_file": ["/etc/sysctl.d"], "d_file": ["/etc/sysctl.d"]})
    assert found == ["a_dir='/' is a system folder or too close to one (at least 2 levels below /, such as "
                     "/var/cache/llmhost)",
                     "c_file='/etc/sysctl.conf' must be a file directly in /etc/sysctl.d (a drop-in, never the "
                     "distribution's own file)"]
    assert path_errors({"b_dir": ""}) == ["b_dir='' is not an absolute path"]


@pytest.mark.parametrize("value,problem", [
    ("/usr", None),                                   # Debian's nvidia-cuda-toolkit: nvcc in /usr/bin
    ("/usr/local/cuda-12.1", None),
    ("/srv/src/vllm-0.6.3.tar.gz", None),
    ("/", "is / itself"),
    ("usr", "is not an absolute path"),
    ("/usr/../etc", "has an empty, . or .. part"),
    ("/srv/my src.tar.gz", "has characters other than"),
])
def test_a_path_the_role_only_reads_may_be_a_system_folder_but_stays_plain(value, problem):
    found = paths.path_problem(value, read_only=True)
    assert (found is None) if problem is None else (problem in found), found


def test_read_only_names_only_loosen_their_own_check():
    found = path_errors({"toolkit": "/usr", "build_dir": "/usr"}, read_only=["toolkit"])
    assert found == ["build_dir='/usr' is a system folder or too close to one (at least 2 levels below /, such as "
                     "/var/cache/llmhost)"]


@pytest.mark.parametrize("name,kept", [
    ("gpu-box-1", True), ("gpu1.lab.example.org", True), ("GPU_2", True),
    ("../../etc/cron.d/x", False), ("a/b", False), ("a b", False), (".hidden", False), ("", False), ("ü", False),
])
def test_a_host_name_becomes_one_file_name(name, kept):
    from ansible_collections.llmhost.vllm.plugins.module_utils.paths import file_part
    got = file_part(name)
    assert (got == name) is kept
    assert got and "/" not in got and not got.startswith(".") and re.match(r"[A-Za-z0-9._-]+\Z", got), got


def test_two_host_names_never_share_a_file():
    from ansible_collections.llmhost.vllm.plugins.module_utils.paths import file_part
    names = ["a/b", "a_b", "a b", "a\\b", "../a_b"]
    assert len({file_part(n) for n in names}) == len(names)


def test_a_folder_read_back_is_real_and_links_are_not_followed(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}")
    (tmp_path / "link").symlink_to(run)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "summary.json").symlink_to(run / "summary.json")
    (tmp_path / "dir-summary").mkdir()
    (tmp_path / "dir-summary" / "summary.json").mkdir()
    got = paths.real_folder_errors({"a": str(run), "b": str(tmp_path / "link"), "c": str(tmp_path / "other"),
                                    "d": str(tmp_path / "dir-summary"), "e": str(tmp_path / "none"),
                                    "f": str(run / "summary.json")}, holds="summary.json")
    assert [line.split("=", 1)[0] for line in got] == ["b", "c", "d", "e", "f"]
    assert "is a symbolic link, which is not followed" in got[0] and "is a symbolic link" in got[1]
    assert "is not a regular file" in got[2] and got[3].endswith("does not exist") and "is not a folder" in got[4]
