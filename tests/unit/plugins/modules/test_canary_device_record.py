"""The canary's evidence from real vLLM 0.25.0 and Prometheus 2.42 on a lent H100
(tests/fixtures/device/canary-0.25.0-h100): the verdict re-judged from what canary_probe gathered there, and the
series vLLM exported, which the SLO queries must select."""
import json
import re
from pathlib import Path

import yaml

from ansible_collections.llmhost.vllm.plugins.filter.canary_verdict import canary_verdict
from ansible_collections.llmhost.vllm.plugins.module_utils import canary

ROOT = Path(__file__).resolve().parents[4]
RECORD = ROOT / "tests" / "fixtures" / "device" / "canary-0.25.0-h100"
PROMPTS = yaml.safe_load((ROOT / "playbooks" / "files" / "canary-prompts.yml").read_text())
LIMITS = {"score_tolerance": 0.0, "max_error_rate_increase": 0.01, "max_ttft_ratio": 1.5}


def test_the_recorded_evidence_promotes_with_every_slo_measured():
    probe = json.loads((RECORD / "probe.json").read_text())
    context = {"old_source": "old", "new_source": "new", "canary_endpoint": "127.0.0.1:8000",
               "old_endpoints": ["127.0.0.1:8001"], "percent": 10, "soak_s": 120}
    verdict = canary_verdict(probe, PROMPTS, LIMITS, context)
    assert verdict["decision"] == "promote", verdict["why"]
    figures = verdict["figures"]
    assert 40 <= figures["canary"]["requests"] < 60 and 360 <= figures["old"]["requests"] < 420, figures
    assert figures["canary"]["errors"] == 0 and figures["old"]["errors"] == 0
    assert 0 < figures["canary"]["ttft_p95_s"] < 1 and 0 < figures["old"]["ttft_p95_s"] < 1
    # dummy weights: both replicas pass the same checks
    assert verdict["scores"]["canary"]["passed"] == verdict["scores"]["old"]["passed"] == 6
    assert json.loads((RECORD / "verdict.json").read_text())["figures"] == figures


def _selects(query, line):
    """Whether the label matchers of the query's http_requests_total selector hold for one exported sample."""
    selector = re.search(r"http_requests_total\{([^}]*)\}", query).group(1)
    labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("{", 1)[1].split("}", 1)[0]))
    for name, op, value in re.findall(r'(\w+)(=~|=)"([^"]*)"', selector):
        if name in ("instance", "llmhost_target"):  # Prometheus' target labels, not the exporter's
            continue
        if (op == "=" and labels.get(name) != value) or (op == "=~" and not re.fullmatch(value, labels.get(name, ""))):
            return False
    return True


def test_the_request_queries_select_what_vllm_0_25_exports():
    exported = [line for line in (RECORD / "metrics-8000.txt").read_text().splitlines()
                if line.startswith("http_requests_total{")]
    assert exported == ['http_requests_total{handler="none",method="POST",status="2xx"} 40.0']
    queries = canary.slo_queries({"http_requests": "http_requests_total", "ttft": "vllm:time_to_first_token_seconds"},
                                 120, "127.0.0.1:8000", ["127.0.0.1:8001"])
    assert _selects(queries["canary_requests"], exported[0])
    assert not _selects(queries["canary_errors"], exported[0])  # a 2xx answer is no 5xx
    assert not _selects('http_requests_total{handler=~"/v1/.*"}', exported[0])  # the first run's query: no series
