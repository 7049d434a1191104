"""STAND-IN for vLLM's `vllm serve`, for tests on machines without a GPU.

Real vLLM cannot start without a GPU, so the Molecule harness installs this instead, packaged as a
wheel named `vllm` at the stack profile's version (tests/harness/vllm_standin/build.py). It is
honest about what it is (every response and /health say "stand-in") and strict where the product
needs strictness:
  - its argument parser is built from the option table of the real vLLM version (the same table
    the role validates against), so an option the real parser would refuse makes it exit 2;
  - it serves /health, /v1/models, /v1/completions (streamed as server-sent events when asked) and /metrics, the last with vLLM's real metric
    names for that version (the *_seconds ones as histograms each completion observes, the token and
    request counters as counters, the rest as gauges); /v1/* require the API key from VLLM_API_KEY when set;
  - on SIGTERM it drains: no new requests, in-flight ones finish, exit within --shutdown-timeout;
  - before it listens it does the process-level start-up work of the real server with the real torch
    of its venv (startup_work below): it imports torch, pins threads to CPUs, spawns a worker through
    torch.multiprocessing, joins it in a gloo process group over loopback and all-reduces through it,
    and shares a tensor through shared memory. A sandbox that kills or refuses any of it stops the
    stand-in as it would stop vLLM (exit 3), so the unit's sandbox is tried by real library code
    (with VLLM_STANDIN_STARTUP_WORK=first, at each replica's first start only);
  - with `--distributed-executor-backend ray` it does what vLLM's Ray executor does before it loads weights
    (ray_placement below): it joins the Ray cluster at RAY_ADDRESS as a driver, reserves one bundle of one GPU
    per rank (tensor parallel x pipeline parallel) in a placement group through Ray's real API, runs one task
    in each bundle and logs where each ran; a cluster that cannot place them stops it (exit 4). The GPUs are
    the ones the nodes declare to Ray (no GPU here); the group is held while it serves, as vLLM holds it;
  - from vLLM 0.11 on (the version whose api_server.py mounts prometheus-fastapi-instrumentator, read in its source)
    /metrics also counts the API's answers as that instrumentator does: http_requests_total{handler, method, status}
    with the status grouped (2xx, 4xx, 5xx);
  - VLLM_STANDIN_SPEED_BY_OPTION (set by a test, for tune.yml's candidates): comma-separated rules
    `--option=value:SECONDS` (that many seconds between streamed tokens, in place of VLLM_STANDIN_TOKEN_SECONDS) or
    `--option=value:fail` (exit 5 before listening, as a server that cannot start with it), applied when its command
    line has that option with that value. The speeds are the test's, not a model's.
It generates no text: completions return a fixed string, or, where the served folder's generation_config.json (or
that of the model it was quantized from) says "llmhost_test_answers": "byte_tokens", Qwen's byte-fallback tokens in
place of Chinese characters (the seed's mojibake), so that a test can give one revision of its model a broken
tokenizer chain. Both are the stand-in's, and labelled so in every answer's id."""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = open(os.path.join(HERE, "VERSION")).read().strip()


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, "vllm serve: error: %s\n" % message)


def parser():
    with open(os.path.join(HERE, "options.json")) as f:
        table = json.load(f)["options"]
    p = Parser(prog="vllm serve", allow_abbrev=False)
    p.add_argument("model_tag", nargs="?")
    for flag, spec in sorted(table.items()):
        if not flag.startswith("--"):
            continue
        dest = flag[2:].replace("-", "_")
        kw = {"dest": dest}
        if not spec["takes_value"]:
            kw["action"] = "store_true"
        else:
            if spec["nargs"] not in (None, 0):
                kw["nargs"] = spec["nargs"]
            if spec["choices"]:
                kw["choices"] = spec["choices"]
        try:
            p.add_argument(flag, **kw)
        except argparse.ArgumentError:
            pass  # an alias seen twice
    return p


class State:
    ready = False
    draining = False
    inflight = 0
    lock = threading.Lock()
    counters = {"prompt_tokens": 0, "generation_tokens": 0, "request_success": 0}
    # every *_seconds histogram gets each completion's latency: [bucket counts], sum, count
    buckets = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
    observed = []
    http = {}  # (handler, method, status group): answers, as prometheus-fastapi-instrumentator counts them


# The answer of a model whose tokenizer chain broke: "北京" as Qwen's byte-fallback tokens.
BYTE_TOKENS = "<0xE5><0x8C><0x97><0xE4><0xBA><0xAC>"


def test_answers(model_dir):
    """The answers a test set for this model folder (or for the one it was quantized from): "byte_tokens" or ""."""
    for folder in (model_dir, _quantized_from(model_dir)):
        try:
            with open(os.path.join(folder or "", "generation_config.json")) as f:
                return str(json.load(f).get("llmhost_test_answers", ""))
        except (OSError, ValueError, AttributeError):
            continue
    return ""


def _quantized_from(model_dir):
    try:
        with open(os.path.join(model_dir, "llmhost-quantize.json")) as f:
            return json.load(f).get("source")
    except (OSError, ValueError, AttributeError):
        return None


def counts_http():
    """Whether this version's API server exports http_requests_total (from vLLM 0.11 on)."""
    try:
        return tuple(int(p) for p in VERSION.split(".")[:2]) >= (0, 11)
    except ValueError:
        return False


def http_text():
    with State.lock:
        seen = sorted(State.http.items())
    lines = ["# HELP http_requests_total Total number of requests by method, status and handler.",
             "# TYPE http_requests_total counter"]
    lines += ['http_requests_total{handler="%s",method="%s",status="%s"} %d' % (h, m, st, n) for (h, m, st), n in seen]
    return "\n".join(lines) + "\n"


def _histogram(name, label):
    lines = ["# HELP %s stand-in histogram" % name, "# TYPE %s histogram" % name]
    with State.lock:
        seen = list(State.observed)
    for le in State.buckets:
        lines.append('%s_bucket{%s,le="%s"} %d' % (name, label, le, sum(1 for v in seen if v <= le)))
    lines.append('%s_bucket{%s,le="+Inf"} %d' % (name, label, len(seen)))
    lines.append("%s_sum{%s} %f" % (name, label, sum(seen)))
    lines.append("%s_count{%s} %d" % (name, label, len(seen)))
    return "\n".join(lines)


def metric_text(names):
    out = []
    label = 'model_name="%s"' % (ARGS.served_model_name[0] if ARGS.served_model_name else ARGS.model_tag)
    for name in names:
        base = name.split(":", 1)[1]
        if base.endswith("_seconds"):
            out.append(_histogram(name, label))
            continue
        counter = base[:-len("_total")] if base.endswith("_total") else base
        if counter in State.counters:
            total = name if name.endswith("_total") else name + "_total"
            value = State.counters[counter]
            out.append("# HELP %s stand-in counter\n# TYPE %s counter\n%s{%s} %d" % (total, total, total, label, value))
            continue
        out.append("# HELP %s stand-in value\n# TYPE %s gauge\n%s{%s} 0" % (name, name, name, label))
    return "\n".join(out) + "\n" + (http_text() if counts_http() else "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # vLLM logs requests only when asked; so does the stand-in
        pass

    def _count(self, code):
        if self.path.startswith("/v1/"):
            key = (self.path.split("?", 1)[0], self.command, "%dxx" % (code // 100))
            with State.lock:
                State.http[key] = State.http.get(key, 0) + 1

    def _send(self, code, body, ctype="application/json"):
        self._count(code)
        data = body if isinstance(body, bytes) else (json.dumps(body) if ctype == "application/json" else body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, model, n, usage=None):
        """Server-sent events as vLLM sends them: one chunk per token (here a word of the model's own
        vocabulary every VLLM_STANDIN_TOKEN_SECONDS, so that a client's tokenizer counts one token each),
        HTTP/1.1 chunked, then the usage chunk when the request asked for it (stream_options.include_usage),
        ending with `data: [DONE]`."""
        self._count(200)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pause = TOKEN_SECONDS[0]
        events = [{"id": "cmpl-standin", "object": "text_completion", "model": model,
                   "choices": [{"index": 0, "text": WORDS[i % len(WORDS)] + " ",
                                "finish_reason": None if i < n - 1 else "length"}]}
                  for i in range(n)]
        if usage is not None:
            events.append({"id": "cmpl-standin", "object": "text_completion", "model": model, "choices": [],
                           "usage": dict(usage, total_tokens=usage["prompt_tokens"] + usage["completion_tokens"])})
        try:
            sent = 0
            for data in [json.dumps(e) for e in events] + ["[DONE]"]:
                line = ("data: %s\n\n" % data).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
                sent += 1
                time.sleep(pause)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # the client left: vLLM aborts the request
            print("INFO stand-in: stream aborted by the client after %d of %d events" % (sent, n), flush=True)

    def _authorized(self):
        key = os.environ.get("VLLM_API_KEY")
        return not key or self.headers.get("Authorization") == "Bearer " + key

    def do_GET(self):
        if self.path == "/health":
            return self._send(200 if not State.draining else 503, b"", "text/plain")
        if self.path == "/metrics":
            return self._send(200, metric_text(METRICS), "text/plain; version=0.0.4")
        if self.path == "/version":
            return self._send(200, {"version": VERSION, "stand_in": True})
        if self.path == "/v1/models":
            if not self._authorized():
                return self._send(401, {"error": "Unauthorized"})
            data = [{"id": n, "object": "model", "owned_by": "vllm", "root": ARGS.model_tag} for n in SERVED]
            return self._send(200, {"object": "list", "data": data})
        return self._send(404, {"detail": "Not Found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path not in ("/v1/completions", "/v1/chat/completions"):
            return self._send(404, {"detail": "Not Found"})
        if not self._authorized():
            return self._send(401, {"error": "Unauthorized"})
        if State.draining:
            return self._send(503, {"error": "draining"})
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send(400, {"error": "invalid JSON"})
        if body.get("model") not in SERVED:
            return self._send(404, {"error": {"message": "The model `%s` does not exist." % body.get("model")}})
        with State.lock:
            State.inflight += 1
        try:
            started = time.time()
            time.sleep(float(os.environ.get("VLLM_STANDIN_LATENCY", "0.05")))
            n = int(body.get("max_tokens") or 16)
            with State.lock:
                State.observed.append(time.time() - started)
                State.counters["prompt_tokens"] += len(str(body.get("prompt", body.get("messages", ""))).split())
                State.counters["generation_tokens"] += n
                State.counters["request_success"] += 1
            text = BYTE_TOKENS if ANSWERS == "byte_tokens" else "stand-in completion"
            if body.get("stream"):
                wants_usage = (body.get("stream_options") or {}).get("include_usage")
                usage = {"prompt_tokens": len(str(body.get("prompt", "")).split()), "completion_tokens": n}
                return self._stream(body["model"], n, usage if wants_usage else None)
            self._send(200, {"id": "cmpl-standin", "object": "text_completion", "model": body["model"],
                             "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
                             "usage": {"completion_tokens": n}})
        finally:
            with State.lock:
                State.inflight -= 1


def _worker(rank, port, shared):
    """The spawned worker: rank 1 of a gloo group over loopback, as vLLM's engine core joins its group."""
    import torch
    import torch.distributed as dist
    os.sched_setaffinity(0, os.sched_getaffinity(0))
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2)
    t = torch.ones(4)
    dist.all_reduce(t)
    shared += t  # written through shared memory, read by the parent
    dist.destroy_process_group()


def startup_work():
    """Real torch, affinity, spawn, gloo and shared memory, as vLLM does before it listens."""
    import socket

    import torch
    import torch.distributed as dist
    import torch.multiprocessing as tmp
    cpus = sorted(os.sched_getaffinity(0))
    pinned = []

    def pin(cpu):
        os.sched_setaffinity(0, {cpu})  # per thread, as an OpenMP pool pins its threads
        pinned.append(cpu)
    threads = [threading.Thread(target=pin, args=(c,)) for c in cpus[:2]]
    [t.start() for t in threads]
    [t.join() for t in threads]
    torch.set_num_threads(max(1, len(cpus) // 2))
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    shared = torch.zeros(4).share_memory_()
    ctx = tmp.get_context("spawn")
    child = ctx.Process(target=_worker, args=(1, port, shared))
    child.start()
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=2)
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.destroy_process_group()
    child.join(60)
    if child.exitcode != 0 or float(t.sum()) != 8.0 or float(shared.sum()) != 8.0:
        raise RuntimeError("worker exit %s, all_reduce %s, shared %s" % (child.exitcode, t.tolist(), shared.tolist()))
    return "torch %s; threads pinned to CPUs %s; spawned worker joined a gloo group (all_reduce %s); shared memory %s" % (
        torch.__version__, sorted(pinned), t.tolist(), shared.tolist())


def ray_placement(args):
    """One GPU bundle per rank, placed by Ray's real placement-group API on the cluster at RAY_ADDRESS, a task run in
    each: [(rank, node address)], as vLLM's Ray executor places its workers. Raises what Ray raises."""
    import ray
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
    world = int(args.tensor_parallel_size or 1) * int(args.pipeline_parallel_size or 1)
    ray.init(address=os.environ.get("RAY_ADDRESS", "auto"), logging_level="ERROR", log_to_driver=False)
    group = placement_group([{"GPU": 1}] * world, strategy="PACK")  # vLLM's default for its ranks
    ray.get(group.ready(), timeout=120)

    @ray.remote(num_gpus=1, num_cpus=0)
    def where():
        return ray.util.get_node_ip_address()
    ranks = [where.options(scheduling_strategy=PlacementGroupSchedulingStrategy(group, rank)).remote()
             for rank in range(world)]
    PLACED[:] = [group]  # held while the stand-in serves
    return list(enumerate(ray.get(ranks, timeout=120)))


def main(argv=None):
    global ARGS, SERVED, METRICS, ANSWERS
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "serve":
        print("vllm (stand-in %s): only `vllm serve` exists here" % VERSION, file=sys.stderr)
        return 2
    ARGS = parser().parse_args(argv[1:])
    if ARGS.model_tag is None and getattr(ARGS, "model", None):
        ARGS.model_tag = ARGS.model
    if not ARGS.model_tag or not os.path.isfile(os.path.join(ARGS.model_tag, "config.json")):
        print("stand-in: no config.json in %s" % ARGS.model_tag, file=sys.stderr)
        return 1
    SERVED = ARGS.served_model_name or [ARGS.model_tag]
    ANSWERS = test_answers(ARGS.model_tag)
    if ANSWERS:
        print("INFO stand-in: answers as the test set for this model: %s" % ANSWERS, flush=True)
    WORDS[:] = vocabulary_words(ARGS.model_tag)
    TOKEN_SECONDS[0] = float(os.environ.get("VLLM_STANDIN_TOKEN_SECONDS", "0.05"))
    rule = speed_rule(argv[1:], os.environ.get("VLLM_STANDIN_SPEED_BY_OPTION", ""))
    if rule == "fail":
        print("ERROR stand-in: the test's VLLM_STANDIN_SPEED_BY_OPTION makes this command line fail to start", flush=True)
        return 5
    if rule is not None:
        TOKEN_SECONDS[0] = rule
        print("INFO stand-in: %.3f s a token, as the test's VLLM_STANDIN_SPEED_BY_OPTION sets for this command line"
              % rule, flush=True)
    with open(os.path.join(HERE, "metric-names.txt")) as f:
        METRICS = [line.strip() for line in f if line.strip().startswith("vllm:")]
    cache = os.environ.get("VLLM_CACHE_ROOT")
    if cache:  # the real server keeps its torch.compile cache here
        os.makedirs(os.path.join(cache, "torch_compile_cache"), exist_ok=True)
    print("INFO stand-in vLLM %s: loading %s (%s)" % (VERSION, ARGS.model_tag, " ".join(argv[1:])), flush=True)
    # VLLM_STANDIN_STARTUP_WORK=first: the work once per replica (its port), at its first start under the unit;
    # a later start of the same replica runs in the same sandbox and skips it (it costs seconds of CPU a start)
    done = cache and os.path.join(cache, "standin-startup-work-done-%s" % (ARGS.port or 8000))
    if os.environ.get("VLLM_STANDIN_STARTUP_WORK") == "first" and done and os.path.exists(done):
        print("INFO stand-in: start-up work skipped: done at this replica's first start (%s)" % done, flush=True)
    else:
        try:
            print("INFO stand-in: start-up work done: %s" % startup_work(), flush=True)
        except Exception as exc:  # what vLLM would die of; the unit's Restart= and the tests see it
            print("ERROR stand-in: start-up work failed: %s: %s" % (type(exc).__name__, exc), flush=True)
            return 3
        if done:
            open(done, "w").close()
    if getattr(ARGS, "distributed_executor_backend", None) == "ray":
        try:
            placed = ray_placement(ARGS)
        except Exception as exc:  # vLLM stops when Ray cannot place its ranks
            print("ERROR stand-in: Ray placement failed: %s: %s" % (type(exc).__name__, exc), flush=True)
            return 4
        print("INFO stand-in: Ray placed %d GPU bundles, one per rank, on %d node(s): %s" % (
            len(placed), len({node for _rank, node in placed}), " ".join("rank%d@%s" % p for p in placed)), flush=True)
    time.sleep(float(os.environ.get("VLLM_STANDIN_LOAD_SECONDS", "2")))
    # the line vLLM prints once it has sized its KV cache (the doctor reads it); the number is the stand-in's
    print("INFO stand-in: GPU KV cache size: {:,} tokens".format(int(os.environ.get("VLLM_STANDIN_KV_TOKENS", "65536"))),
          flush=True)
    server = ThreadingHTTPServer((ARGS.host or "0.0.0.0", int(ARGS.port or 8000)), Handler)
    server.daemon_threads = True
    timeout = float(getattr(ARGS, "shutdown_timeout", None) or 0)

    def drain(signum, frame):
        State.draining = True
        print("INFO stand-in: SIGTERM, draining %d request(s) for up to %.0f s" % (State.inflight, timeout), flush=True)

        def finish():
            end = time.time() + timeout
            while State.inflight and time.time() < end:
                time.sleep(0.05)
            print("INFO stand-in: drained, %d request(s) left; shutting down" % State.inflight, flush=True)
            server.shutdown()
        threading.Thread(target=finish, daemon=True).start()

    signal.signal(signal.SIGTERM, drain)
    print("INFO stand-in: serving %s on %s:%s" % (SERVED, ARGS.host, ARGS.port), flush=True)
    server.serve_forever()
    return 0


def speed_rule(argv, rules):
    """The first of the test's rules (``--option=value:SECONDS`` or ``:fail``, comma-separated) whose option has that
    value on the command line: the seconds a token, "fail", or None."""
    given = set()
    for i, arg in enumerate(argv):
        if arg.startswith("--") and "=" in arg:
            given.add(arg)
        elif arg.startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            given.add("%s=%s" % (arg, argv[i + 1]))
    for one in filter(None, (r.strip() for r in rules.split(","))):
        match, _sep, what = one.rpartition(":")
        if match in given:
            return "fail" if what == "fail" else float(what)
    return None


def vocabulary_words(model_dir, count=64):
    """Words of the model's word-level vocabulary (tokenizer.json), so that a client that counts tokens
    with the model's tokenizer counts one per streamed word; "tok" where there is none."""
    try:
        with open(os.path.join(model_dir, "tokenizer.json")) as f:
            vocab = json.load(f)["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return ["tok"]
    words = [w for w, _i in sorted(vocab.items(), key=lambda kv: kv[1]) if w.isalnum()][:count]
    return words or ["tok"]


ARGS = SERVED = METRICS = None
ANSWERS = ""
WORDS = ["tok"]
PLACED = []
TOKEN_SECONDS = [0.05]

if __name__ == "__main__":
    sys.exit(main())
