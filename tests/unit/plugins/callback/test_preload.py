"""The preload callback: which plugin files it loads in the controller, and that a file that fails to load is
reported and never stops the others (the run itself is tests/integration/test_preload_callback.py)."""
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.callback.preload import plugin_names, preload

PLUGINS = Path(__file__).resolve().parents[4] / "plugins"


@pytest.mark.parametrize("kind", ["filter", "test", "lookup", "action"])
def test_each_plugin_file_of_a_kind_is_named_once(kind):
    files = sorted("llmhost.vllm." + path.stem for path in (PLUGINS / kind).glob("*.py") if path.stem != "__init__")
    assert sorted(plugin_names(kind)) == files


def test_a_kind_the_collection_lacks_names_nothing():
    assert plugin_names("filter", collection="llmhost.nosuchcollection") == []


@pytest.mark.parametrize("broken,want_failed", [
    (set(), []),
    ({"llmhost.vllm.console_text"}, ["llmhost.vllm.console_text"]),
    ({"llmhost.vllm.console_text", "llmhost.vllm.job_wait"}, ["llmhost.vllm.console_text", "llmhost.vllm.job_wait"]),
])
def test_a_plugin_that_fails_to_load_is_reported_and_the_rest_still_load(broken, want_failed):
    asked = []

    def load(name):
        asked.append(name)
        if name in broken:
            raise ImportError("no module named %s" % name)

    loaded, failed = preload(loaders={"filter": load, "action": load})
    assert asked == plugin_names("filter") + plugin_names("action")
    assert [name for name, _error in failed] == want_failed
    assert all(error.startswith("ImportError: no module named ") for _name, error in failed)
    assert sorted(loaded + [name for name, _error in failed]) == sorted(asked)


def test_the_files_the_first_play_reads_are_parsed_in_the_controller():
    from ansible_collections.llmhost.vllm.plugins.callback.preload import warm_files
    from ansible_collections.llmhost.vllm.plugins.plugin_utils import collection_files
    collection_files._PARSED.clear()
    held = warm_files()
    specs = sorted(str(p) for p in (PLUGINS.parent / "roles").glob("*/meta/argument_specs.yml"))
    assert specs and held == len(collection_files._PARSED)
    assert set(specs) <= {str(Path(p).resolve()) for p in collection_files._PARSED}
    assert warm_files(collection="llmhost.nosuchcollection") == 0


def test_before_a_play_the_controllers_objects_are_frozen_and_later_garbage_is_still_collected():
    import gc
    import weakref

    from ansible_collections.llmhost.vllm.plugins.callback.preload import settle_for_forks

    class Node:
        pass

    gc.unfreeze()
    try:
        assert settle_for_forks() == gc.get_freeze_count() > 0
        later = Node()
        later.me = later  # a cycle made after the freeze
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
