"""playbooks/upgrade_model.yml on the converged container host, each run under a bounded request loop on the host
that asks both replicas directly and the gateway in front of them; every request through the gateway must succeed
(the count and the latency percentiles of each run are printed), and no moment may find both replicas down.

- The canary rolled back: revision C of the stand-in hub's tiny model, for which the labelled vLLM stand-in answers
  in Qwen's byte tokens (the seed's broken tokenizer chain). Only replica 0 moves to it, with 10% of the gateway's
  requests; its answers fail the default prompt set's clean-text checks, so it is put back on A by renames while
  replica 1 keeps serving A throughout; the run fails, saying why, and the report says rollback.
- The canary promoted: revision B answers as A does; replica 0 first, then replica 1.
- Back to A with the canary off (upgrade_model_canary=false): both replicas restart one at a time, A's folders are
  renamed back, with no download and nothing quantized.

The replicas are the labelled vLLM stand-in (no GPU here): what is proven is the order of the swap and the canary's
wiring (restart one, weights, soak, the prompt set, Prometheus' figures, the verdict, promote or roll back), not
vLLM's own load time or answers. Container scenario only."""
import base64
import json
import os
import time
from pathlib import Path

import pytest

REV_A, REV_B = "cfadfc797a22451d91044093f8227f9f97c8d57f", "0030871344bfdbc0dd45c2709b02c0395d8e1885"
REV_C = "7b1e5c0ffee0b17e5d00d1e5a11cebad0c0de0c3"  # answers in byte tokens (prepare.yml)
MODEL = "/srv/llmhost/models/tiny-qwen"
REPORTS = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent")) / "reports"
AWQ = MODEL + "-awq-w4g128"
API_KEY = "test-key-of-the-molecule-scenario"
GATEWAY_KEY = "test-key-of-alice-0123456789"
GATEWAY_CERT = "/etc/ssl/llmhost-test/gateway.pem"
GATEWAY_PORT = int(os.environ.get("LLMHOST_GATEWAY_PORT", "3150"))
LOOP_MAX_SECONDS = 420
# Two of Prometheus' scrape intervals (15 s). The stand-in's latency is its own, not vLLM's: the TTFT rule is held
# loosely here (its cases are unit tests); the answers and the 5xx rate decide.
CANARY = ["-e", "upgrade_model_canary_soak_seconds=30", "-e", "upgrade_model_canary_max_ttft_ratio=5"]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the model swap is tested in the container scenario")


def _percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def _swap_under_load(host, playbook, under_load, revision, *more):
    """upgrade_model.yml to `revision` under the loop; returns (changed, failed, ticks, output), after printing the
    counts."""
    targets = ["http://127.0.0.1:8000,%s" % API_KEY, "http://127.0.0.1:8001,%s" % API_KEY,
               "https://127.0.0.1:%d,%s,%s" % (GATEWAY_PORT, GATEWAY_KEY, GATEWAY_CERT)]
    t0 = time.monotonic()
    (changed, failed, out), ticks = under_load(
        host, "llmhost-swap", targets,
        lambda: playbook("-e", "model_revision=" + revision, *more, path="playbooks/upgrade_model.yml"),
        LOOP_MAX_SECONDS)
    seconds = time.monotonic() - t0
    latencies = [t[2][2] for t in ticks]
    print("swap to %s: playbook %.0f s, changed=%d, failed=%d; %d requests through the gateway, %d failed; latency "
          "p50 %.3f s, p99 %.3f s, max %.3f s; the replicas' own requests failed %d and %d times (restarting)"
          % (revision[:8], seconds, changed, failed, len(ticks), len(_failed(ticks, 2)), _percentile(latencies, 0.5),
             _percentile(latencies, 0.99), max(latencies), len(_failed(ticks, 0)), len(_failed(ticks, 1))))
    return changed, failed, ticks, out


def _report(verdict):
    """The newest canary report on the controller (llmhost_reports_dir/canary/<host>/<time>/), and its verdict."""
    runs = sorted(REPORTS.glob("canary/llmhost-ctr/*/verdict.json"))
    assert runs, "no canary report under %s" % REPORTS
    found = json.loads(runs[-1].read_text())
    assert found["decision"] == verdict, found
    return found, (runs[-1].parent / "report.md").read_text()


def _failed(ticks, column):
    return [t[0] for t in ticks if not t[1][column]]


def _assert_rolled(ticks):
    assert len(ticks) > 20, ticks[:5]
    assert not _failed(ticks, 2), "requests through the gateway failed at %s s" % _failed(ticks, 2)[:10]
    assert _failed(ticks, 0) and _failed(ticks, 1), "the loop never saw a replica restart"
    both = set(_failed(ticks, 0)) & set(_failed(ticks, 1))
    assert not both, "no replica answered at %s s" % sorted(both)[:10]


def _served_revision(host):
    env = [host.file("/etc/llmhost/vllm/%d.env" % k).content_string for k in (0, 1)]
    return {line.split("@", 1)[1].split()[0] for text in env for line in text.splitlines() if line.startswith("# Model: ")}


# After every unmarked check, before the seed quantizer's (order 2): it ends on revision A again. Files in
# vllm_service's folder that are not its own are not taken for retired replicas (no unit stopped, kept).
@pytest.mark.changes_the_host(order=1)
def test_a_canary_is_rolled_back_then_one_promoted_then_back_with_no_failed_request(host, playbook, under_load,
                                                                                    hub_requests):
    assert _served_revision(host) == {REV_A}
    foreign = {"/etc/llmhost/vllm/7.env": "# mine\nX=1\n", "/etc/llmhost/vllm/notes.env": "Y=2\n"}
    for path, text in foreign.items():
        host.run_test("printf %%s '%s' > %s" % (text, path))

    # C answers in byte tokens: replica 0 alone moves to it, is judged, and is put back on A; replica 1 never stops
    changed, failed, ticks, out = _swap_under_load(host, playbook, under_load, REV_C, *CANARY)
    assert failed and "the canary was rolled back, and every replica serves" in out, out[-4000:]
    assert not _failed(ticks, 2), "requests through the gateway failed at %s s" % _failed(ticks, 2)[:10]
    assert _failed(ticks, 0) and not _failed(ticks, 1), "only the canary (replica 0) restarts"
    assert _served_revision(host) == {REV_A}
    verdict, report = _report("rollback")
    assert verdict["scores"]["canary"]["score"] < verdict["scores"]["old"]["score"], verdict["scores"]
    assert "<0xE5><0x8C><0x97>" in report and "- FAIL answers:" in report, report
    # Prometheus measured both groups over the soak: the loop's requests, none of them 5xx
    assert verdict["figures"]["canary"]["requests"] > 0 and verdict["figures"]["canary"]["errors"] == 0, verdict
    assert host.file(MODEL + ".previous/generation_config.json").contains("byte_tokens")  # C kept, A in place
    assert not host.file("/etc/llmhost/vllm/restart-pending.json").exists
    assert "weight=" not in host.file("/etc/nginx/conf.d/llmhost-gateway.conf").content_string

    # B answers as A does: promoted, replica 1 follows
    changed, failed, ticks, out = _swap_under_load(host, playbook, under_load, REV_B, *CANARY)
    assert failed == 0 and changed > 0, out[-4000:]
    _assert_rolled(ticks)
    assert _served_revision(host) == {REV_B}
    verdict, report = _report("promote")
    assert "## Decision: promote" in report and "| prompt checks passed |" in report, report
    assert host.file(MODEL + "/generation_config.json").contains("llmhost_test_revision")  # B's bytes in place
    # A's model and its quantized output are kept beside B's, for the rollback
    assert host.file(MODEL + ".previous/llmhost-manifest.json").contains(REV_A)
    assert host.file(AWQ + ".previous/llmhost-quantize.json").exists
    assert not host.file("/etc/llmhost/vllm/restart-pending.json").exists
    for path, text in foreign.items():
        assert host.file(path).content_string == text, path
    host.run_test("rm -f %s" % " ".join(foreign))

    # back to A with the canary off: both restart, one at a time, from A's kept folders
    asked = len(hub_requests())
    changed, failed, ticks, out = _swap_under_load(host, playbook, under_load, REV_A, "-e", "upgrade_model_canary=false")
    assert failed == 0 and changed > 0, out[-3000:]
    _assert_rolled(ticks)
    assert _served_revision(host) == {REV_A}
    # the rollback renamed A's kept folders back: the hub was not asked, nothing was quantized, B is kept instead
    assert hub_requests()[asked:] == [], hub_requests()[asked:][:5]
    # counted in the task headers only: the profile_tasks recap at the end may list the same task among the slowest
    assert out.count("TASK [llmhost.vllm._common : Put the folder kept from before back in place") == 2, out[-4000:]
    assert host.file(MODEL + ".previous/generation_config.json").contains("llmhost_test_revision")
    # every swap and rollback in this run stayed within systemd's start limit; none crashed (systemd's restarts)
    assert host.run_test("systemctl is-active vllm@0.service vllm@1.service").stdout.split() == ["active", "active"]
    assert host.run_test("systemctl show -p NRestarts --value vllm@0.service vllm@1.service").stdout.split() == ["0", "0"]
    assert not host.file(MODEL + "/generation_config.json").contains("llmhost_test_revision")


def test_one_replica_is_not_swapped_without_leave_for_the_downtime(host, playbook):
    """The first play reads vllm_service's replica list; with one replica it stops before anything changes."""
    one = "/srv/llmhost-test/one-replica"
    listing = json.dumps([{"targets": ["127.0.0.1:8000"], "labels": {"source": "llmhost-test/tiny-qwen@" + REV_A}}])
    host.run_test("mkdir -p %s && echo %s | base64 -d > %s/prometheus-targets.json",
                  one, base64.b64encode(listing.encode()).decode(), one)
    changed, failed, out = playbook("-e", "model_revision=" + REV_B, "-e", "vllm_service_config_dir=" + one,
                                    path="playbooks/upgrade_model.yml")
    assert failed and changed == 0, out[-3000:]
    assert "from one replica. While it restarts onto the new model nothing answers" in " ".join(out.split()), out[-3000:]
    assert "upgrade_model_allow_downtime=true" in out
    host.run_test("rm -rf %s", one)
