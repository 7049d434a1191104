"""One verdict per value: for every numeric wish of the serving plan, values at and around each bound and at each
class edge (a float where a whole number goes, a boolean, a number as text with spaces, NaN, infinity, an empty
string) get the same verdict, in the same words, from
- the first play (its type check over the host's values, then the role's table: filters site_input_errors and
  role_input_errors),
- the role used alone (filter role_alone_errors, then the same table),
- the planner (serving_plan.make_plan on the public 2x RTX 4090 facts, a Qwen2.5-3B-shaped model).
The planner may refuse more for reasons of this host and model (a tensor-parallel size larger than its GPUs, a context
that does not fit); those refusals name the variable in other words and are not input verdicts."""
import json
import math
from pathlib import Path

import pytest
import shapes
import yaml

from ansible_collections.llmhost.vllm.plugins.filter.role_alone_errors import role_alone_errors
from ansible_collections.llmhost.vllm.plugins.filter.site_input_errors import site_input_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs
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


CASES = [(key, value) for key, (kind, low, high) in sorted(sp.WISH_RANGES.items()) for value in edges(kind, low, high)]


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


@pytest.mark.parametrize("key,value", CASES, ids=["%s=%r" % case for case in CASES])
def test_the_first_play_the_role_alone_and_the_planner_give_one_verdict(rtx4090x2, key, value):
    name = "vllm_service_" + key
    site, alone = first_play(name, value), role_alone(name, value)
    assert site == alone
    said = planner(key, value, *rtx4090x2)
    if site:
        assert all(line in said for line in site), (site, said)
    else:
        assert not any(line.startswith(name) and ("must be a number" in line or ": got " in line)
                       for line in said.split("; ")), said
