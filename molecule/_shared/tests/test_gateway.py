"""The gateway on a real systemd host: Debian's nginx and njs in front of the serving stand-in's two replicas
(vLLM's API, labelled stand-ins: no GPU here), on loopback, over TLS with the user's certificate (prepare.yml
makes one for 127.0.0.1; the tests trust it as their only CA).

Requests go from the test process to the container's loopback (the container shares the host's network), each
with a timeout; no loop here runs unbounded. Container scenario only."""
import hashlib
import json
import os
import re
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import testinfra
import yaml

PORT = int(os.environ.get("LLMHOST_GATEWAY_PORT", "3150"))
URL = "https://127.0.0.1:%d" % PORT
CERT = "/etc/ssl/llmhost-test/gateway.pem"
KEYS = {"alice": "test-key-of-alice-0123456789", "bob": "test-key-of-bob-0123456789abc"}
ACCESS_LOG = "/var/log/nginx/llmhost-gateway.access.log"
CLIENTS = "/etc/nginx/llmhost-gateway/clients.conf"
UPSTREAM_AUTH = "/etc/nginx/llmhost-gateway/upstream-auth.conf"
COMPLETION = {"model": "qwen-test", "prompt": "hi", "max_tokens": 4}


TLS = {}


@pytest.fixture(autouse=True)
def _container_only(scenario, host):
    if scenario != "container":
        pytest.skip("the gateway is tested in the container scenario")
    if not TLS:  # the certificate is the only CA trusted; its name is checked (127.0.0.1)
        TLS["context"] = ssl.create_default_context(cadata=host.file(CERT).content_string)


def ask(path, body=None, key="alice", raw=None, timeout=10, base=None):
    """One request through the gateway (over TLS, or at `base`): (status, headers, parsed JSON body or text)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request((base or URL) + path, data=data)
    if key:
        req.add_header("Authorization", "Bearer " + KEYS.get(key, key))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=None if base else TLS["context"]) as r:
            status, headers, text = r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as err:
        status, headers, text = err.code, dict(err.headers), err.read().decode()
    try:
        return status, headers, json.loads(text)
    except ValueError:
        return status, headers, text


def _serving(host):
    host.run_test("systemctl start vllm@0.service vllm@1.service")
    for _try in range(60):
        if ask("/health", key=None)[0] == 200 and ask("/v1/models")[0] == 200:
            return
        time.sleep(1)
    pytest.fail("the gateway does not reach a replica")


def test_nginx_listens_on_the_gateway_port_on_loopback_only(host):
    listening = host.run_test("ss -Hltnp").stdout
    nginx = [line.split()[3] for line in listening.splitlines() if '"nginx"' in line]
    assert nginx and set(nginx) == {"127.0.0.1:%d" % PORT}, listening
    # Debian's default site was kept out from the package's first start
    assert "llmhost.vllm.gateway" in host.file("/etc/nginx/sites-enabled/default").content_string


def test_a_client_gets_a_completion_and_vllm_sees_its_own_key(host):
    _serving(host)
    status, _headers, body = ask("/v1/completions", COMPLETION)
    # the stand-in answers only with VLLM_API_KEY, which differs from every client's key
    assert status == 200 and body["choices"], body
    status, _headers, body = ask("/v1/models")
    assert status == 200 and [m["id"] for m in body["data"]] == ["qwen-test"], body


@pytest.mark.parametrize("case, request_args, status, words", [
    ("no key", {"path": "/v1/models", "key": None}, 401, "valid API key"),
    ("a key of no client", {"path": "/v1/models", "key": "not-a-key-of-anyone-0123456789"}, 401, "valid API key"),
    ("vLLM's own key", {"path": "/v1/models", "key": "test-key-of-the-molecule-scenario"}, 401, "valid API key"),
    ("not JSON", {"path": "/v1/completions", "raw": b"prompt=hi"}, 400, "not JSON"),
    ("not an object", {"path": "/v1/chat/completions", "body": [COMPLETION]}, 400, "JSON object"),
    ("max_tokens 0", {"path": "/v1/completions", "body": dict(COMPLETION, max_tokens=0)}, 400, "max_tokens"),
    ("max_tokens past the context", {"path": "/v1/completions", "body": dict(COMPLETION, max_tokens=10 ** 6)}, 400,
     "max_tokens must be a whole number from 1 to "),
    ("max_completion_tokens a string", {"path": "/v1/chat/completions",
                                        "body": {"model": "qwen-test", "max_completion_tokens": "9"}}, 400,
     "max_completion_tokens"),
    ("sequences past the limit together", {"path": "/v1/completions", "body": dict(COMPLETION, n=1000, max_tokens=1000)},
     400, "the request asks for 1000 sequences of 1000 tokens; all of them together may be at most"),
    ("a number JSON writes but is not finite", {"path": "/v1/completions",
                                                "raw": b'{"model": "qwen-test", "prompt": "hi", "temperature": 1e999}'},
     400, "temperature is not a finite number"),
    ("an unknown model", {"path": "/v1/completions", "body": dict(COMPLETION, model="gpt-4")}, 404, "gpt-4"),
    ("a body past the limit", {"path": "/v1/completions", "raw": b"x" * (4096 * 1024 + 1)}, 413, "larger than"),
    ("vLLM's metrics", {"path": "/metrics"}, 404, "not found"),
    ("vLLM's tokenizer", {"path": "/tokenize", "body": {"prompt": "hi"}}, 404, "not found"),
])
def test_the_gateway_refuses_before_vllm(case, request_args, status, words):
    got, headers, body = ask(**request_args)
    assert got == status, (case, got, body)
    assert words in body["error"]["message"], (case, body)
    if status == 401:
        assert headers.get("WWW-Authenticate", "").startswith("Bearer"), headers


def test_the_bearer_scheme_is_read_in_any_case():
    """RFC 7235: the scheme's name is case-insensitive; a client library that sends "bearer" is served."""
    req = urllib.request.Request(URL + "/v1/models", headers={"Authorization": "bEaReR " + KEYS["alice"]})
    with urllib.request.urlopen(req, timeout=10, context=TLS["context"]) as answer:
        assert answer.status == 200


def test_a_client_over_its_rate_gets_429_with_retry_after():
    """bob may send 1 request a second with no burst: of three at once, at least one is refused."""
    time.sleep(1.1)
    answers = [ask("/v1/models", key="bob") for _try in range(3)]
    statuses = [a[0] for a in answers]
    assert statuses[0] == 200 and 429 in statuses, statuses
    refused = [a for a in answers if a[0] == 429][0]
    assert refused[1].get("Retry-After") == "1" and refused[2]["error"]["type"] == "rate_limit_error", refused
    # alice's own limit (35 r/s, burst 70) is untouched by bob's
    assert ask("/v1/models")[0] == 200


def _stream(tokens, tls=True):
    """A streamed completion of `tokens` events, sent by hand (over TLS, or plain HTTP) so that arrivals can be
    timed."""
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    if tls:
        sock = TLS["context"].wrap_socket(sock, server_hostname="127.0.0.1")
    body = json.dumps(dict(COMPLETION, max_tokens=tokens, stream=True)).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"
                 b"Accept-Encoding: gzip, deflate\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                 b"Connection: close\r\n\r\n%s" % (KEYS["alice"].encode(), len(body), body))
    return sock


def test_a_stream_arrives_in_chunks_as_they_are_made():
    """The stand-in sends one event every 50 ms: through the gateway they must arrive spread out, not at once.
    The request accepts gzip, as OpenAI's Python client does: a compressed event stream would arrive in one piece."""
    sock = _stream(8)
    arrivals, data, t0 = [], b"", time.monotonic()
    while time.monotonic() - t0 < 10:
        chunk = sock.recv(65536)
        if not chunk:
            break
        arrivals.append((round(time.monotonic() - t0, 3), chunk.count(b"data: ")))
        data += chunk
    sock.close()
    print("stream arrivals (s, events): %s" % arrivals)
    assert b"200 OK" in data.split(b"\r\n", 1)[0] and b"text/event-stream" in data, data[:300]
    assert data.count(b"data: ") == 9 and b"data: [DONE]" in data
    with_events = [t for t, n in arrivals if n]
    assert len(with_events) >= 4, arrivals
    assert with_events[-1] - with_events[0] >= 0.2, arrivals


def test_a_client_that_leaves_frees_the_replica(host):
    """A stream of 200 events (10 s) left after the first few: the replica sees the connection close and stops."""
    since = host.run_test("date +%s").stdout.strip()
    sock = _stream(200)
    got = b""
    while got.count(b"data: ") < 3:
        got += sock.recv(65536)
    sock.close()
    time.sleep(1.5)
    journal = host.run_test("journalctl -q -o cat --since @%s -u vllm@0.service -u vllm@1.service", since).stdout
    aborted = [line for line in journal.splitlines() if "stream aborted by the client" in line]
    assert aborted, journal[-2000:]
    sent = int(aborted[-1].split(" after ")[1].split(" of ")[0])
    assert sent < 100, aborted


# The two checks below stop replicas and start them again: they run after the unmarked checks (with the
# marker's ordering), so that no other check (such as Prometheus's targets being up) sees a replica restarting.
@pytest.mark.changes_the_host(order=0.5)
def test_a_stopped_replica_sends_its_requests_to_the_other(host):
    _serving(host)
    host.run_test("systemctl stop vllm@0.service")
    try:
        statuses = [ask("/v1/completions", COMPLETION)[0] for _try in range(10)]
        assert statuses == [200] * 10, statuses
        assert ask("/health", key=None)[0] == 200
    finally:
        _serving(host)


@pytest.mark.changes_the_host(order=0.5)
def test_every_replica_stopped_gives_503_with_retry_after(host):
    _serving(host)
    host.run_test("systemctl stop vllm@0.service vllm@1.service")
    try:
        status, headers, body = ask("/v1/completions", COMPLETION)
        assert status == 503 and headers.get("Retry-After") == "5", (status, headers, body)
        assert body["error"]["type"] == "service_unavailable"
        assert ask("/health", key=None)[0] == 503
    finally:
        _serving(host)
    assert ask("/v1/completions", COMPLETION)[0] == 200


def test_keys_stay_out_of_files_and_logs_but_clients_are_named(host):
    ask("/v1/models")
    ask("/v1/models", key="bob")
    log = host.file(ACCESS_LOG).content_string
    assert "client=alice" in log and "client=bob" in log and "client= " in log, log[-2000:]
    hashes = {name: hashlib.sha256(key.encode()).hexdigest() for name, key in KEYS.items()}
    for secret in list(KEYS.values()) + list(hashes.values()) + ["test-key-of-the-molecule-scenario"]:
        assert secret not in log
        assert secret not in host.file("/var/log/nginx/error.log").content_string
    clients = host.file(CLIENTS)
    assert (clients.user, clients.group, clients.mode) == ("root", "root", 0o600)
    assert all(h in clients.content_string for h in hashes.values())
    assert not any(k in clients.content_string for k in KEYS.values())
    auth = host.file(UPSTREAM_AUTH)
    assert (auth.user, auth.group, auth.mode) == ("root", "root", 0o600)
    assert "Bearer test-key-of-the-molecule-scenario" in auth.content_string
    # the configuration nginx's workers can read names the files, never a key
    conf = host.file("/etc/nginx/conf.d/llmhost-gateway.conf").content_string
    assert not any(s in conf for s in list(KEYS.values()) + list(hashes.values()))


# A fleet: a second host, a container of the same image beside llmhost-ctr, converged by the site playbook
# (vllm_install, model, vllm_service); llmhost-ctr's gateway puts both hosts' replicas in one upstream
# (gateway_backends_group). The harness's dockerd has no bridge: both containers share the host's network, so
# the second host's replicas listen on 127.0.0.2 and advertise it (vllm_service_advertise_address). Here the
# gateway runs with two defaults the rest of the scenario does not use: plain HTTP (no certificate) and, on the
# second host, gateway_state auto with no client (no gateway there); and with a cap of one request in flight per
# replica (gateway_max_conns_per_replica). The second host is made, prepared and converged beside the checks
# (conftest.py's BESIDE): it reads and changes nothing of llmhost-ctr. Last of all (order 3): llmhost-ctr's gateway
# is put in front of both hosts, which leaves llmhost-ctr's replicas stopped; then (order 3.5) both hosts form a Ray
# cluster that serves the model across them; after that the second host is removed (destroy.yml removes it too).
SECOND = "llmhost-ctr2"
FLEET = {}  # the fleet's inventory file, once the second host is made


def _docker(*args, timeout=600):
    return subprocess.run(["docker", "-H", os.environ["DOCKER_HOST"], *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _set_up_second_host(playbook, _after_the_other_lane):
    """The second host made, prepared (prepare.yml on it alone: the controller's plays ran once, for llmhost-ctr;
    the stand-in wheel they built is named) and converged with vllm_install, model and vllm_service; returns the
    fleet's inventory and the seconds each step took. It starts at once, with a quarter of a container's CPU share
    (256 of 1024) and niced playbooks, so that it yields to the checks."""
    _docker("rm", "-f", SECOND)
    run = _docker("run", "-d", "--name", SECOND, "--hostname", SECOND, "--network", "host", "--cpu-shares", "256",
                  "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro",
                  "-v", os.environ["LLMHOST_QUANTIZE_WHEELS"] + ":/srv/llmhost-test/pypi:ro",
                  "-v", os.environ["LLMHOST_RAY_WHEELS"] + ":/srv/llmhost-test/pypi-ray:ro",
                  "--stop-signal", "SIGRTMIN+3", os.environ["LLMHOST_CONTAINER_IMAGE"], "/sbin/init", timeout=300)
    assert run.returncode == 0, run.stderr
    second = {"ansible_connection": "community.docker.docker",
              "ansible_docker_extra_args": "-H=" + os.environ["DOCKER_HOST"],
              "vllm_service_host": "127.0.0.2", "vllm_service_advertise_address": "127.0.0.2",
              "vllm_service_advertise_loopback": True, "gateway_clients": [],
              # the model from the folder prepare.yml copied (revision A's bytes): the hub's request log stays the
              # main host's alone, so no check waits for this one; and the model role's local source runs on a host
              "model_source": "local", "model_local_path": "/srv/llmhost-test/tiny-qwen",
              # vLLM's venv with the profile's Ray, as on a member of a Ray cluster: the last check makes it one
              "vllm_install_lock_file": str(Path(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "_shared", "files",
                                                 "standin-vllm-ray-lock.txt")),
              "vllm_install_find_links": ["/srv/llmhost-test/wheels", "/srv/llmhost-test/pypi",
                                          "/srv/llmhost-test/pypi-ray"]}
    inventory = Path(tempfile.mkdtemp(prefix="llmhost-fleet-")) / "fleet.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {
        "vllm_hosts": {"hosts": {"llmhost-ctr": {"gateway_backends_group": "vllm_hosts"}, SECOND: second}},
        "vllm_test_standin": {"hosts": {SECOND: {}}}}}}))
    wheel = sorted(Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "wheels").glob("vllm-*.whl"))
    assert wheel, "prepare.yml built no stand-in wheel"
    took = []
    for args, path in ((("--limit", SECOND, "-e", "llmhost_test_standin_wheel=%s" % wheel[-1]),
                        "molecule/_shared/prepare.yml"),
                       (("--limit", SECOND, "--tags", "vllm_install,model,vllm_service"), "playbooks/site.yml")):
        started = time.monotonic()
        changed, failed, out = playbook(*args, path=path, inventory=[inventory], recap_host=SECOND, nice=10)
        assert not failed and changed, out[-4000:]
        took.append(time.monotonic() - started)
    return inventory, took


BESIDE = {"the second host": _set_up_second_host}  # its model comes from a folder, never the hub


@pytest.fixture(scope="module")
def fleet(playbook, beside_result):
    # a module's fixture is made before the function-scoped skip above: it skips itself
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("the gateway is tested in the container scenario")
    try:
        inventory, took = beside_result("the second host")
        FLEET["inventory"] = inventory
        started = time.monotonic()
        changed, failed, out = playbook("--tags", "gateway", "-e", "gateway_tls_certificate=", "-e", "gateway_tls_key=",
                                        "-e", "gateway_max_conns_per_replica=1", path="playbooks/site.yml",
                                        inventory=[inventory])
        assert not failed and changed, out[-4000:]
        assert "gateway: skipped (gateway_state=auto and gateway_clients names no client)" in " ".join(out.split())
        print("second host (beside the checks): prepared in %.0f s, vllm_install, model and vllm_service converged in "
              "%.0f s; the gateway put in front of both hosts in %.0f s" % (*took, time.monotonic() - started))
        yield testinfra.get_host("docker://" + SECOND)
    finally:
        _docker("rm", "-f", SECOND)


def _upstreams(host, since):
    """The replica that answered each request logged after line `since` of the access log (the last one tried)."""
    lines = host.file(ACCESS_LOG).content_string.splitlines()[since:]
    tried = [re.findall(r"\b\d+\.\d+\.\d+\.\d+:\d+\b", line.split(" upstream=")[1]) for line in lines if " upstream=" in line]
    return [addresses[-1] for addresses in tried if addresses]


@pytest.mark.changes_the_host(order=3)
def test_a_fleet_gateway_spreads_over_both_hosts_and_survives_one(host, fleet):
    conf = host.file("/etc/nginx/conf.d/llmhost-gateway.conf").content_string
    servers = sorted(line.split()[1] for line in conf.splitlines() if line.strip().startswith("server 127."))
    assert servers == ["127.0.0.1:8000", "127.0.0.1:8001", "127.0.0.2:8000", "127.0.0.2:8001"], conf
    assert "ssl" not in conf and "max_conns=1" in conf
    listening = fleet.run_test("ss -Hltn").stdout
    assert "127.0.0.2:8000" in listening and "127.0.0.2:8001" in listening, listening
    assert not fleet.package("nginx").is_installed  # gateway_state auto and no client: no gateway there
    plain = "http://127.0.0.1:%d" % PORT
    for _try in range(30):
        if ask("/health", key=None, base=plain)[0] == 200:
            break
        time.sleep(1)
    since = len(host.file(ACCESS_LOG).content_string.splitlines())
    assert [ask("/v1/completions", COMPLETION, base=plain)[0] for _try in range(12)] == [200] * 12
    used = set(_upstreams(host, since))
    assert {"127.0.0.2:8000", "127.0.0.2:8001"} <= used and used & {"127.0.0.1:8000", "127.0.0.1:8001"}, used
    # the gateway host's own replicas stopped: the other host answers every request
    host.run_test("systemctl stop vllm@0.service vllm@1.service")
    since = len(host.file(ACCESS_LOG).content_string.splitlines())
    statuses = [ask("/v1/completions", COMPLETION, base=plain)[0] for _try in range(10)]
    assert statuses == [200] * 10, statuses
    assert set(_upstreams(host, since)) == {"127.0.0.2:8000", "127.0.0.2:8001"}
    # both replicas left each hold a 10 s stream, one request each at most: the next request is 503, Retry-After
    streams = [_stream(200, tls=False) for _replica in range(2)]
    try:
        for sock in streams:
            got = b""
            while b"data: " not in got:  # the socket's timeout (10 s) bounds the wait
                got += sock.recv(65536)
        status, headers, body = ask("/v1/completions", COMPLETION, base=plain)
        assert status == 503 and headers.get("Retry-After") == "5", (status, headers, body)
    finally:
        for sock in streams:
            sock.close()


# A model across two hosts: llmhost-ctr and the second host form a Ray cluster of two nodes (real Ray 2.60 on CPU, each
# node offering the two GPUs it declares, labelled stand-ins: there is no GPU), and the plan serves the model in two
# pipeline stages, one per host (vllm_service_across_hosts: always; the tiny model would fit one). Both containers
# share the harness's network namespace: the nodes get two addresses of an interface of their own that this check
# adds there (a veth pair's end, removed when the checks end), and the second node other ports than the head's. The
# firewall stays off (the containers may not load nftables tables; tests/integration/test_ray_firewall.py loads the
# role's table).
CLUSTER_INTERFACE, CLUSTER_NET = "llmray0", "10.231.7.%d"
SECOND_RAY_PORTS = {"gcs": 3160, "node_manager": 3261, "object_manager": 3262, "agent_grpc": 3263,
                    "agent_listen": 3264, "runtime_env_agent": 3265, "metrics": 3266}


def _ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture(scope="session")
def cluster_link():
    """An interface with an address for each node (one end of a veth pair; the kernel may have no dummy interfaces),
    kept until the session ends: the uninstall (order 4), the only check after the cluster's, stops the head while
    its address is still there."""
    _ip("link", "del", CLUSTER_INTERFACE)  # left by a run that was killed
    net = CLUSTER_NET % 0 + "/24"
    assert "dev" not in _ip("-4", "route", "show", net).stdout, "%s is in use on this machine" % net
    try:
        for args in (("link", "add", CLUSTER_INTERFACE, "type", "veth", "peer", "name", CLUSTER_INTERFACE + "p"),
                     ("addr", "add", CLUSTER_NET % 1 + "/24", "dev", CLUSTER_INTERFACE),
                     ("addr", "add", CLUSTER_NET % 2 + "/24", "dev", CLUSTER_INTERFACE),
                     ("link", "set", CLUSTER_INTERFACE + "p", "up"), ("link", "set", CLUSTER_INTERFACE, "up")):
            made = _ip(*args)
            assert made.returncode == 0, made.stderr
        yield CLUSTER_INTERFACE
    finally:
        _ip("link", "del", CLUSTER_INTERFACE)


@pytest.fixture
def cluster_inventory(fleet, cluster_link):
    """The fleet's hosts as one Ray cluster (ray_pair) on cluster_link. After the check, the second host's node is
    stopped, so that nothing joins the head again; llmhost-ctr is left a member of the cluster (changes_the_host: the
    uninstall after it takes the host as it is, and a run putting the one-node cluster back cost ~150 s)."""
    member = {"ray_cluster_group": "ray_pair", "ray_cluster_interface": cluster_link,
              "ray_cluster_firewall": False, "ray_cluster_num_gpus": "2", "vllm_service_across_hosts": "always"}
    hosts = {"llmhost-ctr": dict(member, ray_cluster_node_address=CLUSTER_NET % 1),
             SECOND: dict(member, ray_cluster_node_address=CLUSTER_NET % 2, ray_cluster_ports=SECOND_RAY_PORTS,
                          ray_cluster_worker_ports=[3270, 3299])}
    inventory = FLEET["inventory"].parent / "cluster.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"ray_pair": {"hosts": hosts}}}}))
    try:
        yield [FLEET["inventory"], inventory]
    finally:
        fleet.run("systemctl stop llmhost-ray.service")


def _recaps(out):
    return {name: (int(changed), int(failed)) for name, changed, failed in
            re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", out, re.M)}


@pytest.mark.changes_the_host(order=3.5)
def test_a_model_across_two_hosts_is_placed_on_both_and_answers_through_the_gateway(host, fleet, cluster_inventory,
                                                                                    playbook):
    run = ("--limit", "llmhost-ctr," + SECOND, "--tags", "ray_cluster,vllm_service,gateway")
    # check mode first, on a second host that is no member yet: it says what would change, and changes nothing
    changed, failed, out = playbook("--check", *run, path="playbooks/site.yml", inventory=cluster_inventory)
    assert not failed and _recaps(out)[SECOND][0] > 0, out[-6000:]
    assert not fleet.file("/etc/systemd/system/llmhost-ray.service").exists
    assert 'RAY_ADDRESS' not in host.file("/etc/llmhost/vllm/0.env").content_string
    started = time.monotonic()
    changed, failed, out = playbook(*run, path="playbooks/site.yml", inventory=cluster_inventory)
    assert not failed and changed, out[-6000:]
    print("the cluster formed and the model served across both hosts in %.0f s" % (time.monotonic() - started))
    # the head: `ray status` showed both nodes and their GPUs before its one API server, spanning both hosts, started
    said = " ".join(out.split()).replace("''", "'")  # the YAML callback doubles the quotes inside its own
    assert re.search(r"Ray cluster ray_pair: \{'nodes': 2, [^}]*'gpus': 4\.0\}", said), out[-6000:]
    env = host.file("/etc/llmhost/vllm/0.env").content_string
    assert re.search(r"--tensor-parallel-size 2\b.*--pipeline-parallel-size 2\b|--pipeline-parallel-size 2\b.*"
                     r"--tensor-parallel-size 2\b", env) and "--distributed-executor-backend ray" in env, env
    assert 'RAY_ADDRESS="%s:3160"' % (CLUSTER_NET % 1) in env and 'NCCL_SOCKET_IFNAME="%s"' % CLUSTER_INTERFACE in env, env
    assert not host.service("vllm@1.service").is_running  # one API server on the head, no second replica
    # the worker: its node joined the head, and it serves no replica of its own
    worker = fleet
    assert worker.service("llmhost-ray.service").is_running
    node = worker.file("/etc/systemd/system/llmhost-ray.service").content_string
    assert "--address=%s:3160" % (CLUSTER_NET % 1) in node, node
    assert not worker.service("vllm@0.service").is_running and not worker.service("vllm@1.service").is_running
    # the stand-in placed one GPU bundle per rank through Ray's placement-group API, across both nodes
    log = host.check_output("journalctl -u vllm@0.service --no-pager -o cat")
    placed = re.findall(r"Ray placed (\d+) GPU bundles, one per rank, on (\d+) node\(s\): (.*)", log)
    assert placed and placed[-1][:2] == ("4", "2"), log[-3000:]
    assert sorted(set(re.findall(r"@(\S+)", placed[-1][2]))) == [CLUSTER_NET % 1, CLUSTER_NET % 2], placed[-1]
    status = host.check_output("/opt/llmhost/vllm/venv/bin/ray status --address=%s:3160", CLUSTER_NET % 1)
    # all four reserved by the serving placement group while it serves ("0.0/4.0 GPU (0.0 used of 4.0 reserved in
    # placement groups)": the ranks' tasks have ended)
    assert re.search(r"^ +[0-9.]+/4\.0 GPU \([0-9.]+ used of 4\.0 reserved in placement groups\)$", status, re.M), status
    # a completion through the gateway, to the head
    for _try in range(30):
        if ask("/health", key=None)[0] == 200:
            break
        time.sleep(1)
    assert [ask("/v1/completions", COMPLETION)[0] for _try in range(4)] == [200] * 4
    # the doctor on both: the head sees both nodes and their four GPUs, and one Ray and one vLLM on every member
    reports = Path(tempfile.mkdtemp(prefix="llmhost-doctor-"))
    changed, failed, out = playbook("--check", "--limit", "llmhost-ctr," + SECOND, "-e", "doctor_dir=%s" % reports,
                                    path="playbooks/doctor.yml", inventory=cluster_inventory)
    assert not failed, out[-6000:]
    ray = {name: [c for c in json.loads((reports / ("doctor-%s.json" % name)).read_text())["checks"]
                  if c["area"] == "ray"] for name in ("llmhost-ctr", SECOND)}
    assert all(c["status"] == "PASS" for checks in ray.values() for c in checks), ray
    said = " | ".join(c["have"] for c in ray["llmhost-ctr"])
    assert "2 node(s), 4 GPU(s)" in said and "%s: ray 2.60.0, vllm 0.33.0" % SECOND in said, ray
    # the same run again changes nothing on either host
    changed, failed, out = playbook(*run, path="playbooks/site.yml", inventory=cluster_inventory)
    assert _recaps(out) == {"llmhost-ctr": (0, 0), SECOND: (0, 0)}, out[-6000:]


NGINX_REPO_FILES = ("/etc/apt/keyrings/llmhost-nginx.asc", "/etc/apt/sources.list.d/llmhost-nginx.sources",
                    "/etc/apt/preferences.d/llmhost-nginx", "/root/nginx_signing.key")


def test_nginx_org_s_repository_is_added_signed_and_preferred(host, playbook, apt_command):
    """Ubuntu 22.04's way to njs, on this Debian 12 host: the gateway's nginx_repo entry point (what its install phase
    runs there) writes nginx.org's source with a keyring of its own and the pin, against the harness's labelled
    stand-in of nginx.org (real layout, Origin, names and versions; empty packages). apt then verifies the signature
    and would take nginx and nginx-module-njs from it over Debian's. Nothing is installed; the files go after."""
    port = os.environ.get("LLMHOST_NVREPO_PORT", "3143")
    host.run_test("python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "
                  "http://127.0.0.1:%s/nginx/nginx_signing.key /root/nginx_signing.key", port)
    try:
        changed, failed, out = playbook(path="molecule/_shared/nginx_repo.yml")
        assert not failed and changed == 3, out[-3000:]
        changed, failed, out = playbook(path="molecule/_shared/nginx_repo.yml")
        assert not failed and changed == 0, out[-3000:]
        source = host.file("/etc/apt/sources.list.d/llmhost-nginx.sources").content_string
        assert "Suites: bookworm\nComponents: nginx\nSigned-By: /etc/apt/keyrings/llmhost-nginx.asc" in source
        update = apt_command(host, "apt-get update -q")
        assert update.rc == 0 and "NO_PUBKEY" not in update.stderr and "not signed" not in update.stderr, update.stderr
        policy = host.run_test("apt-cache policy nginx nginx-module-njs").stdout
        assert "Candidate: 1.28.0-1~bookworm" in policy and "Candidate: 1.28.0+0.9.0-1~bookworm" in policy, policy
        assert re.search(r"\*?\*?\s*1\.28\.0-1~bookworm 900\s+900 http://127\.0\.0\.1:%s/nginx/packages/debian" % port,
                         policy), policy
        simulated = host.run_test("apt-get install -s -y nginx-module-njs").stdout
        assert "Inst nginx-module-njs (1.28.0+0.9.0-1~bookworm" in simulated, simulated
    finally:
        host.run("rm -f %s", " ".join(NGINX_REPO_FILES))
        apt_command(host, "apt-get update -q")
