"""vllm_ready against a real HTTP server on loopback that answers as vLLM's OpenAI server does: a server
that starts late is waited for, and one that lists another model, needs a key it was not given or
returns no completion is refused, naming the server and what it answered."""
import http.server
import json
import threading
import time

import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_ready as logic
from ansible_collections.llmhost.vllm.plugins.modules import vllm_ready


class FakeVllm(http.server.BaseHTTPRequestHandler):
    """/health, /v1/models and /v1/completions; self.server.state says how it behaves."""

    def log_message(self, *args):
        pass

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        key = self.server.state.get("key")
        return not key or self.headers.get("Authorization") == "Bearer " + key

    def do_GET(self):
        state = self.server.state
        state["seen"].append(self.path)
        if self.path == "/health":
            ready = time.monotonic() >= state.get("ready_at", 0)
            return self.answer(200 if ready else 503, {})
        if not self.authorized():
            return self.answer(401, {"error": "Unauthorized"})
        return self.answer(200, {"object": "list", "data": [{"id": state.get("model", "qwen"), "object": "model"}]})

    def do_POST(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length", 0))
        state["posted"].append(json.loads(self.rfile.read(length)))
        if not self.authorized():
            return self.answer(401, {"error": "Unauthorized"})
        return self.answer(200, {"choices": state.get("choices", [{"text": " Yes", "index": 0}])})


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeVllm)
    httpd.state = {"seen": [], "posted": []}
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def run(run_main):
    def run_ready(args):
        return run_main(vllm_ready.main, dict({"model": "qwen", "timeout": 10, "request_timeout": 5}, **args))
    return run_ready


def url_of(httpd):
    return "http://127.0.0.1:%d" % httpd.server_address[1]


def test_a_ready_server_in_one_run(run, server):
    result = run({"urls": [url_of(server)]})
    assert result["rc"] == 0 and result["changed"] is False
    # Ready at the first probe: no wait, only the time of one request (which a loaded machine stretches).
    assert result["servers"][0].pop("health_seconds") < 1.0
    assert result["servers"] == [{"url": url_of(server), "models": ["qwen"], "completion": " Yes"}]
    assert server.state["seen"] == ["/health", "/v1/models"]
    assert server.state["posted"] == [{"model": "qwen", "prompt": logic.PROMPT, "max_tokens": 8, "temperature": 0}]


def test_a_server_still_loading_is_waited_for(run, server):
    server.state["ready_at"] = time.monotonic() + 1.5
    result = run({"urls": [url_of(server) + "/"]})
    # It waited for the server (ready after 1.5 s), and stopped once it answered, well before the timeout (10 s).
    assert result["rc"] == 0 and 1.0 <= result["servers"][0]["health_seconds"] <= 8.0, result
    assert server.state["seen"].count("/health") >= 2


def test_the_key_is_sent_and_never_shown(run, server):
    server.state["key"] = "sk-llmhost-test-key"
    result = run({"urls": [url_of(server)], "api_key": "sk-llmhost-test-key"})
    assert result["rc"] == 0 and "sk-llmhost-test-key" not in json.dumps(result)
    refused = run({"urls": [url_of(server)]})
    assert refused["failed"] and "/v1/models (HTTP 401)" in refused["msg"]


@pytest.mark.parametrize("state,words", [
    ({"model": "other"}, "lists ['other'], not qwen"),
    ({"choices": []}, "/v1/completions (HTTP 200) gave no completion"),
    ({"ready_at": float("inf")}, "/health did not answer 200 within 2 s"),
])
def test_a_server_that_is_not_ready_is_refused_by_name(run, server, state, words):
    server.state.update(state)
    result = run({"urls": [url_of(server)], "timeout": 2})
    assert result["failed"] and url_of(server) in result["msg"] and words in result["msg"], result["msg"]


def test_nothing_listening_is_a_failure_not_a_crash(run):
    result = run({"urls": ["http://127.0.0.1:9"], "timeout": 1})
    assert result["failed"] and "http://127.0.0.1:9/health did not answer 200 within 1 s" in result["msg"]
    assert result["servers"] == [{"url": "http://127.0.0.1:9"}]


def test_the_wait_is_bounded_by_its_timeout():
    calls = []
    clock = iter(range(0, 100)).__next__
    waited = logic.wait_healthy(lambda *a: calls.append(a) or (503, ""), "http://x", 5, clock=clock, sleep=lambda s: None)
    assert waited is None and 2 <= len(calls) <= 5


@pytest.mark.parametrize("text,ids", [('{"data": [{"id": "a"}, {"id": "b"}]}', ["a", "b"]), ("not json", []),
                                      ('{"data": "x"}', []), ("[]", [])])
def test_listed_models(text, ids):
    assert logic.listed_models(text) == ids


def test_what_the_module_answered_against_real_vllm():
    """tests/device/ready_proof.sh on a lent H200: real vLLM 0.25.0 (dummy weights, an API key), asked at once
    after its start. The module waited on /health through the model load, torch.compile and CUDA graph capture,
    then saw the model listed and a completion; a wrong key and a port with nothing behind it were refused."""
    import pathlib
    record = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "device" / "vllm-ready-0.25.0-h200"
    starting = json.loads((record / "starting.json").read_text())
    (server,) = starting["servers"]
    assert not starting.get("failed") and server["health_seconds"] > 60
    assert server["models"] == ["qwen3-4b-shape"] and server["completion"].strip()
    assert starting["invocation"]["module_args"]["api_key"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    wrong_key = json.loads((record / "wrong_key.json").read_text())
    assert wrong_key["failed"] and "/v1/models (HTTP 401)" in wrong_key["msg"]
    nothing = json.loads((record / "nothing.json").read_text())
    assert nothing["failed"] and nothing["msg"] == "http://127.0.0.1:8001/health did not answer 200 within 5 s"
    assert [s["url"] for s in nothing["servers"]] == ["http://127.0.0.1:8000", "http://127.0.0.1:8001"]
    assert "Starting vLLM server on http://127.0.0.1:8000" in (record / "server-lines.txt").read_text()
