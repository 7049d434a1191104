"""module_utils/tune.py: the tuning candidates the planner makes around its own choice on the design card's box
(public 2x4090 facts), and the choice rule on the real vLLM 0.25 runs measured on a 4090's budget
(tests/fixtures/bench/vllm-0.25.0-h200-4090budget)."""
import json
from pathlib import Path

import pytest
import shapes

from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp
from ansible_collections.llmhost.vllm.plugins.module_utils import tune

ROOT = Path(__file__).resolve().parents[4]
TABLE = json.loads((ROOT / "roles" / "vllm_service" / "files" / "vllm-options" / "0.33.0.json").read_text())
RUNS = ROOT / "tests" / "fixtures" / "bench" / "vllm-0.25.0-h200-4090budget"
BASE = {"model_path": "/srv/models/m", "served_model_name": "qwen"}


def planner(gpus, p2p, config):
    return lambda wishes: sp.make_plan(gpus, p2p, config, wishes, TABLE)


def test_the_candidates_around_the_plan_on_two_4090s(rtx4090x2):
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus, p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    kept, dropped = tune.candidates(plan_for, BASE, plan, len(gpus), limit=10)
    names = [c["name"] for c in kept]
    assert names[0] == "plan" and kept[0]["plan"] == plan
    assert {"seqs_half", "batched_2048", "batched_8192", "tensor_parallel"} <= set(names) | set(dropped), (names, dropped)
    by = dict((c["name"], c) for c in kept)
    half = by["seqs_half"]["plan"]
    assert half["max_num_seqs"] == plan["max_num_seqs"] // 2 and "half the planner's" in by["seqs_half"]["reason"]
    assert by["batched_2048"]["plan"]["replicas"][0]["options"][-2:] == ["--max-num-batched-tokens", "2048"]
    other_kv = "kv_model" if plan["kv_cache_dtype"] == "fp8" else "kv_fp8"
    assert by[other_kv]["plan"]["kv_cache_dtype"] != plan["kv_cache_dtype"]
    if "tensor_parallel" in by:
        assert by["tensor_parallel"]["plan"]["mode"] == "tensor_parallel"
    for c in kept:
        assert c["reason"]


def test_the_limit_keeps_the_plan_first_and_says_what_it_left_out(rtx4090x2):
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus, p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    kept, dropped = tune.candidates(plan_for, BASE, plan, len(gpus), limit=2)
    assert [c["name"] for c in kept] == ["plan", "seqs_half"]
    assert dropped["batched_2048"] == "beyond tune_max_candidates=2"


def test_what_the_planner_refuses_is_dropped_in_its_words(rtx4090x2):
    """On one 4090 there is no other layout to try, and a user's candidate asking for an option the plan owns is
    refused by the planner, by name."""
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus[:1], p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    mine = [{"name": "mine", "extra_args": ["--max-num-seqs", "8"]}]
    kept, dropped = tune.candidates(plan_for, BASE, plan, 1, limit=10, added=mine)
    assert "tensor_parallel" not in [c["name"] for c in kept] + list(dropped)  # one GPU: no other layout
    assert dropped["mine"].startswith("the planner refuses it:") and "--max-num-seqs" in dropped["mine"]


def test_a_neighbour_that_plans_the_same_servers_is_dropped(rtx4090x2):
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus, p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    same = [{"name": "again", "wishes": {"max_num_seqs": plan["max_num_seqs"]}}]
    kept, dropped = tune.candidates(plan_for, BASE, plan, len(gpus), limit=10, added=same)
    assert dropped["again"] == "the same servers as plan"


def _runs(phase="mixed_c128"):
    return dict((run.name, json.loads((run / ("%s.json" % phase)).read_text())) for run in sorted(RUNS.iterdir())
                if run.is_dir())


def test_on_the_measured_runs_the_fp8_cache_wins_under_a_10_s_slo():
    """What a person reading those files picks: plan_kvfp8 has the most tokens a second (7801) and the lowest P95
    TTFT (7207 ms); the plain plan misses a 10 s SLO (10635 ms)."""
    got = tune.choose(_runs(), "throughput", 10000, incumbent="plan")
    assert got["winner"] == "plan_kvfp8"
    assert got["out"] == {"plan": "P95 TTFT 10635 ms, above tune_slo_p95_ttft_ms=10000"}
    assert got["ranked"] == ["plan_kvfp8", "plan_mbt8192", "plan_graphs56", "defaults"]
    assert got["why"] == ("plan_kvfp8: 7801 tokens/s at P95 TTFT 7207 ms, 1.40x the throughput of the planner's choice "
                          "(plan); runner-up plan_mbt8192")


def test_a_tighter_slo_leaves_none_and_the_plan_stays():
    got = tune.choose(_runs(), "throughput", 7000)
    assert got["winner"] is None and len(got["out"]) == 5
    assert got["why"] == "no candidate met the goal; the planner's own choice stays"


def test_the_latency_goal_with_a_throughput_floor():
    got = tune.choose(_runs(), "latency", 0, floor=6300, incumbent="plan_mbt8192")
    assert got["winner"] == "plan_kvfp8" and set(got["out"]) == {"defaults", "plan", "plan_graphs56"}
    assert "0.80x the P95 TTFT of the planner's choice (plan_mbt8192)" in got["why"]


@pytest.mark.parametrize("result,reason", [
    ({"error": "the server did not start: exit 1"}, "the server did not start: exit 1"),
    (None, "no result"),
    ({"output_throughput": 100.0}, "the benchmark's result lacks 'p95_ttft_ms'"),
    ({"output_throughput": "nan", "p95_ttft_ms": 5}, "the benchmark's figures are not finite"),
    ({"output_throughput": 9e9, "p95_ttft_ms": 1, "failed": 3}, "3 of its requests failed"),
])
def test_a_candidate_that_errs_or_loses_requests_is_out(result, reason):
    got = tune.choose(dict(_runs(), broken=result), "throughput", 10000)
    assert got["out"]["broken"] == reason and got["winner"] == "plan_kvfp8"


def test_the_models_people_run_get_their_own_neighbours(rtx4090x2):
    """Qwen2.5-32B AWQ is tensor parallel on two 4090s, so its neighbour is a replica per GPU (which the planner
    allows, at 2 sequences each); Qwen3-30B-A3B's replicas are refused by the planner, which says why."""
    gpus, p2p = rtx4090x2
    awq = planner(gpus, p2p, shapes.QWEN25_32B_AWQ)
    kept, _dropped = tune.candidates(awq, BASE, awq(dict(BASE)), len(gpus), limit=10)
    by = dict((c["name"], c["plan"]) for c in kept)
    assert by["plan"]["mode"] == "tensor_parallel" and by["replicas"]["mode"] == "replicas"
    moe = planner(gpus, p2p, shapes.QWEN3_30B_A3B)
    kept, dropped = tune.candidates(moe, BASE, moe(dict(BASE)), len(gpus), limit=10)
    assert dropped["replicas"].startswith("the planner refuses it: vllm_service_mode=replicas: one GPU")
    assert "kv_model" in [c["name"] for c in kept]


GOOD = {"tune_goal": "throughput", "tune_slo_p95_ttft_ms": 2000, "tune_throughput_floor": 0, "tune_max_candidates": 6,
        "tune_allow_downtime": False, "tune_workload": {}, "tune_candidates": [], "tune_reset": False}


@pytest.mark.parametrize("change,replicas,words", [
    ({"tune_slo_p95_ttft_ms": 0}, 2, "tune_slo_p95_ttft_ms=0 must be a finite number from 1 to 3600000"),
    ({"tune_slo_p95_ttft_ms": float("nan")}, 2, "tune_slo_p95_ttft_ms"),
    ({"tune_slo_p95_ttft_ms": "inf"}, 2, "tune_slo_p95_ttft_ms"),
    ({"tune_slo_p95_ttft_ms": "fast"}, 2, "tune_slo_p95_ttft_ms: got 'fast'"),
    ({"tune_goal": "cheap"}, 2, "tune_goal must be one of: throughput, latency; got 'cheap'"),
    ({"tune_max_candidates": 0}, 2, "tune_max_candidates=0 must be a finite number from 1 to 32"),
    ({"tune_throughput_floor": -1}, 2, "tune_throughput_floor=-1 must be a finite number from 0 up"),
    ({"tune_workload": {"input_len": 512, "output_len": 0, "concurrency": 32}}, 2,
     "tune_workload.output_len=0 must be a whole number from 1"),
    ({"tune_workload": {"input_len": 512}}, 2, "tune_workload must be a mapping of exactly input_len, output_len"),
    ({"tune_candidates": [{"name": "a"}, {"name": "a"}]}, 2, "tune_candidates: the name a is given twice"),
    ({"tune_candidates": [{"name": "plan"}]}, 2, "tune_candidates: plan is the planner's own candidate's name"),
    ({"tune_candidates": [{"name": "adopted_x"}]}, 2, "tune_candidates: adopted_x starts as the adopted tuning's name"),
    ({"tune_candidates": [{"name": "x", "wishes": ["max_num_seqs"]}]}, 2, "tune_candidates[0] (x): wishes is a mapping"),
    ({"tune_candidates": [{"wishes": {}}]}, 2, "tune_candidates[0] must be a mapping with a name"),
    ({"tune_candidates": [{"name": "x", "extra_args": ["--max-num-seqs=8"]}]}, 2,
     "tune_candidates[0] (x): --max-num-seqs is the plan's own option (vllm_service_max_num_seqs): give it as a wish"),
    ({"tune_candidates": [{"name": "x", "extra_args": ["--seed", "1 2"]}]}, 2,
     "tune_candidates[0] (x): arguments with spaces, quotes, $ or backslashes cannot be passed safely"),
    ({}, 1, "the host serves 1 replica(s): each candidate is served in its place"),
    ({}, 0, "tune: the host serves no model yet (no replica list from vllm_service): run site.yml first"),
    ({"tune_reset": True}, 0, "tune: the host serves no model yet"),
    ({"tune_reset": "please"}, 2, "tune_reset: got 'please'"),
])
def test_the_first_play_refuses_bad_tuning_settings_by_name(change, replicas, words):
    errors = tune.input_errors(dict(GOOD, **change), replicas)
    assert any(words in e for e in errors), errors


def test_good_settings_pass_and_downtime_is_taken_when_allowed():
    assert tune.input_errors(GOOD, 2) == []
    assert tune.input_errors(dict(GOOD, tune_allow_downtime=True), 1) == []
    assert tune.input_errors(dict(GOOD, tune_reset=True), 1) == []  # forgetting measures nothing
    assert tune.input_errors(dict(GOOD, tune_workload={"input_len": 512, "output_len": 128, "concurrency": 32}), 2) == []


# --- the adopted tuning: tuned.json below the user's own wishes, for the model, vLLM and GPUs it was measured on ----

def _adopted_case(rtx4090x2, record_wishes, extra=(), given=None):
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus, p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    fp = tune.fingerprint(plan, gpus)
    rec = tune.record("seqs_half", {"wishes": record_wishes, "extra_args": list(extra)}, fp, "2026-12-07T11:00:00Z",
                      "seqs_half: 900 tokens/s at P95 TTFT 80 ms, 1.20x the throughput of the planner's choice (plan)",
                      "throughput", {"throughput": 900.0, "p95_ttft_ms": 80.0, "failed": 0, "completed": 64})
    return plan_for, plan, fp, rec, dict(BASE, **(given or {}))


def test_an_adopted_tuning_is_planned_with_its_reason(rtx4090x2):
    plan_for, plan, fp, rec, given = _adopted_case(rtx4090x2, {"max_num_seqs": 32}, ["--max-num-batched-tokens", "2048"])
    wishes, decision, warning = tune.adopt(given, rec, fp)
    assert warning is None and wishes["max_num_seqs"] == 32
    tuned = plan_for(wishes)
    assert tuned["max_num_seqs"] == 32 and tuned["replicas"][0]["options"][-2:] == ["--max-num-batched-tokens", "2048"]
    assert decision["key"] == "tuning" and decision["value"] == "seqs_half"
    assert "measured best by playbooks/tune.yml at 2026-12-07T11:00:00Z" in decision["reason"]
    assert "max_num_seqs=32, --max-num-batched-tokens, 2048" in decision["reason"]


def test_the_users_own_wishes_and_options_win_over_the_adopted_ones(rtx4090x2):
    plan_for, plan, fp, rec, given = _adopted_case(
        rtx4090x2, {"max_num_seqs": 32, "kv_cache_dtype": "fp8"}, ["--max-num-batched-tokens", "2048"],
        given={"max_num_seqs": "48", "extra_args": ["--max-num-batched-tokens=4096"]})
    wishes, decision, warning = tune.adopt(given, rec, fp)
    assert wishes["max_num_seqs"] == "48" and wishes["kv_cache_dtype"] == "fp8"
    assert wishes["extra_args"] == ["--max-num-batched-tokens=4096"]
    assert "your own vllm_service_max_num_seqs kept" in decision["reason"]


@pytest.mark.parametrize("change, words", [
    ({"vllm": "0.6.3"}, "on vLLM 0.6.3"),
    ({"gpus": "1x NVIDIA H200"}, "1x NVIDIA H200"),
    ({"model": "Qwen2ForCausalLM, 64 layers, 40 heads, awq"}, "Qwen2ForCausalLM, 64 layers"),
])
def test_a_tuning_measured_for_another_model_vllm_or_gpus_is_set_aside(rtx4090x2, change, words):
    plan_for, plan, fp, rec, given = _adopted_case(rtx4090x2, {"max_num_seqs": 32})
    rec["for"] = dict(fp, **change)
    wishes, decision, warning = tune.adopt(given, rec, fp)
    assert wishes == given and decision is None
    assert warning.startswith("the adopted tuning (tuned.json) is set aside: it was measured for ") and words in warning
    assert "tune_reset=true" in warning


@pytest.mark.parametrize("record", [{"candidate": "x"}, ["x"], dict.fromkeys(tune.RECORD_KEYS, "text")])
def test_a_tuned_json_that_is_no_record_is_set_aside_with_why(rtx4090x2, record):
    plan_for, plan, fp, rec, given = _adopted_case(rtx4090x2, {})
    wishes, decision, warning = tune.adopt(given, record, fp)
    assert decision is None and wishes == given
    assert "set aside: it is not a record of playbooks/tune.yml" in warning or "are not a mapping" in warning


def test_no_record_plans_as_before(rtx4090x2):
    plan_for, plan, fp, rec, given = _adopted_case(rtx4090x2, {})
    assert tune.adopt(given, {}, fp) == (given, None, None)
    assert fp == {"model": "Qwen3ForCausalLM, 36 layers, 32 heads, not quantized", "vllm": "0.33.0",
                  "gpus": "2x NVIDIA GeForce RTX 4090"}


# --- the playbook's view: its phases, how each candidate is measured, the decision to adopt, the report ----------

def test_the_workload_is_one_phase_or_the_benchmark_roles_and_the_most_concurrent_is_judged():
    bench_phases = [{"name": "prefill", "concurrency": 1}, {"name": "mixed_a", "concurrency": 128},
                    {"name": "mixed_b", "concurrency": 128}]
    got = tune.settings(dict(GOOD), 2, bench_phases)
    assert got == {"errors": [], "phases": bench_phases, "judged": "mixed_b"}
    own = tune.settings(dict(GOOD, tune_workload={"input_len": 512, "output_len": 64, "concurrency": 8}), 2, [])
    assert own["phases"] == [{"name": "tune", "input_len": 512, "output_len": 64, "concurrency": 8, "requests": 32}]
    assert tune.settings(dict(GOOD), 1, bench_phases)["errors"]


def test_two_replicas_measure_one_alone_and_leave_the_other_layout_out_unless_downtime(rtx4090x2):
    gpus, p2p = rtx4090x2
    plan_for = planner(gpus, p2p, shapes.QWEN3_4B)
    plan = plan_for(dict(BASE))
    kept, _dropped = tune.candidates(plan_for, BASE, plan, len(gpus), limit=10)
    measured, skipped = tune.schedule(kept, plan, allow_downtime=False)
    assert plan["mode"] == "replicas" and all(c["alone"] for c in measured)
    assert "tensor_parallel" in skipped and "set tune_allow_downtime=true" in skipped["tensor_parallel"]
    measured, skipped = tune.schedule(kept, plan, allow_downtime=True)
    assert not skipped and not any(c["alone"] for c in measured) and len(measured) == len(kept)
    one = plan_for(dict(BASE, gpus=[0]))
    measured, skipped = tune.schedule([dict(kept[0], plan=one)], one, allow_downtime=True)
    assert measured[0]["alone"] is False and not skipped


def _kept_for(names):
    return [{"name": n, "wishes": {"max_num_seqs": 64} if n == "plan_kvfp8" else {}, "extra_args": [], "reason": "r " + n,
             "plan": {"mode": "replicas", "replicas": [{"options": ["--max-num-seqs", "64"]}]}} for n in names]


def test_the_winner_becomes_the_record_to_adopt_and_none_leaves_nothing():
    runs, fp = _runs(), {"model": "m", "vllm": "0.25.0", "gpus": "1x H200"}
    v = {"tune_goal": "throughput", "tune_slo_p95_ttft_ms": "10000", "tune_throughput_floor": "0"}
    got = tune.decide(runs, _kept_for(runs), v, fp, "2026-12-07T12:00:00Z")
    assert got["record"]["candidate"] == "plan_kvfp8" and got["record"]["wishes"] == {"max_num_seqs": 64}
    assert got["record"]["for"] == fp and got["record"]["measured"]["p95_ttft_ms"] == pytest.approx(7207, abs=1)
    assert tune.record_errors(got["record"]) == []
    assert tune.decide(runs, _kept_for(runs), dict(v, tune_slo_p95_ttft_ms=7000), fp, "t")["record"] is None
    again = tune.decide({"adopted_seqs_half": runs["plan_kvfp8"]}, _kept_for(["adopted_seqs_half"]), v, fp, "t")
    assert again["record"]["candidate"] == "seqs_half"


def test_the_report_has_every_candidate_in_the_benchmarks_columns_and_why():
    runs = _runs()
    runs["broken"] = {"error": "did not start or was not measured: vllm@0.service failed"}
    choice = tune.choose(runs, "throughput", 10000)
    choice["record"] = {"candidate": "plan_kvfp8"}
    phase = {"name": "mixed_c128", "input_len": [512, 2048], "output_len": 512, "concurrency": 128, "requests": 256}
    summary, text = tune.report({"host": "gpu1", "started": "20261207T120000Z", "goal": "throughput", "slo_ms": 10000,
                                 "for": {"model": "m", "vllm": "0.25.0", "gpus": "1x H200"}},
                                _kept_for(sorted(runs)), {"kv_model": "beyond tune_max_candidates=6"}, runs, phase, choice)
    assert [r["phase"] for r in summary["phases"]] == sorted(runs)
    assert "| plan_kvfp8 | **winner** | 256/256 | 0 | 7800.64 |" in text, text
    assert "| plan | out: P95 TTFT 10635 ms, above tune_slo_p95_ttft_ms=10000 | 256/256 | 0 | 5576.00 |" in text
    assert "| broken | out: did not start or was not measured: vllm@0.service failed | 0/256 | 256 |" in text
    assert "- decision: plan_kvfp8: 7801 tokens/s at P95 TTFT 7207 ms, 1.40x the throughput" in text
    assert "- kv_model: beyond tune_max_candidates=6" in text and "- adopted: plan_kvfp8, in tuned.json" in text
    assert "- measured for: m on vLLM 0.25.0, 1x H200" in text
