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

from ansible_collections.llmhost.vllm.plugins.module_utils import bench, input_types, value_checks, vllm_options, wishes
from ansible_collections.llmhost.vllm.plugins.module_utils.serving_plan import UNIT_ARG, PlanError, typed_wishes

GOALS = ("throughput", "latency")
BATCHED_TOKENS = (2048, 8192)


def _candidate(name, wishes, extra_args, reason):
    return {"name": name, "wishes": dict(wishes), "extra_args": list(extra_args), "reason": reason}


def _seqs_neighbours(plan):
    seqs = int(plan["max_num_seqs"])
    out = []
    if seqs >= 2:
        out.append(_candidate("seqs_half", {"max_num_seqs": seqs // 2}, [],
                              "half the planner's %d concurrent sequences (%d): shorter steps, but more requests "
                              "wait in vLLM's queue" % (seqs, seqs // 2)))
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


def replanned(plan_for, base, candidate):
    wishes = dict(base, **candidate["wishes"])
    wishes["extra_args"] = list(base.get("extra_args") or []) + candidate["extra_args"]
    return plan_for(wishes)


def candidates(plan_for, base, plan, gpu_count, limit, added=()):
    """``(kept, dropped)``: the planner's choice, the user's own (``added``, each with ``name``, ``wishes``,
    ``extra_args``) and the planner's neighbours, each re-planned by the planner, up to ``limit`` in that order. Dropped, each with the
    reason: what the planner refuses, what plans the same servers as one kept, what is beyond the limit."""
    kept, dropped, seen = [], {}, {}
    mine = [_candidate(a["name"], a.get("wishes") or {}, a.get("extra_args") or [], a.get("reason") or "your own candidate")
            for a in added]
    ours = neighbours(plan, gpu_count)
    for one in ours[:1] + mine + ours[1:]:
        try:
            planned = replanned(plan_for, base, one)
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
    "tune_reset": ({"type": "bool"}, None, None),
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
    return out + ["tune_candidates: %s is the planner's own candidate's name" % n for n in names if n == "plan"] + [
        "tune_candidates: %s starts as the adopted tuning's name does (adopted_)" % n for n in names
        if str(n).startswith("adopted_")]


def _owned_errors(where, one):
    """An option the plan owns, given in a candidate's extra_args, would contradict the plan's own: it is a wish. An
    argument a unit cannot carry as one token is refused as vllm_service_extra_args's are."""
    out = []
    unsafe = [str(a) for a in one.get("extra_args") or [] if not UNIT_ARG.match(str(a))]
    if unsafe:
        out.append("%s (%s): arguments with spaces, quotes, $ or backslashes cannot be passed safely through the unit: "
                   "%s" % (where, one["name"], unsafe))
    for token in one.get("extra_args") or []:
        name = vllm_options.split_flag(str(token))[0]
        why = vllm_options.owner(name) if name.startswith("-") else None
        if why:
            out.append("%s (%s): %s is the plan's own option (%s): give it as a wish" % (where, one["name"], name, why))
    return out


def input_errors(v, replicas):
    """What the first play refuses of ``v`` (the tune_* settings) on a host serving ``replicas`` replicas."""
    out = _setting_errors(v) + _workload_errors(v.get("tune_workload")) + _added_errors(v.get("tune_candidates", []))
    if not out and replicas == 0:
        out.append("tune: the host serves no model yet (no replica list from vllm_service): run site.yml first")
    elif not out and replicas < 2 and not value_checks.is_on(v.get("tune_allow_downtime")) \
            and not value_checks.is_on(v.get("tune_reset")):
        out.append("tune: the host serves %d replica(s): each candidate is served in its place, so nothing answers "
                   "while one starts; set tune_allow_downtime=true to go ahead" % replicas)
    return out


# The adopted tuning: tune.yml writes the winner to the host (<vllm_service_config_dir>/tuned.json, RECORD_KEYS), and
# every later plan starts from it, for the model, vLLM and GPUs it was measured on (fingerprint) and below the
# user's own wishes.

RECORD_KEYS = ("candidate", "wishes", "extra_args", "for", "adopted", "why", "goal", "measured")


def fingerprint(plan, gpus):
    """What a measurement holds for: the model's shape, the vLLM version, the GPUs (a new revision of the same model
    keeps it; another model, vLLM or card does not)."""
    m = plan.get("model") or {}
    names = sorted(str(g.get("name", "?")) for g in gpus)
    model = (m.get("architecture"), m.get("layers"), m.get("heads"), m.get("quantization") or "not quantized")
    return {"model": "%s, %s layers, %s heads, %s" % model,
            "vllm": str(plan.get("vllm_version")),
            "gpus": ", ".join("%dx %s" % (names.count(n), n) for n in sorted(set(names)))}


def record_errors(record):
    """Why a tuned.json cannot be read as a record of tune.yml (empty: it can)."""
    if not isinstance(record, dict) or set(RECORD_KEYS) - set(record):
        return ["it is not a record of playbooks/tune.yml (it lacks %s)"
                % ", ".join(sorted(set(RECORD_KEYS) - set(record if isinstance(record, dict) else {})))]
    if not isinstance(record["wishes"], dict) or not isinstance(record["extra_args"], list):
        return ["its wishes are not a mapping or its extra_args not a list"]
    return []


def _yours(given, key):
    """Whether the user set this wish (it is not at its default)."""
    return typed_wishes({key: given[key]})[key] != wishes.DEFAULT_WISHES[key] if key in given else False


def adopt(given, record, fp):
    """``(wishes, decision, warning)``: the user's wishes ``given`` with the adopted tuning ``record`` below them, the
    plan's decision that says so, or a warning where the record is for another model, vLLM or GPUs or unreadable."""
    if not record:
        return given, None, None
    bad = record_errors(record)
    if bad or record["for"] != fp:
        why = bad[0] if bad else _other_for(record["for"], fp)
        return given, None, ("the adopted tuning (tuned.json) is set aside: %s. Run playbooks/tune.yml again, or "
                             "forget it with tune_reset=true" % why)
    out = dict(given)
    taken = [k for k in sorted(record["wishes"]) if k in wishes.WISHES and k != "extra_args" and not _yours(given, k)]
    out.update((k, record["wishes"][k]) for k in taken)
    mine = set(vllm_options.split_flag(str(a))[0] for a in given.get("extra_args") or [] if str(a).startswith("-"))
    extra = _args_not_given(record["extra_args"], mine)
    out["extra_args"] = list(given.get("extra_args") or []) + extra
    kept = [k for k in sorted(record["wishes"]) if k not in taken]
    said = ", ".join(["%s=%s" % (k, record["wishes"][k]) for k in taken] + extra) or "nothing beyond the plan"
    reason = "measured best by playbooks/tune.yml at %s (%s); it sets %s" % (record["adopted"], record["why"], said)
    if kept:
        reason += "; your own %s kept" % ", ".join(wishes.PREFIX + k for k in kept)
    return out, {"key": "tuning", "value": record["candidate"], "reason": reason}, None


def _other_for(then, now):
    return "it was measured for %s; this host now serves %s" % (_for_text(then), _for_text(now))


def _args_not_given(args, mine):
    """A record's extra arguments, less the options the user gives in vllm_service_extra_args (theirs win)."""
    out, skip = [], False
    for a in args:
        a = str(a)
        if a.startswith("-"):
            skip = vllm_options.split_flag(a)[0] in mine
        if not skip:
            out.append(a)
    return out


def _for_text(fp):
    return "%s on vLLM %s, %s" % (fp.get("model"), fp.get("vllm"), fp.get("gpus")) if isinstance(fp, dict) else repr(fp)


def record(winner, candidate, fp, adopted, why, goal, figures):
    """The record tune.yml writes for the winner (``candidate``: its name, wishes, extra_args)."""
    return {"candidate": winner, "wishes": dict(candidate["wishes"]), "extra_args": list(candidate["extra_args"]),
            "for": fp, "adopted": adopted, "why": why, "goal": goal, "measured": figures}


# The settings as the playbook reads them, and its decision and report.

def phases(workload, bench_phases):
    """What each candidate is measured with: ``tune_workload`` as one phase (four requests per concurrent one), or
    the benchmark role's phases."""
    if workload:
        return [{"name": "tune", "input_len": int(workload["input_len"]), "output_len": int(workload["output_len"]),
                 "concurrency": int(workload["concurrency"]), "requests": 4 * int(workload["concurrency"])}]
    return [dict(p) for p in bench_phases]


def judged_phase(phase_list):
    """The phase the choice reads: the most concurrent (the seed's mixed load), the last of equals."""
    return max(reversed(phase_list), key=lambda p: int(p["concurrency"]))


def settings(v, replicas, bench_phases):
    """The first play's view of the tune_* settings: the refusals, the phases and the phase judged."""
    errors = input_errors(v, replicas)
    if errors:
        return {"errors": errors}
    ran = phases(v.get("tune_workload"), bench_phases)
    return {"errors": [], "phases": ran, "judged": judged_phase(ran)["name"]}


def decide(results, kept, v, fp, when):
    """The choice over ``results`` (candidate name to its judged phase's result) and, with a winner, the record to
    adopt (tuned.json). An adopted candidate measured again keeps its first name."""
    c = choose(results, v["tune_goal"], float(v["tune_slo_p95_ttft_ms"]), float(v["tune_throughput_floor"]))
    c["record"] = None
    if c["winner"]:
        cand = dict((k["name"], k) for k in kept)[c["winner"]]
        name = c["winner"][len("adopted_"):] if c["winner"].startswith("adopted_") else c["winner"]
        c["record"] = record(name, cand, fp, when, c["why"], v["tune_goal"], c["figures"][c["winner"]])
    return c


def _verdict(name, choice):
    if name == choice["winner"]:
        return "**winner**"
    if name in choice["out"]:
        return "out: %s" % choice["out"][name]
    return "ranked %d of %d" % (choice["ranked"].index(name) + 1, len(choice["ranked"]))


def report(info, kept, dropped, results, phase, choice):
    """``(summary, markdown)`` of a tune run: one row per candidate in the benchmark's columns (the judged phase),
    its verdict and reason and options, the candidates left out, the decision."""
    rows = []
    for cand in kept:
        result = results.get(cand["name"]) or {"error": "not measured"}
        named = dict(phase, name=cand["name"])
        row = bench.summarize(
            [named], {cand["name"]: None if "error" in result else result}, {})["phases"][0]
        if "error" in result:
            row["first_error"] = str(result["error"])[:200]
        rows.append(dict(row, verdict=_verdict(cand["name"], choice), reason=cand["reason"],
                         options=bench.plan_label(cand.get("plan") or {})))
    summary = dict(info, phases=rows, dropped=dropped, winner=choice["winner"], why=choice["why"],
                   record=choice.get("record"))
    return summary, _markdown(summary, phase)


def _error(row):
    return " (error: %s)" % row["first_error"] if row.get("first_error") else ""


def _header(s, phase):
    """What was tuned, how, for what, and what it decided."""
    goal = ("the most output tokens a second with P95 TTFT at or under %s ms" % s.get("slo_ms")
            if s.get("goal") == "throughput" else
            "the lowest P95 TTFT at or over %s output tokens a second" % s.get("floor"))
    adopted = ("%s, in %s (later site.yml runs keep it; tune_reset=true forgets it)"
               % (s["record"]["candidate"], s.get("tuned_file", "tuned.json"))
               if s.get("record") else "nothing; the plan stays as it was")
    how = "%s (phase %s: %s requests at concurrency %s, prompt %s, output %s tokens)" % (
        s.get("client_label", "?"), phase["name"], phase["requests"], phase["concurrency"], phase["input_len"],
        phase["output_len"])
    return ["# Tuning of %s, %s" % (s.get("host", "?"), s.get("started", "?")), "", "- goal: %s" % goal,
            "- measured with: %s" % how, "- measured for: %s" % _for_text(s.get("for")),
            "- decision: %s" % s["why"], "- adopted: %s" % adopted]


def _markdown(s, phase):
    lines = _header(s, phase) + ["", "## Candidates", ""]
    headings = ["candidate", "verdict", "done/asked", "errors"] + [h for _k, h, _s in bench.METRICS]
    rows = [[r["phase"], r["verdict"], "%d/%d" % (r["completed"], r["requests"]), r["errors"]]
            + [r.get(k) for k, _h, _s in bench.METRICS] for r in s["phases"]]
    lines += bench.table(headings, rows)
    lines += ["", "## What each candidate is", ""]
    lines += ["- **%s**: %s. Serves with: %s%s" % (r["phase"], r["reason"], r["options"] or "?", _error(r))
              for r in s["phases"]]
    if s.get("dropped"):
        lines += ["", "## Left out", ""] + ["- %s: %s" % kv for kv in sorted(s["dropped"].items())]
    return "\n".join(lines) + "\n"


def _servers(plan):
    return [(r["name"], list(r["gpus"])) for r in plan["replicas"]]


def schedule(kept, plan, allow_downtime):
    """``(measured, skipped)``: how each candidate is measured on a host serving ``plan``. With two replicas or more,
    one is taken out of the gateway and the candidate served there alone (``alone``), the others serving on; a
    candidate that changes the replicas themselves (another layout) needs every GPU at once, so it is measured only
    with ``allow_downtime``, the whole host restarting. One replica: every candidate is served in its place (the
    first play asked for the downtime)."""
    rolling = len(plan["replicas"]) > 1
    measured, skipped = [], {}
    for cand in kept:
        alone = rolling and _servers(cand["plan"]) == _servers(plan)
        if rolling and not alone and not allow_downtime:
            skipped[cand["name"]] = ("it serves other replicas (%s), so it needs every GPU at once: set "
                                     "tune_allow_downtime=true to measure it (nothing answers while it starts)"
                                     % cand["plan"]["mode"])
            continue
        measured.append(dict(cand, alone=alone and not allow_downtime))
    return measured, skipped
