"""vllm_install + vllm_service on a real systemd host, with the labelled stand-in `vllm`
(tests/harness/vllm_standin: the real option table's parser, the real metric names, SIGTERM drain)
and the design card's GPUs given to the plan (2x RTX 4090, no P2P) -> two replicas, serving the
quantize role's AWQ output of the tiny test model.

Skipped in the VM scenario, which leaves the kernel-independent serving layer to the container."""
import base64
import json
import time
from pathlib import Path

import pytest

API_KEY = "test-key-of-the-molecule-scenario"
UNITS = ["vllm@0.service", "vllm@1.service"]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the serving layer is tested in the container scenario")


CLIENT = """
import json, sys, urllib.request, urllib.error
url, key, data = sys.argv[1], sys.argv[2], sys.argv[3]
req = urllib.request.Request(url, data=data.encode() if data else None)
if key:
    req.add_header("Authorization", "Bearer " + key)
if data:
    req.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        code, body = r.status, r.read().decode()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read().decode()
except OSError as e:
    code, body = 0, str(e)
print(json.dumps([code, body]))
"""


def curl(host, path, port=8000, key=None, data=None):
    """(status, body) of an HTTP request made on the host (its python3; the image has no curl)."""
    url = "http://127.0.0.1:%d%s" % (port, path)
    body = json.dumps(data) if data is not None else ""
    r = host.run("python3 -c %s %s %s %s" % (_q(CLIENT), _q(url), _q(key or ""), _q(body)))
    return tuple(json.loads(r.stdout)) if r.rc == 0 else (0, r.stderr)


def _q(text):
    return "'" + text.replace("'", "'\\''") + "'"


def test_service_user_cannot_write_the_venv(host):
    user = host.user("vllm")
    assert user.shell == "/usr/sbin/nologin" and user.uid < 1000
    venv = host.file("/opt/llmhost/vllm/venv")
    assert venv.user == "root" and not (venv.mode & 0o022)
    stamp = json.loads(host.file("/opt/llmhost/vllm/install-stamp.json").content_string)
    assert stamp["method"] == "wheel" and stamp["vllm"] == "0.33.0"


@pytest.mark.parametrize("unit,port,gpu", [(UNITS[0], 8000, "0"), (UNITS[1], 8001, "1")])
def test_one_replica_per_gpu_serves_with_the_key(host, unit, port, gpu):
    assert host.service(unit).is_running and host.service(unit).is_enabled
    env = host.file("/etc/llmhost/vllm/%s.env" % unit.split("@")[1].split(".")[0]).content_string
    assert 'CUDA_VISIBLE_DEVICES="%s"' % gpu in env
    assert "mode = replicas" in env and "no peer-to-peer path (0,1: NS)" in env      # the plan's reasons
    # it serves the quantize role's AWQ output: vLLM reads its quantization_config, no flag is forced
    assert 'VLLM_ARGS="/srv/llmhost/models/tiny-qwen-awq-w4g128 ' in env
    args = [line for line in env.splitlines() if line.startswith("VLLM_ARGS=")][0]
    assert "--quantization" not in args and "reads its quantization_config" in " ".join(env.split())
    assert "--enforce-eager" not in args
    assert host.socket("tcp://127.0.0.1:%d" % port).is_listening
    assert not host.socket("tcp://0.0.0.0:%d" % port).is_listening
    assert curl(host, "/health", port)[0] == 200
    assert curl(host, "/v1/models", port)[0] == 401                    # the API key is enforced
    code, body = curl(host, "/v1/models", port, key=API_KEY)
    assert code == 200 and json.loads(body)["data"][0]["id"] == "qwen-test"
    code, body = curl(host, "/v1/completions", port, key=API_KEY,
                      data={"model": "qwen-test", "prompt": "hi", "max_tokens": 4})
    assert code == 200 and json.loads(body)["choices"]
    code, metrics = curl(host, "/metrics", port)
    assert code == 200 and "vllm:num_requests_running" in metrics and "vllm:kv_cache_usage_perc" in metrics
    # the stand-in did vLLM's process-level start-up with real torch inside the unit's sandbox
    log = host.run("journalctl --no-pager -o cat -u %s" % unit).stdout
    assert "start-up work done: torch 2.14.0" in log and "gloo group (all_reduce [2.0, 2.0, 2.0, 2.0])" in log, log[-2000:]


def test_secrets_stay_out_of_argv_unit_and_journal(host):
    secrets = host.file("/etc/llmhost/vllm/secrets.env")
    assert secrets.mode == 0o600 and secrets.user == "root"
    assert "\nVLLM_API_KEY=\"%s\"\n" % API_KEY in secrets.content_string
    assert API_KEY not in host.check_output("ps -eo args")
    assert API_KEY not in host.file("/etc/systemd/system/vllm@.service").content_string
    assert API_KEY not in host.file("/etc/llmhost/vllm/0.env").content_string
    assert API_KEY not in host.check_output("systemctl cat vllm@0.service")
    assert API_KEY not in host.run("journalctl --no-pager -u 'vllm@*'").stdout


def test_a_secret_shaped_env_entry_reaches_the_replica_from_the_0600_file(host):
    """vllm_service_env's STANDIN_UPSTREAM_TOKEN looks like a secret by its name: secrets.env (0600) holds it, the
    readable replica files do not, and the replica's process has it."""
    if "STANDIN_UPSTREAM_TOKEN" not in host.ansible.get_variables().get("vllm_service_env", {}):
        pytest.skip("this scenario sets no secret-shaped environment")
    value = "token-of-the-molecule-env"
    assert '\nSTANDIN_UPSTREAM_TOKEN="%s"\n' % value in host.file("/etc/llmhost/vllm/secrets.env").content_string
    assert value not in host.file("/etc/llmhost/vllm/0.env").content_string
    assert 'VLLM_STANDIN_LOAD_SECONDS="1"' in host.file("/etc/llmhost/vllm/0.env").content_string
    host.run_test("systemctl start vllm@0.service")
    pid = host.check_output("systemctl show -p MainPID --value vllm@0.service")
    # read as the replica's own user: root in the container lacks CAP_SYS_PTRACE, which another user's environ needs
    environ = host.check_output("runuser -u vllm -- cat /proc/%s/environ | tr '\\0' '\\n'" % pid)
    assert "STANDIN_UPSTREAM_TOKEN=" + value in environ.splitlines()


def test_unit_is_sandboxed(host):
    props = dict(line.split("=", 1) for line in host.check_output(
        "systemctl show vllm@0.service -p User -p NoNewPrivileges -p ProtectSystem -p ProtectHome -p PrivateTmp "
        "-p CapabilityBoundingSet -p DevicePolicy -p Restart -p TimeoutStopUSec -p RestrictNamespaces -p RemoveIPC "
        "-p StartLimitBurst -p StartLimitIntervalUSec -p RestartPreventExitStatus").splitlines())
    assert props["User"] == "vllm"
    assert props["NoNewPrivileges"] == "yes"
    assert props["ProtectSystem"] == "strict" and props["ProtectHome"] == "yes" and props["PrivateTmp"] == "yes"
    assert props["CapabilityBoundingSet"] == ""
    assert props["DevicePolicy"] == "closed"
    assert props["Restart"] == "on-failure" and props["RestartPreventExitStatus"] == "2"
    assert props["StartLimitBurst"] == "5" and props["StartLimitIntervalUSec"] == "10min"
    assert props["RemoveIPC"] == "no"                # one user for every replica: no replica removes the others' IPC
    assert props["TimeoutStopUSec"] == "35s"        # shutdown timeout 5 s + 30 s
    score = host.run("systemd-analyze security --no-pager vllm@0.service | tail -1").stdout
    exposure = float(score.split("exposure level for vllm@0.service:")[1].split()[0])
    print("systemd-analyze security: %s" % score.strip())
    assert exposure <= 4.0, score


PROBE_VENV = "/opt/llmhost/quantize/venv"  # the quantizer's venv: real torch from PyPI
PROBE = Path(__file__).resolve().parent.parent / "files" / "sandbox_probe.py"


def _run_probe_under_the_unit_sandbox(host, name, extra=""):
    """Start a oneshot unit with exactly the [Service] sandbox of the live vllm@.service (its ExecStart,
    restart and environment-file lines replaced) running sandbox_probe.py with real torch."""
    unit = host.file("/etc/systemd/system/vllm@.service").content_string
    service = unit.split("[Service]", 1)[1].split("[Install]", 1)[0]
    drop = ("Type=", "ExecStart=", "Restart", "EnvironmentFile=")
    kept = [line for line in service.splitlines() if not line.startswith(drop)]
    # Docker's own seccomp profile denies set_mempolicy without CAP_SYS_NICE, to root too: probe it only
    # where a process outside any unit may make the call.
    outside = host.run("%s/bin/python -c %s" % (PROBE_VENV, _q(
        "import ctypes; l = ctypes.CDLL(None, use_errno=True); raise SystemExit(l.syscall(238, 0, None, 0) != 0)")))
    args = "29511" + ("" if outside.rc == 0 else " --no-mempolicy")
    text = "[Service]\nType=oneshot\nExecStart=%s/bin/python /usr/local/lib/llmhost-test/sandbox_probe.py %s\n%s\n%s\n" % (
        PROBE_VENV, args, "\n".join(kept), extra)
    path = "/etc/systemd/system/%s.service" % name
    host.run_test("mkdir -p /usr/local/lib/llmhost-test && echo %s | base64 -d > /usr/local/lib/llmhost-test/sandbox_probe.py"
                  % base64.b64encode(PROBE.read_bytes()).decode())
    host.run_test("echo %s | base64 -d > %s && systemctl daemon-reload" % (base64.b64encode(text.encode()).decode(), path))
    result = host.run("timeout 300 systemctl start %s.service" % name)
    log = host.run("journalctl --no-pager -o cat -u %s.service" % name).stdout
    host.run("rm -f %s && systemctl daemon-reload && systemctl reset-failed %s.service" % (path, name))
    return result.rc, log


def test_real_torch_survives_the_unit_sandbox(host):
    """Real vLLM imports torch, binds CPUs, sets NUMA policy, raises RLIMIT_NOFILE and spawns workers
    that talk over gloo/NCCL; a seccomp rule against any of it kills the replica at start-up."""
    if not host.file(PROBE_VENV + "/bin/python").exists:
        pytest.fail("the quantizer's venv (real torch) is missing: the scenario sets quantize_state=present")
    rc, log = _run_probe_under_the_unit_sandbox(host, "llmhost-sandbox-probe")
    print(log[-2000:])
    assert rc == 0 and "sandbox probe: ok" in log, log[-3000:]


def test_a_tightened_sandbox_is_caught(host):
    """The probe can fail: the same sandbox with sched_setaffinity denied again (as @resources did)."""
    rc, log = _run_probe_under_the_unit_sandbox(host, "llmhost-sandbox-probe-tight", "SystemCallFilter=~sched_setaffinity")
    print(log[-2000:])
    assert rc != 0 and "sandbox probe: ok" not in log
    assert "os.sched_setaffinity" in log and "PermissionError" in log, log[-3000:]


def test_a_command_line_vllm_refuses_ends_failed_without_restarts(host):
    """vLLM's parser exits 2 on a bad option: the replica is failed with its reason, not restarted every 10 s."""
    host.run_test("printf '%s\\n' 'VLLM_ARGS=\"/nonexistent --no-such-option\"' > /etc/llmhost/vllm/9.env")
    try:
        host.run("systemctl start vllm@9.service")
        for _try in range(120):
            props = dict(line.split("=", 1) for line in host.check_output(
                "systemctl show vllm@9.service -p ActiveState -p Result -p NRestarts -p ExecMainStatus").splitlines())
            if props["ActiveState"] == "failed":
                break
            time.sleep(0.5)
        assert props == {"ActiveState": "failed", "Result": "exit-code", "NRestarts": "0", "ExecMainStatus": "2"}, props
        assert "--no-such-option" in host.run("journalctl --no-pager -o cat -u vllm@9.service").stdout
    finally:
        host.run("systemctl stop vllm@9.service; systemctl reset-failed vllm@9.service; rm -f /etc/llmhost/vllm/9.env")


def test_kill_9_brings_the_replica_back(host):
    pid = host.check_output("systemctl show -p MainPID --value vllm@1.service")
    start = time.time()
    host.run("kill -9 %s" % pid)
    for _attempt in range(60):
        time.sleep(1)
        new = host.check_output("systemctl show -p MainPID --value vllm@1.service")
        if new not in ("0", pid) and curl(host, "/health", 8001)[0] == 200:
            break
    else:
        pytest.fail("vllm@1 did not come back after kill -9")
    print("vllm@1 back on /health %.1f s after kill -9" % (time.time() - start))
    assert host.service("vllm@1.service").is_running


def test_stop_drains_within_the_shutdown_timeout(host):
    host.run("systemctl restart vllm@1.service")
    for _attempt in range(30):
        if curl(host, "/health", 8001)[0] == 200:
            break
        time.sleep(1)
    else:
        pytest.fail("vllm@1 did not serve again after its restart")
    cursor = host.check_output("journalctl --no-pager -n 0 --show-cursor | sed -n 's/^-- cursor: //p'")
    try:
        host.run_expect([0], "systemctl stop vllm@1.service")
        # journald reads the replica's output stream on its own time: systemd's "Stopped" line can be in the journal
        # before the replica's last lines are; read until they are there, for at most 15 s
        for _attempt in range(15):
            log = host.check_output("journalctl --no-pager -u vllm@1.service --after-cursor '%s'" % cursor)
            if "drained" in log:
                break
            time.sleep(1)
        assert "draining" in log and "drained" in log, log
        # It stopped by its own drain: had it run past TimeoutStopSec, systemd would have said "State 'stop-sigterm'
        # timed out" and the unit's Result would be "timeout"; no stopwatch of this test's own. (KillMode=mixed: what
        # is left of its group once the main process has exited gets SIGKILL, which systemd logs too; not a timeout.)
        assert host.check_output("systemctl show -p Result --value vllm@1.service") == "success"
        assert "timed out" not in log
        assert host.service("vllm@1.service").is_enabled
    finally:
        # the tests after this one (the tag re-runs) need both replicas serving, whatever this one found
        host.run_expect([0], "systemctl start vllm@1.service")
