"""files_and_folders on real files: one run settles content and attributes, a re-run changes nothing,
check mode writes nothing, validate refuses before the old file is touched, a new file never
appears with looser permissions than asked, and the content stays out of the host's log."""
import json
import os
import stat

import pytest
from ansible_collections.llmhost.vllm.plugins.modules import files_and_folders


@pytest.fixture
def run(run_main):
    def run_files_and_folders(args, check=False, diff=False):
        return run_main(files_and_folders.main, dict(args, _ansible_check_mode=check, _ansible_diff=diff))
    return run_files_and_folders


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_writes_then_changes_nothing(run, tmp_path):
    path = tmp_path / "a.conf"
    first = run({"path": str(path), "content": "x = 1\n", "mode": "0640"})
    assert first["changed"] and first["content_changed"] and first["rc"] == 0
    assert path.read_text() == "x = 1\n" and mode_of(path) == 0o640
    again = run({"path": str(path), "content": "x = 1\n", "mode": "0640"})
    assert again["changed"] is False and again["content_changed"] is False
    assert again["checksum"] == first["checksum"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.conf"], "no temporary file left behind"


def test_a_mode_alone_is_mended_in_place(run, tmp_path):
    path = tmp_path / "a.conf"
    path.write_text("same\n")
    path.chmod(0o666)
    inode = path.stat().st_ino
    result = run({"path": str(path), "content": "same\n", "mode": "0644"}, diff=True)
    assert result["changed"] and not result["content_changed"]
    assert mode_of(path) == 0o644 and path.stat().st_ino == inode
    assert result["diff"]["before"]["mode"] == "0666" and result["diff"]["after"]["mode"] == "0644"


def test_check_mode_writes_nothing(run, tmp_path):
    path = tmp_path / "a.conf"
    path.write_text("old\n")
    result = run({"path": str(path), "content": "new\n"}, check=True, diff=True)
    assert result["changed"] and path.read_text() == "old\n"
    assert result["diff"]["before"] == "old\n" and result["diff"]["after"] == "new\n"


def test_a_new_secret_is_never_visible_with_looser_permissions(run, tmp_path, monkeypatch):
    path = tmp_path / "token"
    seen = []
    real_replace = os.replace

    def watching_replace(src, dst):
        seen.append(mode_of(src))
        real_replace(src, dst)

    monkeypatch.setattr(files_and_folders.os, "replace", watching_replace)
    result = run({"path": str(path), "content": "hf_secret", "mode": "0600"})
    assert result["changed"] and seen == [0o600] and mode_of(path) == 0o600


def test_validate_refuses_and_leaves_the_old_file(run, tmp_path):
    path = tmp_path / "rules.yml"
    path.write_text("good\n")
    result = run({"path": str(path), "content": "bad\n", "validate": "grep -q good %s"})
    assert result["rc"] == 1 and "validate refused" in result["msg"]
    assert path.read_text() == "good\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rules.yml"]
    accepted = run({"path": str(path), "content": "good too\n", "validate": "grep -q good %s"})
    assert accepted["changed"] and path.read_text() == "good too\n"


def test_refuses_a_folder_and_a_missing_folder(run, tmp_path):
    assert "is a folder" in run({"path": str(tmp_path), "content": "x"})["msg"]
    assert "does not exist" in run({"path": str(tmp_path / "no" / "f"), "content": "x"})["msg"]


def test_the_content_never_reaches_the_log_or_the_arguments(run, tmp_path, monkeypatch):
    logged = []
    monkeypatch.setattr(files_and_folders.AnsibleModule, "log", lambda self, msg, log_args=None: logged.append(msg))
    result = run({"path": str(tmp_path / "t"), "content": "hf_topsecret"})
    assert result["changed"]
    assert "hf_topsecret" not in " ".join(logged)
    assert "hf_topsecret" not in json.dumps(result["invocation"])


def test_a_file_that_cannot_be_renamed_over_is_written_in_place_only_with_unsafe_writes(run, tmp_path, monkeypatch):
    path = tmp_path / "bind-mounted"
    path.write_text("old\n")

    def busy(src, dst):
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(files_and_folders.os, "replace", busy)
    refused = run({"path": str(path), "content": "new\n"})
    assert refused["rc"] == 1 and "could not rename" in refused["msg"] and path.read_text() == "old\n"
    written = run({"path": str(path), "content": "new\n", "unsafe_writes": True, "mode": "0640"})
    assert written["changed"] and path.read_text() == "new\n" and mode_of(path) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["bind-mounted"]


def test_several_files_in_one_run_each_with_its_own_attributes(run, tmp_path):
    conf, lock = tmp_path / "pip.conf", tmp_path / "requirements.lock"
    lock.write_text("a==1\n")
    lock.chmod(0o644)
    args = {"files": [{"path": str(conf), "content": "[global]\n", "mode": "0600"},
                      {"path": str(lock), "content": "a==1\n"}], "mode": "0644"}
    first = run(args, diff=True)
    assert first["changed"] and [f["changed"] for f in first["files"]] == [True, False]
    assert [f["content_changed"] for f in first["files"]] == [True, False]
    assert mode_of(conf) == 0o600 and mode_of(lock) == 0o644 and conf.read_text() == "[global]\n"
    assert [d["after_header"] for d in first["diff"]] == [str(conf), str(lock)]
    assert "[global]" not in json.dumps(first["invocation"]), "contents are shown by size and checksum only"
    assert run(args)["changed"] is False


def test_a_later_file_is_validated_with_the_earlier_ones_in_place(run, tmp_path):
    """nginx -t and promtool read the files a configuration includes: list order is write order."""
    included, main = tmp_path / "clients.conf", tmp_path / "server.conf"
    check = "sh -c 'grep -q ok %s && grep -qx key {}'".format(included)
    result = run({"files": [{"path": str(included), "content": "key\n"},
                            {"path": str(main), "content": "ok\n", "validate": check}]})
    assert result["changed"] and main.read_text() == "ok\n"
    refused = run({"files": [{"path": str(included), "content": "nokey\n"},
                             {"path": str(main), "content": "ok again\n", "validate": check}]})
    assert refused["failed"] and main.read_text() == "ok\n", "the refused file is left as it was"
    assert included.read_text() == "nokey\n", "files before the refused one stay written (each is atomic on its own)"


def test_files_and_path_do_not_mix(run, tmp_path):
    result = run({"path": str(tmp_path / "a"), "content": "one file", "files": [{"path": str(tmp_path / "b"), "content": "another file"}]})
    assert result["failed"] and "mutually exclusive" in result["msg"]


def test_folders_and_their_parents_are_made_before_the_files_then_left_alone(run, tmp_path):
    top, facts = tmp_path / "etc" / "llmhost", tmp_path / "etc" / "llmhost" / "facts.d"
    args = {"directories": [{"path": str(facts), "mode": "0750"}],
            "path": str(facts / "model.fact"), "content": "{}\n", "mode": "0644"}
    first = run(args, diff=True)
    assert first["changed"] and first["directories"] == [{"path": str(facts), "created": True, "changed": True}]
    assert facts.joinpath("model.fact").read_text() == "{}\n"
    assert mode_of(facts) == 0o750 and mode_of(top) == 0o750, "a parent made for a folder gets its attributes"
    assert first["diff"][0]["after"] == {"path": str(facts), "state": "directory"} and len(first["diff"]) == 2
    again = run(args)
    assert again["changed"] is False and again["directories"][0] == {"path": str(facts), "created": False, "changed": False}


def test_a_folder_in_place_is_mended_and_check_mode_makes_none(run, tmp_path):
    there, new = tmp_path / "there", tmp_path / "new" / "deeper"
    there.mkdir(mode=0o777)
    there.chmod(0o777)
    args = {"directories": [{"path": str(there), "mode": "0755"}, {"path": str(new), "mode": "0700"}],
            "files": [{"path": str(new / "token"), "content": "secret\n"}], "mode": "0600"}
    planned = run(args, check=True)
    assert planned["changed"] and [d["created"] for d in planned["directories"]] == [False, True]
    assert mode_of(there) == 0o777 and not (tmp_path / "new").exists(), "check mode makes and mends nothing"
    done = run(args)
    assert mode_of(there) == 0o755 and mode_of(new) == 0o700 and (new / "token").read_text() == "secret\n"
    assert [d["changed"] for d in done["directories"]] == [True, True]


def test_a_folder_path_that_is_a_file_fails_before_any_file_is_written(run, tmp_path):
    (tmp_path / "plain").write_text("a file\n")
    result = run({"directories": [{"path": str(tmp_path / "plain" / "sub"), "mode": "0755"}],
                  "path": str(tmp_path / "out"), "content": "x\n"})
    assert result["failed"] and "is no folder" in result["msg"] and not (tmp_path / "out").exists()
