"""module_utils/bench.py on real result files: vllm bench serve of vLLM 0.25.0 on a lent H200, and the 0.6.4 script
through the container's gateway to the stand-in (tests/fixtures/bench/README.md)."""
import json
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import bench

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "bench"
H200 = [
    {"name": "prefill_2048", "input_len": 2048, "output_len": 1, "concurrency": 1, "requests": 16},
    {"name": "decode_c1", "input_len": 10, "output_len": 1024, "concurrency": 1, "requests": 3},
    {"name": "decode_c32", "input_len": 10, "output_len": 1024, "concurrency": 32, "requests": 64},
    {"name": "mixed_c128", "input_len": [512, 2048], "output_len": 512, "concurrency": 128, "requests": 256},
]
STANDIN = [
    {"name": "prefill", "input_len": 64, "output_len": 1, "concurrency": 1, "requests": 4},
    {"name": "decode_c4", "input_len": 8, "output_len": 16, "concurrency": 4, "requests": 8},
    {"name": "mixed_c16", "input_len": [16, 64], "output_len": 8, "concurrency": 16, "requests": 32},
]


def _results(folder, phases):
    out = {}
    for phase in phases:
        path = FIX / folder / (phase["name"] + ".json")
        out[phase["name"]] = json.loads(path.read_text()) if path.exists() else None
    return out


def _rows(summary):
    return {row["phase"]: row for row in summary["phases"]}


def test_a_real_h200_run_gives_its_figures_per_phase():
    rows = _rows(bench.summarize(H200, _results("vllm-0.25.0-h200/defaults", H200), {"host": "h200"}))
    mixed = rows["mixed_c128"]
    assert (mixed["completed"], mixed["errors"]) == (256, 0)
    assert mixed["output_tok_s"] == 8160.07 and mixed["ttft_p95_ms"] == 2353.94
    # the lengths the requests really had: prompts drawn from 512-2048, outputs fixed at 512
    assert 1100 < mixed["mean_input_len"] < 1500 and mixed["mean_output_len"] == 512.0
    assert rows["decode_c1"]["itl_p50_ms"] == 3.62
    # one token per request: there is no gap between tokens to report
    assert rows["prefill_2048"]["itl_p50_ms"] is None and rows["prefill_2048"]["ttft_p50_ms"] == 40.12
    # without --save-detailed there are no per-request times
    assert mixed["peak_in_flight"] is None


def test_a_phase_without_a_result_is_all_errors_and_no_figures():
    rows = _rows(bench.summarize(H200, _results("vllm-0.25.0-h200/plan", H200), {}))
    assert rows["mixed_c128"]["errors"] == 256 and rows["mixed_c128"]["output_tok_s"] is None
    assert "wrote no result" in rows["mixed_c128"]["first_error"]
    assert rows["decode_c32"]["errors"] == 0


def test_the_plan_against_the_defaults_on_a_real_h200():
    defaults = bench.summarize(H200, _results("vllm-0.25.0-h200/defaults", H200), {"when": "defaults"})
    plan = bench.summarize(H200, _results("vllm-0.25.0-h200/plan", H200), {"when": "plan"})
    ratios = {r["phase"]: r for r in bench.compare(plan, defaults)}
    assert ratios["decode_c1"]["output_tok_s"] == 1.26 and ratios["decode_c1"]["itl_p50_ms"] == 0.8
    assert ratios["prefill_2048"]["output_tok_s"] == 1.22
    assert ratios["mixed_c128"]["output_tok_s"] is None  # no result on one side: no ratio
    text = bench.markdown(plan, defaults)
    assert "## Against defaults" in text and "| decode_c1 | 1.26 | 1.26 |" in text
    assert "Errors: mixed_c128: the load generator wrote no result" in text


def _summary(folder, label):
    return bench.summarize(H200, _results("vllm-0.25.0-h200-run2/" + folder, H200), {"when": label})


def test_the_plan_against_the_defaults_in_every_phase_on_a_second_h200_run():
    ratios = {r["phase"]: r for r in bench.compare(_summary("plan", "plan"), _summary("defaults", "defaults"))}
    mixed = ratios["mixed_c128"]
    assert mixed["output_tok_s"] == 1.14 and mixed["ttft_p95_ms"] == 0.73
    assert ratios["decode_c1"]["output_tok_s"] == 1.26 and ratios["decode_c32"]["output_tok_s"] == 1.1
    # the one phase where the plan did not gain: 16 prompts of 2048 tokens, one at a time
    assert ratios["prefill_2048"]["output_tok_s"] == 0.98


def test_the_kv_cache_in_fp8_against_the_plan_gains_in_the_mixed_phase_and_loses_single_stream_decode():
    ratios = {r["phase"]: r for r in bench.compare(_summary("plan_kvfp8", "kv fp8"), _summary("plan", "plan"))}
    assert ratios["mixed_c128"]["output_tok_s"] == 1.12 and ratios["mixed_c128"]["ttft_p95_ms"] == 0.92
    # a loss, however small: the plan does not adopt it (roles/vllm_service/README.md)
    assert ratios["decode_c1"]["output_tok_s"] == 0.97


def test_the_load_generator_held_the_concurrency_asked_for_on_real_vllm():
    rows = _rows(_summary("plan", "plan"))
    peaks = {p: rows[p]["peak_in_flight"] for p in rows}
    assert peaks == {"prefill_2048": 1, "decode_c1": 1, "decode_c32": 32, "mixed_c128": 128}
    assert all(r["errors"] == 0 and r["completed"] == r["requests"] for r in rows.values())


BUDGET_4090 = [dict(p, requests=4) if p["name"] == "decode_c1" else p for p in H200]


def _budget(folder):
    """A run on a lent H200 held to an RTX 4090's memory budget (--gpu-memory-utilization 0.1538)."""
    path = "vllm-0.25.0-h200-4090budget/" + folder
    return bench.summarize(BUDGET_4090, _results(path, BUDGET_4090), {"when": folder})


def _ratios(after, before):
    return {r["phase"]: (r["output_tok_s"], r["ttft_p95_ms"]) for r in bench.compare(_budget(after), _budget(before))}


def test_under_a_4090s_memory_budget_the_plan_beats_the_defaults_in_every_phase_but_queues_the_mixed_load():
    ratios = _ratios("plan", "defaults")
    gains = {p: r[0] for p, r in ratios.items()}
    assert gains == {"prefill_2048": 1.42, "decode_c1": 1.28, "decode_c32": 1.13, "mixed_c128": 1.09}
    # 55 sequences at once instead of 256: the rest wait for a slot, so the slowest first tokens come later
    assert ratios["mixed_c128"][1] == 1.23


def test_under_a_4090s_memory_budget_an_fp8_kv_cache_wins_the_mixed_load_and_loses_single_stream():
    ratios = _ratios("plan_kvfp8", "plan")
    assert ratios["mixed_c128"] == (1.4, 0.68)
    # the losses that keep the plan from choosing it (roles/vllm_service/README.md)
    assert ratios["decode_c1"][0] == 0.96 and ratios["prefill_2048"][0] == 0.97


def test_under_a_4090s_memory_budget_two_levers_stay_within_what_a_lever_without_effect_moved():
    # capture sizes cut from 104 to 56: same KV cache, no mechanism for a gain, yet 1.11x in the mixed phase
    null = _ratios("plan_graphs56", "plan")
    assert null["mixed_c128"][0] == 1.11 and null["decode_c1"][0] == 1.0
    # 8192 batched tokens instead of the 4090's 2048: prefill gains beyond that spread, the mixed phase barely
    mbt = _ratios("plan_mbt8192", "plan")
    assert mbt["prefill_2048"][0] == 1.15 and mbt["mixed_c128"][0] == 1.15 and mbt["decode_c1"][0] == 0.99


def test_every_4090_budget_run_held_its_concurrency_without_errors():
    for folder in ("defaults", "plan", "plan_kvfp8", "plan_mbt8192", "plan_graphs56"):
        rows = _rows(_budget(folder))
        assert [rows[p]["peak_in_flight"] for p in rows] == [1, 1, 32, 128], folder
        assert all(r["errors"] == 0 and r["completed"] == r["requests"] for r in rows.values()), folder


def test_the_script_client_counts_failures_and_in_flight_when_it_has_the_details():
    rows = _rows(bench.summarize(STANDIN, _results("script-0.6.4-standin", STANDIN), {}))
    assert all(r["completed"] == r["requests"] and r["errors"] == 0 for r in rows.values())
    # the script draws outputs from the prompts' range: they varied (1-8 tokens)
    assert 1 < rows["mixed_c16"]["mean_output_len"] < 8
    broken = json.loads((FIX / "script-0.6.4-standin" / "mixed_c16.json").read_text())
    broken["completed"] -= 2
    broken["errors"][:2] = ["Traceback ...\nClientConnectorError: refused", "ServerDisconnectedError"]
    row = bench.summarize_phase(STANDIN[2], broken)
    assert row["errors"] == 2 and row["first_error"] == "ClientConnectorError: refused"


def test_peak_in_flight_from_each_request_start_and_end():
    result = {"start_times": [0.0, 0.5, 1.0, 3.0], "ttfts": [0.1, 0.1, 0.1, 0.1], "itls": [[1.0], [1.0], [0.1], []]}
    assert bench.peak_in_flight(result) == 3
    assert bench.peak_in_flight({"ttfts": [0.1]}) is None


@pytest.mark.parametrize("client,expect", [
    ("vllm", ["--random-input-len", "1280", "--random-range-ratio", '{"input": 0.6, "output": 0.0}']),
    ("script", ["--random-input-len", "2048", "--random-range-ratio", "0.2500"]),
])
def test_both_clients_draw_prompts_from_the_same_range(client, expect):
    target = {"base_url": "http://h:1", "model": "m", "tokenizer": "/t", "result_dir": "/r"}
    argv = bench.client_argv(client, ["prog"], H200[3], target)
    i = argv.index("--random-input-len")
    assert argv[i:i + 4] == expect
    assert argv[argv.index("--max-concurrency") + 1] == "128" and "--ignore-eos" in argv
    assert argv[argv.index("--result-filename") + 1] == "mixed_c128.json"
    assert ("--save-detailed" in argv) == (client == "vllm")
    assert argv[:3] == (["prog", "bench", "serve"] if client == "vllm" else ["prog", "--backend", "vllm"])


def test_a_fixed_prompt_length_is_fixed_for_both_clients():
    vllm = bench.client_argv("vllm", ["v"], H200[0], {"base_url": "u", "model": "m", "tokenizer": "t", "result_dir": "r"})
    assert "--random-range-ratio" not in vllm
    script = bench.client_argv("script", ["p"], H200[0], {"base_url": "u", "model": "m", "tokenizer": "t", "result_dir": "r"})
    assert script[script.index("--random-range-ratio") + 1] == "1.0"
    with pytest.raises(bench.BenchError):
        bench.client_argv("guidellm", ["g"], H200[0], {})


@pytest.mark.parametrize("phases,fragment", [
    ([], "at least one"),
    ([{"name": "A b", "input_len": 1, "output_len": 1, "concurrency": 1, "requests": 1}], "name must be 1 to 40 of a-z"),
    ([{"name": "a", "input_len": 1, "output_len": 1, "concurrency": 1, "requests": 1}] * 2, "name used twice"),
    ([{"name": "a", "input_len": 1, "output_len": 0, "concurrency": True, "requests": 1}], "output_len, concurrency must"),
    ([{"name": "a", "input_len": [64, 16], "output_len": 1, "concurrency": 1, "requests": 1}], "input_len must"),
    ([{"name": "a", "input_len": 1, "output_len": 1, "concurrency": 1, "requests": 1, "rate": 2}], "unknown keys ['rate']"),
])
def test_phases_that_cannot_run_are_named(phases, fragment):
    errors = bench.phase_errors(phases)
    assert errors and fragment in errors[0], errors


def test_the_default_phases_and_the_h200_ones_are_fine():
    assert bench.phase_errors(H200) == [] and bench.phase_errors(STANDIN) == []


def test_the_plan_label_leaves_out_where_a_replica_listens():
    plan = {"mode": "replicas", "replicas": [{"options": ["--host", "127.0.0.1", "--port", "8000", "--served-model-name",
                                                          "q", "--max-num-seqs", "55", "--enforce-eager",
                                                          "--shutdown-timeout", "30", "--quantization", "fp8"]}] * 2}
    assert bench.plan_label(plan) == "replicas, 2 replica(s): --max-num-seqs 55 --enforce-eager --quantization fp8"


def test_charts_are_drawn_from_the_summary(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    assert matplotlib
    summary = bench.summarize(H200, _results("vllm-0.25.0-h200/defaults", H200), {})
    names = bench.charts(summary, str(tmp_path), earlier=summary)
    assert names == ["throughput.png", "ttft.png", "itl.png"]
    assert all((tmp_path / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)


def test_each_phase_has_a_panel_of_its_own_and_prefill_counts_prompt_tokens():
    """A panel per phase, on its own scale; a prefill phase (one output token) shows prompt tok/s, the rest output
    tok/s; the series name each run by its label and time."""
    before = dict(bench.summarize(H200, _results("vllm-0.25.0-h200/defaults", H200), {}), when="20261204T0100Z")
    now = dict(bench.summarize(H200, _results("vllm-0.25.0-h200/defaults", H200), {}), when="20261204T0200Z",
               label="kv fp8")
    charts = {name: panels for name, _title, panels in bench.chart_panels(now, before)}
    assert list(charts) == ["throughput.png", "ttft.png", "itl.png"]
    throughput = dict(charts["throughput.png"])
    assert list(throughput) == [p["name"] for p in H200]
    prefill = throughput[H200[0]["name"]]
    assert [label for label, _v in prefill] == ["earlier run, 20261204T0100Z: prompt tok/s",
                                                "kv fp8, 20261204T0200Z: prompt tok/s"]
    row = now["phases"][0]
    assert prefill[1][1] == row["input_tok_s"] > 1000 * row["output_tok_s"]
    assert all(label.endswith("output tok/s") for phase in list(throughput)[1:] for label, _v in throughput[phase])
    # three percentiles for each of two runs in every phase's TTFT panel
    assert all(len(series) == 6 for _phase, series in charts["ttft.png"])


def test_prompt_throughput_is_the_prompt_tokens_over_the_duration():
    result = json.loads((FIX / "vllm-0.25.0-h200" / "defaults" / "prefill_2048.json").read_text())
    row = bench.summarize_phase(H200[0], result)
    assert row["input_tok_s"] == round(result["total_input_tokens"] / result["duration"], 2)
