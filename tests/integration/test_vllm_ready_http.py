"""vllm_ready against a real HTTP server on loopback that answers as vLLM's OpenAI server does: a server
that starts late is waited for, and one that lists another model, needs a key it was not given or
returns no completion is refused, naming the server and what it answered."""
import http.server
import json
import threading

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
            # ready once it has answered 503 to loading_probes probes (never, with loading_probes=None)
            loading = state.get("loading_probes", 0)
            ready = loading is not None and state["seen"].count("/health") > loading
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
    # Ready at the first probe: asked once (the seconds it took are the real clock's, so not asserted here).
    assert result["servers"][0].pop("health_seconds") >= 0
    assert result["servers"] == [{"url": url_of(server), "models": ["qwen"], "completion": " Yes"}]
    assert server.state["seen"] == ["/health", "/v1/models"]
    assert server.state["posted"] == [{"model": "qwen", "prompt": logic.PROMPT, "max_tokens": 8, "temperature": 0}]


def test_a_server_still_loading_is_waited_for(run, server):
    server.state["loading_probes"] = 1
    result = run({"urls": [url_of(server) + "/"]})
    # It asked again after the 503, and stopped at the first 200 (the wait itself: the fake clock's tests below).
    assert result["rc"] == 0 and server.state["seen"] == ["/health", "/health", "/v1/models"], result


def test_the_key_is_sent_and_never_shown(run, server):
    server.state["key"] = "sk-llmhost-test-key"
    result = run({"urls": [url_of(server)], "api_key": "sk-llmhost-test-key"})
    assert result["rc"] == 0 and "sk-llmhost-test-key" not in json.dumps(result)
    refused = run({"urls": [url_of(server)]})
    assert refused["failed"] and "/v1/models (HTTP 401)" in refused["msg"]


@pytest.mark.parametrize("state,words", [
    ({"model": "other"}, "lists ['other'], not qwen"),
    ({"choices": []}, "/v1/completions (HTTP 200) gave no completion"),
    ({"loading_probes": None}, "/health did not answer 200 within 2 s"),
])
def test_a_server_that_is_not_ready_is_refused_by_name(run, server, state, words):
    server.state.update(state)
    result = run({"urls": [url_of(server)], "timeout": 2})
    assert result["failed"] and url_of(server) in result["msg"] and words in result["msg"], result["msg"]


def test_nothing_listening_is_a_failure_not_a_crash(run):
    result = run({"urls": ["http://127.0.0.1:9"], "timeout": 1})
    assert result["failed"] and "http://127.0.0.1:9/health did not answer 200 within 1 s" in result["msg"]
    assert result["servers"] == [{"url": "http://127.0.0.1:9"}]
