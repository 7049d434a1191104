"""canary_probe against real HTTP servers on loopback: two replicas that answer completions as vLLM's OpenAI server
does (one of them in byte tokens, as the seed's broken tokenizer chain did) and a Prometheus that answers instant
queries as its /api/v1/query does. What it gathers goes through the filter canary_verdict, as the playbook's does."""
import http.server
import json
import re
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from ansible_collections.llmhost.vllm.plugins.filter.canary_verdict import canary_verdict
from ansible_collections.llmhost.vllm.plugins.module_utils import canary
from ansible_collections.llmhost.vllm.plugins.modules import canary_probe

PROMPTS = yaml.safe_load((Path(__file__).resolve().parents[2] / "playbooks" / "files" / "canary-prompts.yml")
                         .read_text())
# What a sound model answers to the default set, prompt by prompt.
GOOD = {"zh-capital": "北京。", "zh-sentence": "我是一个语言模型。", "zh-translate": " I love Tiananmen in Beijing.",
        "en-capital": " Paris", "en-arithmetic": " 42"}
LIMITS = {"score_tolerance": 0.0, "max_error_rate_increase": 0.01, "max_ttft_ratio": 1.5}
CONTEXT = {"old_source": "q@a", "new_source": "q@b", "canary_endpoint": "127.0.0.1:8000",
           "old_endpoints": ["127.0.0.1:8001"], "percent": 10, "soak_s": 60}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, doc):
        body = json.dumps(doc, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        state = self.server.state
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        state["posted"].append(body)
        if self.headers.get("Authorization") != "Bearer k":
            return self.answer(401, {"error": "Unauthorized"})
        name = next(p["name"] for p in PROMPTS if p["prompt"] == body["prompt"])
        text = state["answers"](name)
        return self.answer(200, {"choices": [{"index": 0, "text": text, "finish_reason": "stop"}]})

    def do_GET(self):
        state = self.server.state
        query = parse_qs(urlparse(self.path).query)["query"][0]
        state["queries"].append(query)
        group = "canary" if 'instance=~"%s"' % re.escape(self.server.state["canary"]).replace("\\", "\\\\") in query else "old"
        kind = "errors" if 'status="5xx"' in query else "ttft" if "histogram_quantile" in query else "requests"
        value = state["figures"][group][kind]
        result = [] if value is None else [{"metric": {}, "value": [1765000000.0, str(value)]}]
        return self.answer(200, {"status": "success", "data": {"resultType": "vector", "result": result}})


def serve(state):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.state = dict(state, posted=[], queries=[])
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture
def servers():
    figures = {"canary": {"requests": 40, "errors": 0, "ttft": 0.12}, "old": {"requests": 360, "errors": 0, "ttft": 0.1}}
    made = {"canary": serve({"answers": GOOD.get}), "old": serve({"answers": GOOD.get}),
            "prometheus": serve({"figures": figures})}
    made["prometheus"].state["canary"] = canary.instance(url(made["canary"]))
    yield made
    for httpd in made.values():
        httpd.shutdown()
        httpd.server_close()


def url(httpd):
    return "http://127.0.0.1:%d" % httpd.server_address[1]


def probe(run_main, servers):
    return run_main(canary_probe.main, {"prompts": PROMPTS, "canary_url": url(servers["canary"]),
                                        "old_urls": [url(servers["old"])], "model": "qwen", "api_key": "k",
                                        "prometheus_url": url(servers["prometheus"]), "window_s": 60,
                                        "request_timeout": 5})


def test_a_sound_canary_is_promoted(run_main, servers):
    result = probe(run_main, servers)
    assert result["rc"] == 0 and result["changed"] is False
    assert result["answers"]["canary"]["zh-capital"] == {"text": "北京。", "finish_reason": "stop"}
    posted = servers["canary"].state["posted"]
    assert len(posted) == len(PROMPTS) and all(p["temperature"] == 0 and p["model"] == "qwen" for p in posted)
    assert len(servers["prometheus"].state["queries"]) == 6
    verdict = canary_verdict(result, PROMPTS, LIMITS, CONTEXT)
    assert verdict["decision"] == "promote", verdict["why"]
    assert "| P95 TTFT (s) | 0.120 | 0.100 |" in verdict["report"]


def test_a_canary_that_answers_in_byte_tokens_is_rolled_back(run_main, servers):
    servers["canary"].state["answers"] = lambda name: "<0xE5><0x8C><0x97><0xE4>" if name.startswith("zh") else GOOD[name]
    verdict = canary_verdict(probe(run_main, servers), PROMPTS, LIMITS, CONTEXT)
    assert verdict["decision"] == "rollback"
    assert verdict["scores"]["old"]["score"] == 1.0 and verdict["scores"]["canary"]["score"] < 0.6
    assert "| zh-capital | `clean_text` | FAIL byte tokens in place of characters" in verdict["report"]


def test_a_canary_with_more_errors_is_rolled_back(run_main, servers):
    servers["prometheus"].state["figures"]["canary"]["errors"] = 4
    verdict = canary_verdict(probe(run_main, servers), PROMPTS, LIMITS, CONTEXT)
    assert verdict["decision"] == "rollback" and verdict["why"].startswith("10.00% of the canary's 40 requests failed")


def test_a_replica_that_refuses_the_key_fails_every_check_and_a_silent_prometheus_rolls_back(run_main, servers):
    servers["prometheus"].shutdown()
    servers["prometheus"].server_close()
    result = run_main(canary_probe.main, {"prompts": PROMPTS[:1], "canary_url": url(servers["canary"]),
                                          "old_urls": [url(servers["old"])], "model": "qwen", "api_key": "wrong",
                                          "prometheus_url": url(servers["prometheus"]), "request_timeout": 2})
    assert result["answers"]["canary"]["zh-capital"]["error"].startswith("HTTP 401")
    assert result["responses"]["canary_requests"]["status"] == "error"
    verdict = canary_verdict(result, PROMPTS[:1], LIMITS, CONTEXT)
    assert verdict["decision"] == "rollback" and "Prometheus did not answer: canary_errors: HTTP no answer" in verdict["why"]


def test_a_bad_prompt_set_is_refused_by_name(run_main, servers):
    result = run_main(canary_probe.main, {"prompts": [{"name": "a", "prompt": "p", "checks": []}], "canary_url": "x",
                                          "old_urls": ["y"], "model": "qwen"})
    assert result["failed"] and "prompts prompt 1 (a): needs a list of checks" in result["msg"]
