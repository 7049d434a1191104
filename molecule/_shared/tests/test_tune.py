"""playbooks/tune.yml on the converged container host, under a bounded request loop on the host that asks replica 1
directly and the gateway in front of both; every request through the gateway must succeed.

Three candidates: the planner's own, one of the test's own (`--max-num-batched-tokens 8192`, which the stand-in
refuses to start with) and the planner's half of its concurrent sequences (`--max-num-seqs 128`: the stand-in streams
the plan's 256 at 0.08 s a token, and the half at its own 0.05 s, the speed every later check reads). Both are the
test's settings of the labelled vLLM stand-in (VLLM_STANDIN_SPEED_BY_OPTION in molecule.yml), not a model's speeds:
what is proven is the loop - replica 0 out of the gateway, each candidate
served there by the real unit and measured at its port with the benchmark role's client, the one that does not
start recorded and skipped, the faster adopted in tuned.json, replica 0 back in the gateway and replica 1 restarted
onto it. It runs before the other checks (before_the_others) and leaves the winner adopted: every later check reads
a host that plans with it, the doctor's reports it, and the re-runs by tag (test_vllm_service_rerun.py) show that
the site playbook keeps it with no change. Container scenario only."""
import json
import os
import time
from pathlib import Path

import pytest

REPORTS = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent")) / "reports"
API_KEY = "test-key-of-the-molecule-scenario"
GATEWAY_KEY = "test-key-of-alice-0123456789"
GATEWAY_CERT = "/etc/ssl/llmhost-test/gateway.pem"
GATEWAY_PORT = int(os.environ.get("LLMHOST_GATEWAY_PORT", "3150"))
# a candidate's phase takes seconds here: the benchmark role looks at it every second, not every benchmark_poll's 5 s
TUNE = {"benchmark_client": "script", "benchmark_poll": 1,
        "tune_workload": {"input_len": 16, "output_len": 16, "concurrency": 4},
        "tune_max_candidates": 3, "tune_slo_p95_ttft_ms": 5000,
        "tune_candidates": [{"name": "broken", "extra_args": ["--max-num-batched-tokens", "8192"]}]}


pytestmark = pytest.mark.before_the_others


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("tuning is tested in the container scenario")


@pytest.fixture(scope="module")
def tuned(host, playbook, under_load):
    # a module's fixture is made before the function-scoped skip above: it skips itself
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("tuning is tested in the container scenario")
    targets = ["http://127.0.0.1:8001,%s" % API_KEY, "https://127.0.0.1:%d,%s,%s" % (GATEWAY_PORT, GATEWAY_KEY, GATEWAY_CERT)]
    t0 = time.monotonic()
    (changed, failed, out), ticks = under_load(
        host, "llmhost-tune", targets, lambda: playbook("-e", json.dumps(TUNE), path="playbooks/tune.yml"), 420)
    print("tune: playbook %.0f s, changed=%d, failed=%d; %d requests through the gateway, %d failed; replica 1's own "
          "failed %d times" % (time.monotonic() - t0, changed, failed, len(ticks), sum(not t[1][1] for t in ticks),
                               sum(not t[1][0] for t in ticks)))
    runs = sorted(REPORTS.glob("tune/llmhost-ctr/*/report.md"))
    return {"failed": failed, "out": out, "ticks": ticks, "report": runs[-1] if runs else None}


def test_the_faster_candidate_is_adopted_with_no_failed_request(host, tuned):
    assert tuned["failed"] == 0, tuned["out"][-4000:]
    assert tuned["ticks"] and all(t[1][1] for t in tuned["ticks"]), "requests through the gateway failed"
    record = json.loads(host.file("/etc/llmhost/vllm/tuned.json").content_string)
    assert record["candidate"] == "seqs_half" and record["wishes"] == {"max_num_seqs": 128}, record
    assert record["for"]["vllm"] and "2x NVIDIA GeForce RTX 4090 (test)" == record["for"]["gpus"]
    for name in ("0", "1"):
        assert "--max-num-seqs 128 " in host.file("/etc/llmhost/vllm/%s.env" % name).content_string
    conf = host.file("/etc/nginx/conf.d/llmhost-gateway.conf").content_string
    assert "weight=" not in conf and " down " not in conf, conf  # replica 0 is back in the rotation
    assert not host.file("/etc/llmhost/vllm/restart-pending.json").exists


def test_the_report_has_every_candidate_and_why(tuned):
    assert tuned["report"], "no tune report under %s" % REPORTS
    text = tuned["report"].read_text()
    assert "| seqs_half | **winner** |" in text and "| plan | ranked 2 of 2 |" in text, text
    assert "| broken | out: did not start or was not measured:" in text and "exited 2 times while starting" in text
    assert "beyond tune_max_candidates=3" in text and "adopted: seqs_half" in text
    assert {p.name for p in tuned["report"].parent.glob("*.png")} == {"throughput.png", "ttft.png", "itl.png"}
    assert len(list(tuned["report"].parent.glob("bench/llmhost-ctr/*/tune.json"))) == 2  # plan's and seqs_half's runs


def test_the_plan_says_it_plans_with_the_adopted_tuning(host):
    env = host.file("/etc/llmhost/vllm/0.env").content_string
    assert "tuning = seqs_half: measured best by playbooks/tune.yml at " in env, env
