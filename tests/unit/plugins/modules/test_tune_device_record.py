"""The tuning on real vLLM 0.25.0 at an RTX 4090's memory budget on a lent H100 (tests/fixtures/device/tune-0.25.0-h100,
tests/device/tune_proof.sh): the candidates re-made by today's planner and tune.py, the load generator's command line
today's module_utils/bench makes, and the decision re-made from what each candidate measured there."""
import json
from pathlib import Path

from ansible_collections.llmhost.vllm.plugins.module_utils import bench, tune

ROOT = Path(__file__).resolve().parents[4]
RECORD = ROOT / "tests" / "fixtures" / "device" / "tune-0.25.0-h100"
TABLE = ROOT / "tests" / "fixtures" / "device" / "vllm-0.25.0-plans-4090budget" / "vllm-0.25.0-options.json"
SETTINGS = {"tune_goal": "throughput", "tune_slo_p95_ttft_ms": 2000, "tune_throughput_floor": 0}


def _record():
    cands = json.loads((RECORD / "candidates.json").read_text())
    results = {}
    for c in cands["kept"]:
        done = RECORD / c["name"] / "tune.json"
        results[c["name"]] = (json.loads(done.read_text()) if done.exists()
                              else {"error": (RECORD / c["name"] / "error.txt").read_text().strip()})
    return cands, results


def test_todays_planner_makes_the_candidates_that_ran(tmp_path, capsys):
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "device"))
    import tune_proof  # pylint: disable=import-outside-toplevel
    tune_proof.candidates(str(TABLE), 81559, 3, str(tmp_path))
    argv = capsys.readouterr().out
    assert argv == (RECORD / "argv.txt").read_text()
    made, ran = (json.loads((d / "candidates.json").read_text()) for d in (tmp_path, RECORD))
    assert [(c["name"], c["plan"]) for c in made["kept"]] == [(c["name"], c["plan"]) for c in ran["kept"]]
    assert (made["dropped"], made["fingerprint"], made["phase"]) == (ran["dropped"], ran["fingerprint"], ran["phase"])


def test_the_benchmark_roles_client_ran_as_bench_makes_it_today():
    cands, _results = _record()
    for name in ("plan", "seqs_half", "seqs_double"):
        ran = json.loads((RECORD / name / "argv.json").read_text())
        target = {"base_url": "http://127.0.0.1:8000", "model": "qwen3-4b-shape", "tokenizer": "/root/qwen3-4b-shape",
                  "result_dir": "/root/tune-proof/" + name}
        assert ran == bench.client_argv("vllm", ran[:3], cands["phase"], target)


def test_the_planners_choice_stays_under_a_2_s_slo_half_the_sequences_queues_and_double_is_never_reached():
    """All three candidates measured in one lease: the plan's 6915 tokens/s at P95 TTFT 824 ms; twice its sequences
    the same within 0.3% (64 clients never fill 109 places); half of them let 64 clients queue for 54 places (3337
    tokens/s, P95 TTFT 4493 ms, out)."""
    cands, results = _record()
    assert sorted(results) == ["plan", "seqs_double", "seqs_half"] and not any("error" in r for r in results.values())
    got = tune.decide(results, cands["kept"], SETTINGS, cands["fingerprint"], "t")
    assert got["winner"] == "plan" and got["record"]["candidate"] == "plan" and got["record"]["wishes"] == {}
    assert got["out"] == {"seqs_half": "P95 TTFT 4493 ms, above tune_slo_p95_ttft_ms=2000.0"}
    assert round(got["figures"]["plan"]["throughput"]) == 6915 and round(got["figures"]["plan"]["p95_ttft_ms"]) == 824
    double = got["figures"]["seqs_double"]["throughput"] / got["figures"]["plan"]["throughput"]
    assert 0.99 < double < 1.0, double
    assert json.loads((RECORD / "tuned.json").read_text())["why"] == got["why"]
    assert "runner-up seqs_double" in got["why"]
    loose = tune.choose(results, "throughput", 5000)
    assert loose["ranked"] == ["plan", "seqs_double", "seqs_half"]  # with a looser SLO all qualify; the plan still leads
