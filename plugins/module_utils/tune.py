# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tuning on the user's own box (issue: playbooks/tune.yml): the planner's choice and its neighbours as candidates,
each re-planned by the planner with its reason, and the rule that picks one from what each measured.

Pure functions. The planner comes in as a function (``plan_for(wishes) -> plan``, raising ``serving_plan.PlanError``
for what cannot work), so a neighbour the planner refuses is dropped with the planner's own words. Measurements come
in as vLLM's benchmark result JSON (``vllm bench serve --save-result``): ``output_throughput`` (generated tokens a
second), ``p95_ttft_ms``, ``failed``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.llmhost.vllm.plugins.module_utils import input_types, value_checks, vllm_options
from ansible_collections.llmhost.vllm.plugins.module_utils.serving_plan import PlanError

GOALS = ("throughput", "latency")
BATCHED_TOKENS = (2048, 8192)


def _candidate(name, wishes, extra_args, reason):
    return {"name": name, "wishes": dict(wishes), "extra_args": list(extra_args), "reason": reason}


def _seqs_neighbours(plan):
    seqs = int(plan["max_num_seqs"])
    out = []
    if seqs >= 2:
        out.append(_candidate("seqs_half", {"max_num_seqs": seqs // 2}, [],
                              "half the planner's %d concurrent sequences (%d): shorter steps, a lower TTFT under load"
                              % (seqs, seqs // 2)))
    out.append(_candidate("seqs_double", {"max_num_seqs": seqs * 2}, [],
                          "twice the planner's %d concurrent sequences (%d): more in flight, if the KV cache holds "
                          "them" % (seqs, seqs * 2)))
    return out


def _other_kv(plan):
    other = "model" if plan["kv_cache_dtype"] == "fp8" else "fp8"
    words = {"fp8": "an FP8 KV cache (one byte a value: twice the tokens, more sequences)",
             "model": "the model's 16-bit KV cache (no FP8 rounding; fewer tokens)"}
    return _candidate("kv_" + other, {"kv_cache_dtype": other}, [], "%s, where the planner chose %s"
                      % (words[other], "FP8" if plan["kv_cache_dtype"] == "fp8" else "16 bits"))


def _other_layout(plan, gpu_count):
    if gpu_count < 2:
        return []
    if plan["mode"] == "replicas":
        return [_candidate("tensor_parallel", {"mode": "tensor_parallel"}, [],
                           "one tensor-parallel server over the GPUs, where the planner chose a replica per GPU")]
    return [_candidate("replicas", {"mode": "replicas"}, [],
                       "a replica per GPU, where the planner chose tensor parallel size %d"
                       % plan["tensor_parallel_size"])]


def neighbours(plan, gpu_count):
    """The planner's choice and the candidates around it, each with its reason (wishes changed, options added)."""
    out = [_candidate("plan", {}, [], "the planner's own choice: %s, %d concurrent sequences, KV cache %s"
                      % (plan["mode"], plan["max_num_seqs"], plan["kv_cache_dtype"]))]
    out += _seqs_neighbours(plan)
    out += [_candidate("batched_%d" % n, {}, ["--max-num-batched-tokens", str(n)],
                       "at most %d tokens a scheduler step (vLLM's chunked prefill budget): %s" % (
                           n, "shorter steps, steadier decode" if n < 4096 else "longer prompts in one step"))
            for n in BATCHED_TOKENS]
    return out + [_other_kv(plan)] + _other_layout(plan, gpu_count)


def _identity(plan):
    return tuple((tuple(r["gpus"]), tuple(r["options"])) for r in plan["replicas"])


def _replanned(plan_for, base, candidate):
    wishes = dict(base, **candidate["wishes"])
    wishes["extra_args"] = list(base.get("extra_args") or []) + candidate["extra_args"]
    return plan_for(wishes)


def candidates(plan_for, base, plan, gpu_count, limit, added=()):
    """``(kept, dropped)``: the planner's choice, its neighbours and the user's own (``added``, each with ``name``,
    ``wishes``, ``extra_args``), each re-planned by the planner, up to ``limit`` in that order. Dropped, each with the
    reason: what the planner refuses, what plans the same servers as one kept, what is beyond the limit."""
    kept, dropped, seen = [], {}, {}
    mine = [_candidate(a["name"], a.get("wishes") or {}, a.get("extra_args") or [], "your own candidate")
            for a in added]
    for one in neighbours(plan, gpu_count) + mine:
        try:
            planned = _replanned(plan_for, base, one)
        except PlanError as e:
            dropped[one["name"]] = "the planner refuses it: %s" % e
            continue
        same = seen.get(_identity(planned))
        if same:
            dropped[one["name"]] = "the same servers as %s" % same
        elif len(kept) >= limit:
            dropped[one["name"]] = "beyond tune_max_candidates=%d" % limit
        else:
            seen[_identity(planned)] = one["name"]
            kept.append(dict(one, plan=planned))
    return kept, dropped


def measured(result):
    """The figures the choice reads from one vLLM benchmark result, or an ``error`` where it has none."""
    if not isinstance(result, dict) or "error" in result:
        return {"error": (result or {}).get("error", "no result") if isinstance(result, dict) else "no result"}
    try:
        figures = {"throughput": float(result["output_throughput"]), "p95_ttft_ms": float(result["p95_ttft_ms"]),
                   "failed": int(result.get("failed") or 0), "completed": int(result.get("completed") or 0)}
    except (KeyError, TypeError, ValueError) as e:
        return {"error": "the benchmark's result lacks %s" % e}
    if not all(math.isfinite(v) for v in (figures["throughput"], figures["p95_ttft_ms"])):
        return {"error": "the benchmark's figures are not finite"}
    return figures


def _out_reason(figures, goal, slo_ms, floor):
    if "error" in figures:
        return figures["error"]
    if figures["failed"]:
        return "%d of its requests failed" % figures["failed"]
    if goal == "throughput" and figures["p95_ttft_ms"] > slo_ms:
        return "P95 TTFT %.0f ms, above tune_slo_p95_ttft_ms=%s" % (figures["p95_ttft_ms"], slo_ms)
    if goal == "latency" and figures["throughput"] < floor:
        return "%.0f tokens/s, below tune_throughput_floor=%s" % (figures["throughput"], floor)
    return None


def choose(results, goal, slo_ms, floor=0.0, incumbent="plan"):
    """The winner of the measured candidates (``results``: name to benchmark result), with why and the ranking.

    ``throughput``: the most generated tokens a second among those with P95 TTFT at or under ``slo_ms``;
    ``latency``: the lowest P95 TTFT among those at or over ``floor`` tokens a second. A candidate that errs or loses
    requests is out. With no candidate left, ``winner`` is None and the planner's choice stays."""
    figures = dict((name, measured(r)) for name, r in results.items())
    out = dict((n, _out_reason(f, goal, slo_ms, floor)) for n, f in figures.items())
    out = dict((n, why) for n, why in out.items() if why)
    left = [n for n in sorted(figures) if n not in out]
    if goal == "throughput":
        ranked = sorted(left, key=lambda n: (-figures[n]["throughput"], figures[n]["p95_ttft_ms"], n))
    else:
        ranked = sorted(left, key=lambda n: (figures[n]["p95_ttft_ms"], -figures[n]["throughput"], n))
    winner = ranked[0] if ranked else None
    return {"winner": winner, "ranked": ranked, "out": out, "figures": figures,
            "why": _why(winner, ranked, figures, goal, incumbent)}


def _why(winner, ranked, figures, goal, incumbent):
    if winner is None:
        return "no candidate met the goal; the planner's own choice stays"
    f = figures[winner]
    said = "%s: %.0f tokens/s at P95 TTFT %.0f ms" % (winner, f["throughput"], f["p95_ttft_ms"])
    base = figures.get(incumbent)
    if winner != incumbent and base and "error" not in base:
        key, word = ("throughput", "the throughput") if goal == "throughput" else ("p95_ttft_ms", "the P95 TTFT")
        said += ", %.2fx %s of the planner's choice (%s)" % (f[key] / base[key], word, incumbent)
    elif winner == incumbent:
        said += ": the planner's own choice is the best measured"
    return said + ("; runner-up %s" % ranked[1] if len(ranked) > 1 else "")


# The first play's refusals of the tuning's settings, each naming its variable and what it may be.

SETTINGS = {  # variable: (argument spec option, low, high; None: no bound)
    "tune_goal": ({"type": "str", "choices": list(GOALS)}, None, None),
    "tune_slo_p95_ttft_ms": ({"type": "float"}, 1, 3600000),
    "tune_throughput_floor": ({"type": "float"}, 0, None),
    "tune_max_candidates": ({"type": "int"}, 1, 32),
    "tune_allow_downtime": ({"type": "bool"}, None, None),
}
WORKLOAD_KEYS = ("input_len", "output_len", "concurrency")


def _setting_errors(v):
    out = []
    for name, (option, low, high) in sorted(SETTINGS.items()):
        wrong = input_types.problem(name, v.get(name), option)
        if wrong or low is None:
            out += [wrong] if wrong else []
            continue
        number = float(v.get(name))
        if not math.isfinite(number) or number < low or (high is not None and number > high):
            out.append("%s=%s must be a finite number from %s%s" % (
                name, v.get(name), low, " up" if high is None else " to %s" % high))
    return out


def _workload_errors(workload):
    if workload in (None, {}):
        return []
    if not isinstance(workload, dict) or sorted(workload) != sorted(WORKLOAD_KEYS):
        return ["tune_workload must be a mapping of exactly %s (whole numbers from 1), or empty for the benchmark "
                "role's phases; got %r" % (", ".join(WORKLOAD_KEYS), workload)]
    return ["tune_workload.%s=%r must be a whole number from 1" % (k, workload[k]) for k in WORKLOAD_KEYS
            if isinstance(workload[k], bool) or not isinstance(workload[k], int) or workload[k] < 1]


def _added_errors(added):
    if not isinstance(added, list):
        return ["tune_candidates must be a list of candidates (name, wishes, extra_args); got %r" % (added,)]
    out = []
    for n, one in enumerate(added):
        where = "tune_candidates[%d]" % n
        if not isinstance(one, dict) or set(one) - {"name", "wishes", "extra_args"} or not one.get("name"):
            out.append("%s must be a mapping with a name, and wishes and extra_args if any; got %r" % (where, one))
        elif not isinstance(one.get("wishes") or {}, dict) or not isinstance(one.get("extra_args") or [], list):
            out.append("%s (%s): wishes is a mapping of the plan's wishes, extra_args a list" % (where, one["name"]))
        else:
            out += _owned_errors(where, one)
    names = [one.get("name") for one in added if isinstance(one, dict)]
    out += ["tune_candidates: the name %s is given twice" % n for n in sorted(set(x for x in names if names.count(x) > 1))]
    return out + ["tune_candidates: %s is the planner's own candidate's name" % n for n in names if n == "plan"]


def _owned_errors(where, one):
    """An option the plan owns, given in a candidate's extra_args, would contradict the plan's own: it is a wish."""
    out = []
    for token in one.get("extra_args") or []:
        name = vllm_options.split_flag(str(token))[0]
        why = vllm_options.owner(name) if name.startswith("-") else None
        if why:
            out.append("%s (%s): %s is the plan's own option (%s): give it as a wish" % (where, one["name"], name, why))
    return out


def input_errors(v, replicas):
    """What the first play refuses of ``v`` (the tune_* settings) on a host serving ``replicas`` replicas."""
    out = _setting_errors(v) + _workload_errors(v.get("tune_workload")) + _added_errors(v.get("tune_candidates", []))
    if not out and replicas < 2 and not value_checks.is_on(v.get("tune_allow_downtime")):
        out.append("tune: the host serves %d replica(s): each candidate is served in its place, so nothing answers "
                   "while one starts; set tune_allow_downtime=true to go ahead" % replicas)
    return out
