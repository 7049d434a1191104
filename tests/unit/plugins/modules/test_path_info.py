"""path_info on real files: what is at each path, the text of the files asked for, errors instead of
failures, and nothing written."""
import grp
import os
import pwd

import pytest
from ansible_collections.llmhost.vllm.plugins.modules import path_info


ME = pwd.getpwuid(os.geteuid()).pw_name
MY_GROUP = grp.getgrgid(os.getegid()).gr_name


@pytest.fixture
def run(run_main):
    def run_path_info(args, check=False):
        return run_main(path_info.main, dict(args, _ansible_check_mode=check))
    return run_path_info


def test_looks_and_reads_in_one_run(run, tmp_path):
    (tmp_path / "out").mkdir(mode=0o750)
    (tmp_path / "out" / "stamp.json").write_text('{"tool": "x"}\n')
    (tmp_path / "link").symlink_to(tmp_path / "out" / "stamp.json")
    missing = str(tmp_path / "out.previous" / "stamp.json")
    result = run({"paths": [str(tmp_path / "out")],
                  "read": [str(tmp_path / "out" / "stamp.json"), str(tmp_path / "link"), missing]})
    found = result["paths"]
    assert result["changed"] is False
    folder = found[str(tmp_path / "out")]
    assert folder == {"exists": True, "type": "directory", "size": folder["size"], "mode": "0750",
                      "owner": ME, "group": MY_GROUP}
    assert found[str(tmp_path / "out" / "stamp.json")]["content"] == '{"tool": "x"}\n'
    assert found[str(tmp_path / "link")]["type"] == "link" and found[str(tmp_path / "link")]["content"] == '{"tool": "x"}\n'
    assert found[missing] == {"exists": False}
    assert sorted(os.listdir(tmp_path)) == ["link", "out"], "nothing written"


def test_a_folder_asked_to_be_read_is_only_looked_at(run, tmp_path):
    found = run({"read": [str(tmp_path)]})["paths"][str(tmp_path)]
    assert found["type"] == "directory" and "content" not in found and "error" not in found


def test_a_file_too_large_or_unreadable_is_an_error_not_a_failure(run, tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 65)
    big.chmod(0o644)
    locked = tmp_path / "locked"
    locked.write_text("secret")
    locked.chmod(0)
    result = run({"read": [str(big), str(locked)], "read_max": 64}, check=True)
    assert result["paths"][str(big)] == {"exists": True, "type": "file", "size": 65, "mode": "0644", "owner": ME,
                                         "group": MY_GROUP, "error": "larger than 64 bytes"}
    if os.geteuid() != 0:
        assert "content" not in result["paths"][str(locked)] and result["paths"][str(locked)]["error"]


def test_bad_bytes_are_replaced_not_raised(run, tmp_path):
    path = tmp_path / "bin"
    path.write_bytes(b"ok\xff\n")
    assert run({"read": [str(path)]})["paths"][str(path)]["content"] == "ok\ufffd\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away takes root")
def test_an_owner_the_host_has_no_name_for_is_its_number(run, tmp_path):
    path = tmp_path / "theirs"
    path.mkdir()
    os.chown(path, 54321, 54322)
    found = run({"paths": [str(path)]})["paths"][str(path)]
    assert (found["owner"], found["group"]) == ("54321", "54322")
