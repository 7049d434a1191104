"""One verdict per value: for every numeric wish of the serving plan, values at and around each bound and at each
class edge (a float where a whole number goes, a boolean, a number as text with spaces, NaN, infinity, an empty
string) get the same verdict, in the same words, from
- the first play (its type check over the host's values, then the role's table: filters site_input_errors and
  role_input_errors),
- the role used alone (filter role_alone_errors, then the same table),
- the planner (serving_plan.make_plan on the public 2x RTX 4090 facts, a Qwen2.5-3B-shaped model).
The planner may refuse more for reasons of this host and model (a tensor-parallel size larger than its GPUs, a context
that does not fit); those refusals name the variable in other words and are not input verdicts."""
import functools
import json
import math
from pathlib import Path

import pytest
import shapes
import yaml

from ansible_collections.llmhost.vllm.plugins.filter.role_alone_errors import role_alone_errors
from ansible_collections.llmhost.vllm.plugins.filter.site_input_errors import site_input_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs, wishes
from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = yaml.safe_load((ROOT / "roles" / "vllm_service" / "defaults" / "main.yml").read_text())
TABLE = json.loads((ROOT / "roles" / "vllm_service" / "files" / "vllm-options" / "0.33.0.json").read_text())


def edges(kind, low, high):
    step = 1 if kind == "int" else 0.01
    values = [low, low - step, low + step, 10 ** 9 if high is None else high, math.nan, math.inf, True, "", " 5 "]
    values += [] if high is None else [high + step, high - step]
    values += [low + 0.5, float(low + 1)] if kind == "int" else [str(low + step)]
    return values


CASES = [(key, value) for key, (kind, low, high) in sorted(wishes.WISH_RANGES.items()) for value in edges(kind, low, high)]


def _table_words(name, value):
    values = dict({n: DEFAULTS.get(n) for n in role_inputs.names("vllm_service")}, **{name: value})
    return [line for line in role_inputs.errors("vllm_service", values) if line.startswith(name)]


def first_play(name, value):
    return site_input_errors({name: value}) or _table_words(name, value)


def role_alone(name, value):
    return role_alone_errors({name: value}, "vllm_service") or _table_words(name, value)


def planner(key, value, gpus, p2p):
    try:
        sp.make_plan(gpus, p2p, shapes.QWEN25_3B, {key: value, "model_path": "/srv/models/m"}, TABLE)
    except sp.PlanError as error:
        return str(error)
    return ""


# The other wishes, at the edges of their types and choices: the planner checks every wish (wishes.py), so it must
# refuse, in the same words, what the first play and the role alone refuse, and take what they take (the test below
# takes both sets).
def type_edges(key):
    wish = wishes.WISHES[key]
    if wish["type"] == "bool":
        return [True, "yes", "Yes", "yes ", "maybe", 2, "", None]
    if wish["type"] == "list":
        return [[], ["--seed", "1"], "--seed 1", {"a": 1}, 7]
    if "choices" in wish:
        return [wish["choices"][0], wish["choices"][0].upper(), " " + wish["choices"][-1], "", "none", 1]
    return []


OTHER = [(key, value) for key in sorted(set(wishes.WISHES) - set(wishes.WISH_RANGES)) for value in type_edges(key)]


# What the planner says when it refuses a value's type, range or choice (other refusals name the variable too).
REFUSALS = ("must be a number", ": got ", "must be one of", "must be a list")


@pytest.mark.parametrize("key,value", CASES + OTHER, ids=["%s=%r" % case for case in CASES + OTHER])
def test_the_first_play_the_role_alone_and_the_planner_give_one_verdict(rtx4090x2, key, value):
    name = "vllm_service_" + key
    site, alone = first_play(name, value), role_alone(name, value)
    assert site == alone
    said = planner(key, value, *rtx4090x2)
    if site:
        assert all(line in said for line in site), (site, said)
    else:
        assert not any(line.startswith(name) and any(words in line for words in REFUSALS)
                       for line in said.split("; ")), said


def test_the_type_edges_reach_every_wish_that_has_no_range():
    typed = {k for k, w in wishes.WISHES.items() if "range" not in w and (w["type"] in ("bool", "list") or "choices" in w)}
    assert {key for key, _value in OTHER} == typed
    assert any(first_play("vllm_service_" + k, v) for k, v in OTHER)


@functools.lru_cache(maxsize=None)
def _role_defaults(role):
    return yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()) or {}


def _kind(role, name):
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return next(s["options"][name]["type"] for s in specs.values() if name in (s.get("options") or {}))


# Every other role's ranged number (role_inputs.TABLES), with the class edges of its declared type and its bounds;
# the plan's wishes are taken above, with the planner's verdict too.
RANGED = [(role, name, _kind(role, name), low, high) for role, table in sorted(role_inputs.TABLES.items())
          for name, (low, high) in sorted(table.get("ranges", {}).items())
          if role != "vllm_service" or name[len("vllm_service_"):] not in wishes.WISH_RANGES]
EVERY = [(role, name, value) for role, name, kind, low, high in RANGED for value in edges(kind, low, high)]


# what a role's validate hands its table beside its variables, where the table reads it whatever the number
_INSTALL = yaml.safe_load((ROOT / "roles" / "vllm_install" / "vars" / "main.yml").read_text())
GIVEN = {"vllm_install": {"profile_name": "current", "profile_build_clones": [], "method": "wheel",
                          "methods": _INSTALL["__vllm_install_methods"],
                          "arch_list_pattern": _INSTALL["__vllm_install_arch_list_pattern"]}}


def _words(role, name, value):
    values = dict({n: _role_defaults(role).get(n) for n in role_inputs.names(role)}, **GIVEN.get(role, {}))
    values[name] = value
    return [line for line in role_inputs.errors(role, values) if line.startswith(name)]


@pytest.mark.parametrize("role,name,value", EVERY, ids=["%s=%r" % case[1:] for case in EVERY])
def test_every_ranged_number_gets_one_verdict_from_the_first_play_and_the_role_alone(role, name, value):
    site = site_input_errors({name: value}) or _words(role, name, value)
    alone = role_alone_errors({name: value}, role) or _words(role, name, value)
    assert site == alone
    bad = (isinstance(value, bool) or value in ("", " 5 ") or (isinstance(value, float) and not math.isfinite(value)))
    if bad:
        assert site, "%s=%r passes" % (name, value)


def test_the_table_takes_every_role_s_ranged_numbers():
    assert {role for role, *_rest in RANGED} >= {"gateway", "monitoring", "doctor", "ray_cluster", "benchmark"}
    assert all(kind in ("int", "float") for _role, _name, kind, _low, _high in RANGED), RANGED
