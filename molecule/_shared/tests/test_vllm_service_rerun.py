"""Re-runs on the converged container host, as a user re-tunes one part: the site playbook with one
role's tag, alone. Runs last (file name).

- A configuration change through `--tags vllm_service` restarts the two replicas one at a time while a
  bounded request loop on the host asks both for completions, and the gateway in front of them: at every
  moment one of them answers, and no request through the gateway fails. It runs after every other check
  (marked changes_the_host) and leaves the changed configuration in place.
- Every role's tag, alone, on the converged host: 0 changed, 0 failed (what a role needs from an earlier
  one it reads from the host: the model's and quantizer's local facts, deterministic paths); the model's
  re-run with the hub unreachable, and no request reaches the stand-in hub. Three of these runs go at once
  (each is its own `ansible-playbook --tags <role>`; a no-op run only reads the host).

Container scenario only (the VM converges only the kernel-bound tags)."""
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

API_KEY = "test-key-of-the-molecule-scenario"
GATEWAY_KEY = "test-key-of-alice-0123456789"
GATEWAY_PORT = int(os.environ.get("LLMHOST_GATEWAY_PORT", "3150"))
ROLE_TAGS = ["kernel", "nvidia_driver", "cuda_toolkit", "system_tuning", "gpu_tuning",
             "vllm_install", "model", "quantize", "vllm_service", "gateway", "monitoring"]
LOOP_MAX_SECONDS = 240
TAG_RUNS_AT_ONCE = 3

# Runs on the host: each tick asks replica 0, replica 1 and the gateway for one completion (2 s timeout
# each), until /run/llmhost-loop.stop appears or LOOP_MAX_SECONDS pass; writes what it saw as JSON.
LOOP = r"""
import json, os, sys, time, urllib.request
key, limit, out, gw_key, gw_port = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
body = json.dumps({"model": "qwen-test", "prompt": "hi", "max_tokens": 2}).encode()
def ask(port, key=key):
    req = urllib.request.Request("http://127.0.0.1:%d/v1/completions" % port, data=body)
    req.add_header("Authorization", "Bearer " + key); req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status == 200 and bool(json.loads(r.read())["choices"])
    except Exception:
        return False
ticks, t0 = [], time.monotonic()
while time.monotonic() - t0 < limit and not os.path.exists("/run/llmhost-loop.stop"):
    ticks.append([round(time.monotonic() - t0, 2), ask(8000), ask(8001), ask(gw_port, gw_key)])
    time.sleep(0.05)
tmp = out + ".tmp"
json.dump(ticks, open(tmp, "w")); os.replace(tmp, out)
"""


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("re-runs by tag are tested in the container scenario")


def _wait_serving(host):
    host.run_test("systemctl start vllm@0.service vllm@1.service")
    for _try in range(60):
        if all(host.run("python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:%d/health\", "
                        "timeout=2)'" % p).rc == 0 for p in (8000, 8001)):
            return
        time.sleep(1)
    pytest.fail("the replicas do not serve before the re-run test")


def _change_under_load(host, playbook, *args):
    """Run the playbook while the loop asks both replicas; returns (changed, ticks)."""
    host.run_test("rm -f /run/llmhost-loop.stop /run/llmhost-loop.json && mkdir -p /usr/local/lib/llmhost-test")
    host.run_test("cat > /usr/local/lib/llmhost-test/loop.py <<'EOF'\n%sEOF" % LOOP)
    host.run_test("systemd-run --unit=llmhost-loop --collect /usr/bin/python3 /usr/local/lib/llmhost-test/loop.py "
                  "%s %d /run/llmhost-loop.json %s %d" % (API_KEY, LOOP_MAX_SECONDS, GATEWAY_KEY, GATEWAY_PORT))
    time.sleep(1)
    try:
        changed, failed, out = playbook("--tags", "vllm_service", *args)
    finally:
        host.run("touch /run/llmhost-loop.stop")
        for _try in range(30):
            if host.file("/run/llmhost-loop.json").exists:
                break
            time.sleep(1)
    assert failed == 0, out[-4000:]
    ticks = json.loads(host.file("/run/llmhost-loop.json").content_string)
    return changed, ticks, out


def _report(ticks):
    down = {0: sum(1 for t in ticks if not t[1]), 1: sum(1 for t in ticks if not t[2])}
    neither = [t[0] for t in ticks if not t[1] and not t[2]]
    gateway = [t[0] for t in ticks if not t[3]]
    print("request loop: %d ticks over %.1f s; failed requests: replica 0 %d, replica 1 %d, through the gateway %d; "
          "moments with no replica answering: %d" % (len(ticks), ticks[-1][0] if ticks else 0, down[0], down[1],
                                                      len(gateway), len(neither)))
    return down, neither, gateway


# After the tags' re-runs: it leaves the replicas on the changed configuration.
@pytest.mark.changes_the_host(order=1)
def test_a_change_restarts_the_replicas_one_at_a_time(host, playbook):
    _wait_serving(host)
    # files the role did not write, in its folder: not taken for retired replicas (no unit stopped, kept)
    foreign = {"/etc/llmhost/vllm/7.env": "# mine\nX=1\n", "/etc/llmhost/vllm/notes.env": "Y=2\n"}
    for path, text in foreign.items():
        host.run_test("printf %%s '%s' > %s" % (text, path))
    changed, ticks, out = _change_under_load(
        host, playbook, "-e", json.dumps({"vllm_service_env": {"VLLM_STANDIN_LOAD_SECONDS": "1", "LLMHOST_TEST_ROUND": "2"}}))
    assert changed >= 2, out[-4000:]                      # both replicas' environment files
    assert "LLMHOST_TEST_ROUND" in host.file("/etc/llmhost/vllm/1.env").content_string
    down, neither, gateway = _report(ticks)
    assert down[0] > 0 and down[1] > 0, "the loop never saw a replica restart: %s" % ticks[:5]
    assert not neither, "no replica answered at %s s" % neither[:10]
    assert not gateway, "requests through the gateway failed at %s s" % gateway[:10]
    for path, text in foreign.items():
        assert host.file(path).content_string == text, path
    host.run_test("rm -f %s" % " ".join(foreign))


@pytest.fixture(scope="module")
def tag_runs(playbook, hub_requests):
    """Each role's tag alone, on the converged host: the runs are independent re-runs that change nothing, so
    they run TAG_RUNS_AT_ONCE at a time (the host's no-op runs read; none takes apt's or dpkg's lock). Returns
    {tag: (changed, failed, output, seconds)} and the hub requests made meanwhile."""
    # A module fixture is set up before the autouse _container_only above: it skips by itself.
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("re-runs by tag are tested in the container scenario")
    asked = len(hub_requests())

    def run(tag):
        # The model in place needs no hub: its re-run points at an address where nothing listens.
        extra = ["-e", "model_hf_endpoint=http://127.0.0.1:9"] if tag == "model" else []
        t0 = time.monotonic()
        return tag, playbook("--tags", tag, *extra) + (time.monotonic() - t0,)

    with ThreadPoolExecutor(max_workers=TAG_RUNS_AT_ONCE) as pool:
        runs = dict(pool.map(run, ROLE_TAGS))
    return runs, hub_requests()[asked:]


@pytest.mark.parametrize("tag", ROLE_TAGS)
def test_each_role_tag_alone_changes_nothing(tag, tag_runs):
    runs, hub_asked = tag_runs
    changed, failed, out, seconds = runs[tag]
    print("--tags %s: changed=%d in %.0f s (%d at once)" % (tag, changed, seconds, TAG_RUNS_AT_ONCE))
    assert failed == 0, out[-4000:]
    assert changed == 0, out[-6000:]
    assert not hub_asked, "a re-run asked the hub: %s" % hub_asked[:3]
