"""module_utils/restarts.py: which replicas restart now and which are left pending, through a canary's runs."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils.restarts import UNKNOWN, restart_plan


def wrote(before, after):
    """files_and_folders' result for an environment file that held ``before`` and now holds ``after``."""
    return {"checksum": after, "previous_checksum": before, "changed": before != after}


NAMES = ["0", "1"]
CASES = [
    # (what happened, envs, pending, only, changed_all, changed, now, pending after)
    ("nothing changed", {"0": wrote("a", "a"), "1": wrote("a", "a")}, {}, [], False, [], [], {}),
    ("a plain change restarts both", {"0": wrote("a", "b"), "1": wrote("a", "b")}, {}, [], False, [], ["0", "1"], {}),
    ("one file changed", {"0": wrote("a", "a"), "1": wrote("a", "b")}, {}, [], False, [], ["1"], {}),
    ("the canary: only 0 now, 1 waits on a", {"0": wrote("a", "b"), "1": wrote("a", "b")}, {}, ["0"], False, [],
     ["0"], {"1": "a"}),
    ("promoted: nothing written, 1 restarts", {"0": wrote("b", "b"), "1": wrote("b", "b")}, {"1": "a"}, [], False, [],
     ["1"], {}),
    ("rolled back: 0 restarts, 1 already runs a", {"0": wrote("b", "a"), "1": wrote("b", "a")}, {"1": "a"}, [], False,
     [], ["0"], {}),
    ("an interrupted canary, then another model: 1 restarts", {"0": wrote("b", "c"), "1": wrote("b", "c")}, {"1": "a"},
     [], False, [], ["0", "1"], {}),
    ("a second canary over a pending replica keeps what it runs", {"0": wrote("b", "c"), "1": wrote("b", "c")},
     {"1": "a"}, ["0"], False, [], ["0"], {"1": "a"}),
    ("the unit changed: every replica", {"0": wrote("a", "a"), "1": wrote("a", "a")}, {}, [], True, [], ["0", "1"], {}),
    ("the unit changed under a canary: 1 waits, whatever its file", {"0": wrote("a", "a"), "1": wrote("a", "a")}, {},
     ["0"], True, [], ["0"], {"1": UNKNOWN}),
    ("a NUMA drop-in changed", {"0": wrote("a", "a"), "1": wrote("a", "a")}, {}, [], False, ["1"], ["1"], {}),
    ("left waiting on a unit change: restarts on the next run", {"0": wrote("a", "a"), "1": wrote("a", "a")},
     {"1": UNKNOWN}, [], False, [], ["1"], {}),
    ("a new replica (no file before) is stale", {"0": wrote("a", "a"), "1": wrote(None, "a")}, {}, [], False, [],
     ["1"], {}),
    ("a pending replica the plan dropped is forgotten", {"0": wrote("a", "a")}, {"1": "x"}, [], False, [], [], {}),
]


@pytest.mark.parametrize("what, envs, pending, only, changed_all, changed, now, left", CASES, ids=[c[0] for c in CASES])
def test_restart_plan(what, envs, pending, only, changed_all, changed, now, left):
    names = [n for n in NAMES if n in envs]
    assert restart_plan(names, envs, pending, only, changed_all, changed) == {"now": now, "pending": left}


def test_the_filter_reads_the_environment_files_by_name():
    from ansible_collections.llmhost.vllm.plugins.filter.restart_plan import restart_plan as the_filter
    files = [dict(wrote("u", "u"), path="/etc/systemd/system/vllm@.service"),
             dict(wrote("a", "b"), path="/etc/llmhost/vllm/0.env"), dict(wrote("a", "b"), path="/etc/llmhost/vllm/1.env"),
             dict(wrote("t", "t2"), path="/etc/llmhost/vllm/prometheus-targets.json")]
    assert the_filter([0, 1], files, {}, only=[0]) == {"now": ["0"], "pending": {"1": "a"}}
