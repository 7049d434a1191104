"""model_check's decisions on folders as path_info reports them (the checks of a real model folder:
tests/integration/test_model_check_tiny_qwen.py)."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import model_check


def test_unreadable_config_is_an_error_not_a_traceback(tmp_path):
    assert model_check.check(str(tmp_path))["errors"][0].startswith("config.json cannot be read")


D = "/srv/llmhost/models/qwen"
OURS = {D: {"exists": True}, D + "/" + model_check.MANIFEST: {"exists": True, "content": "{}"},
        D + ".old": {"exists": True}, D + ".old/" + model_check.MANIFEST: {"exists": True},
        D + ".previous": {"exists": True}, D + ".previous/" + model_check.MANIFEST: {"exists": True, "content": "{}"}}


@pytest.mark.parametrize("change,foreign", [
    ({}, []),
    ({D + "/" + model_check.MANIFEST: {"exists": False}}, [D + " exists"]),
    ({D + ".old/" + model_check.MANIFEST: {"exists": False}}, [D + ".old exists"]),
    ({D + ".previous/" + model_check.MANIFEST: {"exists": True, "error": "Permission denied"}}, [D + ".previous exists"]),
    ({D: {"exists": False}, D + "/" + model_check.MANIFEST: {"exists": False}}, []),
])
def test_a_model_folder_without_the_collections_manifest_is_someone_elses(change, foreign):
    assert model_check.foreign_folders(dict(OURS, **change), D) == foreign


def manifest(source):
    return {"exists": True, "content": '{"source": "%s"}' % source}


WANT = "Qwen/Qwen3-4B@" + "a" * 40
LOCAL = "/srv/src/qwen"
LOCAL_OK = {LOCAL: {"type": "directory"}, LOCAL + "/config.json": {"type": "file"}}


@pytest.mark.parametrize("change,keep,local,fetch,restore,errors", [
    # nothing there: fetch
    ({D: {"exists": False}, D + "/" + model_check.MANIFEST: {"exists": False}}, True, None, True, False, []),
    # the wanted model in place: nothing to do
    ({D + "/" + model_check.MANIFEST: manifest(WANT)}, True, None, False, False, []),
    # the wanted model kept from before: put back, without a download, unless keeping is off
    ({D + ".previous/" + model_check.MANIFEST: manifest(WANT)}, True, None, False, True, []),
    ({D + ".previous/" + model_check.MANIFEST: manifest(WANT)}, False, None, True, False, []),
    # someone else's folder, and a local source that is a link
    ({D + "/" + model_check.MANIFEST: {"exists": False}}, True, None, True, False, [D + " exists without"]),
    (LOCAL_OK, True, LOCAL, True, False, []),
    (dict(LOCAL_OK, **{LOCAL: {"type": "link"}}), True, LOCAL, True, False, ["model_local_path=/srv/src/qwen is not"]),
    (LOCAL_OK, True, "srv/src/qwen", True, False, ["model_local_path=srv/src/qwen is not a real folder"]),
])
def test_the_swap_plan_fetches_restores_or_keeps_and_refuses_what_is_not_ours(change, keep, local, fetch, restore,
                                                                              errors):
    got = model_check.swap_plan(dict(OURS, **change), D, WANT, keep, local)
    assert (got["fetch"], got["restore"]) == (fetch, restore)
    assert len(got["errors"]) == len(errors) and all(g.startswith(e) for e, g in zip(errors, got["errors"])), got


OLD = "Qwen/Qwen3-4B@" + "b" * 40


@pytest.mark.parametrize("change, restore, origin, errors", [
    # the canary rolled back: the model kept from before comes back, whatever model_revision (WANT) says
    ({D + "/" + model_check.MANIFEST: manifest(WANT), D + ".previous/" + model_check.MANIFEST: manifest(OLD)},
     True, OLD, []),
    # kept from before is what is in place already: nothing to do
    ({D + "/" + model_check.MANIFEST: manifest(OLD), D + ".previous/" + model_check.MANIFEST: manifest(OLD)},
     False, OLD, []),
    # nothing kept: refused by name, nothing fetched
    ({D + "/" + model_check.MANIFEST: manifest(WANT), D + ".previous": {"exists": False},
      D + ".previous/" + model_check.MANIFEST: {"exists": False}}, False, None, ["model_rollback=true: no model is kept"]),
])
def test_a_rollback_puts_back_the_model_kept_from_before(change, restore, origin, errors):
    got = model_check.swap_plan(dict(OURS, **change), D, WANT, False, None, rollback=True)
    assert (got["fetch"], got["restore"], got["origin"]) == (False, restore, origin)
    assert len(got["errors"]) == len(errors) and all(g.startswith(e) for e, g in zip(errors, got["errors"])), got


def test_without_a_rollback_the_origin_is_the_one_asked_for():
    assert model_check.swap_plan(OURS, D, WANT, True)["origin"] == WANT
