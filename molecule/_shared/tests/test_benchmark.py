"""playbooks/benchmark.yml on the converged container host, through the real nginx gateway (TLS) to the labelled vLLM
stand-in replicas (no GPU here; their figures are the stand-in's). The load generator is the `script` client: the
real benchmarks/benchmark_serving.py of vLLM 0.6.4.post1, unpacked from the real source archive (the harness's copy,
sha256-checked) into the role's real venv. The `current` profile's default client, `vllm bench serve`, is refused
here with its reason (the stand-in vLLM has none); it ran on a lent H200 instead. Container scenario only."""
import json
import os
import tempfile
from pathlib import Path

import pytest
import yaml

PHASES = [
    {"name": "prefill", "input_len": 64, "output_len": 1, "concurrency": 1, "requests": 4},
    {"name": "decode_c4", "input_len": 8, "output_len": 16, "concurrency": 4, "requests": 8},
    {"name": "mixed_c16", "input_len": [16, 64], "output_len": 8, "concurrency": 16, "requests": 32},
]
ACCESS_LOG = "/var/log/nginx/llmhost-gateway.access.log"


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the benchmark is tested in the container scenario")


def _vars(tmp, reports, **more):
    """An extra-vars file: the phases, the controller's report folder (llmhost_reports_dir) and more. A phase here
    takes seconds: the run looks at it every second, not every benchmark_poll's default 5 s."""
    path = tmp / ("vars-%d.yml" % len(list(tmp.glob("vars-*.yml"))))
    path.write_text(yaml.safe_dump(dict({"benchmark_phases": PHASES, "llmhost_reports_dir": str(reports),
                                         "benchmark_poll": 1}, **more)))
    return "@%s" % path


def _run_dirs(reports):
    return sorted((reports / "bench" / "llmhost-ctr").glob("*")) if (reports / "bench").exists() else []


@pytest.fixture(scope="module")
def runs(host, playbook):
    """A run with the script client, then a second one compared with the first; the gateway's log lines between."""
    # a module's fixture is made before the function-scoped skip above: it skips itself
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("the benchmark is tested in the container scenario")
    tmp = Path(tempfile.mkdtemp(prefix="llmhost-bench-"))
    reports = tmp / "reports"
    before = int(host.run_test("wc -l < %s", ACCESS_LOG).stdout)
    changed, failed, out = playbook("-e", _vars(tmp, reports, benchmark_client="script"), path="playbooks/benchmark.yml")
    assert not failed, out[-5000:]
    after = int(host.run_test("wc -l < %s", ACCESS_LOG).stdout)
    first = _run_dirs(reports)
    assert len(first) == 1, out[-3000:]
    # the second run measures one phase only: the report compares the phases both runs have
    changed2, failed2, out2 = playbook("-e", _vars(tmp, reports, benchmark_client="script", benchmark_phases=PHASES[:1]),
                                       "-e", "compare=%s" % first[0],
                                       "-e", "label=second", path="playbooks/benchmark.yml")
    assert not failed2, out2[-5000:]
    return {"dirs": _run_dirs(reports), "requests": after - before, "out": out, "changed": (changed, changed2), "tmp": tmp}


def test_a_run_comes_back_with_raw_results_report_charts_plan_and_profile(runs):
    run = runs["dirs"][0]
    names = {p.name for p in run.iterdir()}
    for phase in PHASES:
        assert {phase["name"] + ".json", phase["name"] + ".log", phase["name"] + ".rc"} <= names, names
        assert (run / (phase["name"] + ".rc")).read_text().strip() == "0"
    assert {"report.md", "summary.json", "plan.json", "profile.json", "throughput.png", "ttft.png", "itl.png"} <= names
    assert all((run / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in ("throughput.png", "ttft.png", "itl.png"))
    assert json.loads((run / "plan.json").read_text())["served_model_name"] == "qwen-test"
    assert json.loads((run / "profile.json").read_text())["name"] == "current"
    # the raw result is the script's own: per-request times beside the percentiles
    raw = json.loads((run / "mixed_c16.json").read_text())
    assert len(raw["ttfts"]) == 32 and raw["max_concurrency"] == 16 and "p99_ttft_ms" in raw


def test_the_key_reaches_the_load_generator_from_a_0600_file_only(host, runs):
    key = host.file("/opt/llmhost/bench/api-key")
    assert key.mode == 0o600 and key.user == "root"
    alice = key.content_string
    assert alice.startswith("test-key-of-alice")  # the first gateway client's, through the gateway
    assert alice not in runs["out"]
    assert not any(alice in p.read_text(errors="replace") for p in runs["dirs"][0].iterdir() if p.suffix != ".png")


def test_every_request_went_through_the_gateway_and_completed(runs):
    summary = json.loads((runs["dirs"][0] / "summary.json").read_text())
    assert summary["target"].endswith("(the gateway)") and summary["target"].startswith("https://127.0.0.1:")
    assert summary["client_label"] == "benchmark_serving.py of vLLM 0.6.4.post1"
    rows = {r["phase"]: r for r in summary["phases"]}
    assert all(r["completed"] == r["requests"] and r["errors"] == 0 for r in rows.values()), rows
    # outputs as long as asked (EOS ignored), counted with the model's tokenizer
    assert rows["decode_c4"]["mean_output_len"] == 16.0 and rows["prefill"]["mean_output_len"] == 1.0
    assert 16 <= rows["mixed_c16"]["mean_input_len"] <= 64
    assert rows["decode_c4"]["output_tok_s"] > 0 and rows["decode_c4"]["itl_p50_ms"] > 0
    # each phase's requests, and the script's one test request per phase, are in the gateway's log
    asked = sum(p["requests"] for p in PHASES)
    assert asked <= runs["requests"] <= asked + len(PHASES), runs["requests"]
    report = (runs["dirs"][0] / "report.md").read_text()
    assert report.startswith("# Benchmark of llmhost-ctr, ") and "| decode_c4 | 4 | 8/8 | 0 |" in report


def test_a_second_run_is_compared_with_the_first(runs):
    first, second = runs["dirs"]
    report = (second / "report.md").read_text()
    assert "- label: second" in report
    assert "## Against %s (ratio: this run / that one)" % first.name in report
    ratios = report.split("## Against", 1)[1]
    assert "| prefill | " in ratios and "| decode_c4 |" not in ratios, ratios
    assert {p.name for p in second.glob("*.png")} == {"throughput.png", "ttft.png", "itl.png"}


def test_check_mode_changes_nothing_and_measures_nothing(host, playbook, runs):
    before = int(host.run_test("wc -l < %s", ACCESS_LOG).stdout)
    # the seed's mixed phase opens 128 requests at once, more than alice's burst of 70 lets wait at the gateway
    phases = PHASES + [{"name": "mixed_c128", "input_len": [512, 2048], "output_len": 512, "concurrency": 128,
                        "requests": 512}]
    changed, failed, out = playbook("--check", "-e", _vars(runs["tmp"], runs["tmp"] / "check", benchmark_client="script",
                                                           benchmark_phases=phases),
                                    path="playbooks/benchmark.yml")
    assert not failed and changed == 0, out[-4000:]
    words = " ".join(out.replace("'", " ").split())  # the callback wraps long messages
    assert "WARNING: through the gateway, client alice may have 70 requests waiting" in words, out[-4000:]
    assert "WARNING: through the gateway" not in " ".join(runs["out"].split())
    assert int(host.run_test("wc -l < %s", ACCESS_LOG).stdout) == before
    assert not (runs["tmp"] / "check").exists()


def test_a_phase_whose_load_generator_fails_is_reported_and_the_run_goes_on(runs, playbook):
    """An endpoint where nothing listens: the script exits non-zero, the report says so for that phase."""
    changed, failed, out = playbook("-e", _vars(runs["tmp"], runs["tmp"] / "down", benchmark_client="script",
                                                benchmark_url="http://127.0.0.1:9", benchmark_phases=PHASES[:1]),
                                    path="playbooks/benchmark.yml")
    assert not failed, out[-4000:]
    run = _run_dirs(runs["tmp"] / "down")[0]
    summary = json.loads((run / "summary.json").read_text())
    assert [(r["phase"], r["errors"], r["output_tok_s"]) for r in summary["phases"]] == [("prefill", 4, None)]
    assert "the load generator failed" in out and (run / "prefill.rc").read_text().strip() != "0"


def test_a_phase_past_its_time_is_stopped_and_reported_and_the_run_goes_on(host, runs, playbook):
    """Each phase needs more than its two seconds whatever the client's start-up takes: four streams of 64 tokens
    one after another, at the stand-in's 0.05 s a token (13 s). Each is stopped at its time, reported as stopped,
    and the next one still starts."""
    slow = [dict(p, output_len=64, concurrency=1, requests=4) for p in PHASES[:2]]
    changed, failed, out = playbook("-e", _vars(runs["tmp"], runs["tmp"] / "late", benchmark_client="script",
                                                benchmark_phase_timeout=2, benchmark_poll=1, benchmark_phases=slow),
                                    path="playbooks/benchmark.yml")
    assert not failed, out[-4000:]
    run = _run_dirs(runs["tmp"] / "late")[0]
    rows = [(r["phase"], r["errors"], r["first_error"]) for r in json.loads((run / "summary.json").read_text())["phases"]]
    stopped = "ran past benchmark_phase_timeout and was stopped"
    assert rows == [("prefill", 4, stopped), ("decode_c4", 4, stopped)], rows
    assert (run / "prefill.rc").read_text().strip() == "timeout" and "ran past benchmark_phase_timeout (2 s)" in out
    # nothing of the stopped phases is left running on the host ([p]: the pattern does not match the shell asking)
    assert host.run("pgrep -f -- '--result-filename ([p]refill|[d]ecode_c4)[.]json'").rc == 1


def test_the_profiles_default_client_is_refused_where_vllm_has_no_bench_serve(playbook, runs):
    changed, failed, out = playbook("-e", _vars(runs["tmp"], runs["tmp"] / "default"), path="playbooks/benchmark.yml")
    assert failed, out[-3000:]
    assert "/opt/llmhost/vllm/venv/bin/vllm has no `vllm bench serve`" in out, out[-3000:]
    assert "benchmark_client=script runs the pinned one" in out


def test_the_report_alone_measures_nothing_and_reports_the_newest_run(host, playbook, runs):
    """`--tags benchmark_report` alone: no phase runs, no run folder is made, and the newest run kept on the host
    (folders are named by their UTC start) is reported again and fetched to the controller."""
    kept = "ls -1 /var/lib/llmhost/bench | grep -E '^[0-9]+T[0-9]+Z$' | sort"
    before = host.check_output(kept).split()
    reports = runs["tmp"] / "again"
    extra = _vars(runs["tmp"], reports, benchmark_client="script")
    changed, failed, out = playbook("--tags", "benchmark_report", "-e", extra, path="playbooks/benchmark.yml")
    assert not failed, out[-4000:]
    assert host.check_output(kept).split() == before
    fetched = _run_dirs(reports)
    assert [d.name for d in fetched] == [before[-1]], (fetched, before)
    assert (fetched[0] / "report.md").exists() and (fetched[0] / "summary.json").exists()
    assert "Start the phase in the background" not in out
