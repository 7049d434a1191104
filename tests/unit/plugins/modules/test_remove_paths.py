"""remove_paths on real files: check mode says what would go and removes nothing, a system folder or a path that is
not plain is refused before anything goes, and a second run changes nothing."""
import pytest
from ansible_collections.llmhost.vllm.plugins.modules import remove_paths


@pytest.fixture
def run(run_main):
    def run_remove_paths(args, check=False):
        return run_main(remove_paths.main, dict(args, _ansible_check_mode=check))
    return run_remove_paths


def test_check_mode_says_what_would_go_and_a_real_run_removes_it_once(run, tmp_path):
    venv = tmp_path / "llmhost" / "venv"
    (venv / "bin").mkdir(parents=True)
    args = {"paths": [str(venv)], "folders": [str(venv.parent)]}
    assert run(args, check=True)["removed"] == [str(venv), str(venv.parent)] and venv.exists()
    result = run(args)
    assert (result["changed"], result["removed"], venv.parent.exists()) == (True, [str(venv), str(venv.parent)], False)
    assert run(args)["changed"] is False


@pytest.mark.parametrize("path", ["/etc", "/var/lib", "/opt/../etc", "relative/path", "/srv/a b"])
def test_a_system_folder_or_a_path_that_is_not_plain_is_refused_before_anything_goes(run, tmp_path, path):
    keep = tmp_path / "llmhost"
    keep.mkdir()
    result = run({"paths": [str(keep), path]})
    assert result["rc"] == 1 and "an uninstall removes no such path" in result["msg"] and path in result["msg"]
    assert keep.exists()
