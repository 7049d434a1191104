"""Paths the roles create, own, write or remove: what may land in a unit, a script or an rm."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.path_errors import path_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import paths


@pytest.mark.parametrize("value", ["/var/cache/vllm", "/srv/llmhost/models", "/opt/llmhost/vllm/", "/data/m@2+x_y-z.1"])
def test_plain_deep_paths_pass(value):
    assert paths.path_problem(value) is None


@pytest.mark.parametrize("value,words", [
    ("/", "system folder"),
    ("/var/cache", "system folder"),
    ("/etc", "system folder"),
    ("/srv", "at least 2 levels"),
    ("/etc/systemd/system", "system folder"),
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
