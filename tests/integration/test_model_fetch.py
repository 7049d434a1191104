"""The model role's fetch worker (roles/model/files/llmhost_fetch.py) with the real huggingface_hub
client against the loopback STAND-IN of the Hub (tests/harness/hfhub.py), run as the role runs it:
a subprocess, configured through HF_ENDPOINT, HF_HOME and HF_TOKEN_PATH only.

The failure paths live here, the cheapest layer that runs the real client: a download killed
half-way, bytes that do not match the Hub's sha256, a revision that does not exist, the token's
hygiene. The container scenario runs the same worker through the role on a systemd host."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "roles" / "model" / "files" / "llmhost_fetch.py"
sys.path.insert(0, str(ROOT / "tests" / "harness"))
import hfhub  # noqa: E402  pylint: disable=wrong-import-position

REPO = "llmhost-test/tiny"
REV_A = hashlib.sha1(b"llmhost-test tiny revision A").hexdigest()
REV_B = hashlib.sha1(b"llmhost-test tiny revision B").hexdigest()
# The worker's interpreter: this one (huggingface_hub of requirements/dev.txt), or another venv's to try
# the worker with the profiles' own huggingface_hub (0.26 for seed, 2.x for current).
PYTHON = os.environ.get("LLMHOST_FETCH_PYTHON", sys.executable)
TOKEN = "hf_llmhostTestTokenNeverInArgvOrLogs"
# above huggingface_hub's 10 MiB write block, so that a partial file shows on disk
WEIGHTS = 24 << 20


@pytest.fixture(name="hub")
def fixture_hub(tmp_path):
    """The stand-in serving REPO at two revisions (B changes the config); its root and endpoint."""
    root = tmp_path / "hub"
    for rev, layers in ((REV_A, 2), (REV_B, 3)):
        d = root / REPO / rev
        d.mkdir(parents=True)
        (d / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "num_hidden_layers": layers}))
        (d / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"a": 0}}}))
        (d / "model.safetensors").write_bytes(bytes(range(256)) * (WEIGHTS // 256))
    server = hfhub.serve(str(root), 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()


def worker(hub, tmp_path, *args, wait=True):
    """Run the worker as the role does: the token in a 0600 file (HF_TOKEN_PATH), or on stdin with --token-stdin."""
    _root, endpoint = hub
    env = {"PATH": os.environ["PATH"], "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf-home"),
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    if "--token-stdin" not in args:
        token = tmp_path / "token"
        token.write_text(TOKEN + "\n")
        token.chmod(0o600)
        env["HF_TOKEN_PATH"] = str(token)
    argv = [PYTHON, str(WORKER)] + list(args)
    assert not any(TOKEN in a for a in argv) and not any(TOKEN in v for v in env.values())
    stdin = subprocess.PIPE if wait else subprocess.DEVNULL
    proc = subprocess.Popen(argv, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return proc
    out, err = proc.communicate(input=TOKEN + "\n" if "--token-stdin" in args else "", timeout=120)
    return proc.returncode, out, err


def faults(hub, **kw):
    (hub[0] / "faults.json").write_text(json.dumps(kw))


def requests_seen(hub):
    return [json.loads(line) for line in (hub[0] / "requests.log").read_text().splitlines()]


def test_plan_lists_the_hubs_hashes_and_the_config(hub, tmp_path):
    rc, out, err = worker(hub, tmp_path, "plan", "--repo", REPO, "--revision", REV_B)
    assert rc == 0, err
    plan = json.loads(out)
    weights = (hub[0] / REPO / REV_B / "model.safetensors").read_bytes()
    assert plan["sha"] == REV_B and plan["config"]["num_hidden_layers"] == 3
    assert plan["files"]["model.safetensors"]["sha256"] == hashlib.sha256(weights).hexdigest()
    assert plan["files"]["config.json"]["sha256"] is None and len(plan["files"]["config.json"]["blob_id"]) == 40
    assert plan["size"] == sum(f.stat().st_size for f in (hub[0] / REPO / REV_B).iterdir())


def test_the_pinned_revision_is_downloaded_and_checked(hub, tmp_path):
    dest = tmp_path / "m.partial"
    rc, out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))
    assert rc == 0, err
    assert json.loads(out) == {"files": 3, "continued": False, "checked": "sha256 and git blob ids from the Hub"}
    assert sorted(p.name for p in dest.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    for p in dest.iterdir():
        assert p.read_bytes() == (hub[0] / REPO / REV_A / p.name).read_bytes()


def test_a_missing_revision_is_refused_before_anything_is_written(hub, tmp_path):
    missing = "0" * 40
    for action in (["plan"], ["download", "--dest", str(tmp_path / "m.partial")]):
        rc, _out, err = worker(hub, tmp_path, *action, "--repo", REPO, "--revision", missing)
        assert rc == 1 and "model_revision=%s" % missing in err and "RevisionNotFound" in err, err
    assert not (tmp_path / "m.partial").exists()
    rc, _out, err = worker(hub, tmp_path, "plan", "--repo", "llmhost-test/none-such", "--revision", REV_A)
    assert rc == 1 and "RepositoryNotFound" in err, err


def test_a_download_killed_half_way_continues_and_leaves_nothing_half_written(hub, tmp_path):
    dest = tmp_path / "m.partial"
    # The hub sends two thirds of the weights and then holds the connection: the download cannot finish before the
    # kill, however fast or slow this machine is (the client writes 10 MiB chunks, so one chunk is on disk).
    faults(hub, hold_after=WEIGHTS * 2 // 3)
    proc = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest), wait=False)
    partial = dest / ".cache" / "huggingface" / "download"
    got = 0
    for _tick in range(600):  # until a third of the weights is on disk (bounded: 60 s)
        time.sleep(0.1)
        got = sum(p.stat().st_size for p in partial.glob("*.incomplete")) if partial.is_dir() else 0
        if got >= WEIGHTS // 3:
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert WEIGHTS // 3 <= got < WEIGHTS
    assert not (dest / "model.safetensors").exists(), "a killed download must not leave the file in place"
    faults(hub)
    rc, out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))
    assert rc == 0, err
    assert json.loads(out)["continued"] is True
    # huggingface_hub 0.x resumes the killed file with a Range request; 1.x (huggingface_hub PR #4228) keeps
    # a process-unique partial file and starts that file again. Either way the result is whole and checked.
    gets = [r for r in requests_seen(hub) if r["method"] == "GET" and r["path"].endswith("/model.safetensors")]
    version = subprocess.check_output([PYTHON, "-c", "import huggingface_hub as h; print(h.__version__)"], text=True)
    resumes = int(version.split(".", maxsplit=1)[0]) < 1
    assert len(gets) == 2 and (gets[-1]["range"] is not None) == resumes, gets
    assert (dest / "model.safetensors").read_bytes() == (hub[0] / REPO / REV_A / "model.safetensors").read_bytes()
    assert not (dest / ".cache").exists() and not list(dest.rglob("*.incomplete"))


def test_bytes_that_do_not_match_the_hubs_sha256_are_refused_and_deleted(hub, tmp_path):
    dest = tmp_path / "m.partial"
    faults(hub, corrupt=["model.safetensors"])
    rc, _out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))
    assert rc == 1 and "model.safetensors: sha256" in err and "the Hub says" in err, err
    assert not (dest / "model.safetensors").exists()
    faults(hub)
    rc, _out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))
    assert rc == 0, err
    assert (dest / "model.safetensors").read_bytes() == (hub[0] / REPO / REV_A / "model.safetensors").read_bytes()


def test_a_folder_left_by_another_revision_is_started_over(hub, tmp_path):
    dest = tmp_path / "m.partial"
    assert worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))[0] == 0
    (dest / "stale-file-of-revision-a").write_text("x")
    rc, out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_B, "--dest", str(dest))
    assert rc == 0 and "starting over" in err, err
    assert json.loads(out)["continued"] is False
    assert not (dest / "stale-file-of-revision-a").exists()
    assert json.loads((dest / "config.json").read_text())["num_hidden_layers"] == 3


def test_the_token_reaches_the_hub_and_nothing_else(hub, tmp_path):
    dest = tmp_path / "m.partial"
    results = [worker(hub, tmp_path, "plan", "--repo", REPO, "--revision", REV_A, "--token-stdin"),
               worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))]
    assert all(rc == 0 for rc, _o, _e in results)
    seen = requests_seen(hub)
    assert seen and all(r["authorization"] == "Bearer " + TOKEN for r in seen)
    assert not any(TOKEN in out + err for _rc, out, err in results)
    assert not any(TOKEN in p.read_text(errors="replace") for p in dest.rglob("*") if p.is_file())


def test_the_same_download_started_twice_is_refused_and_the_first_finishes(hub, tmp_path):
    """A run whose controller died leaves its download going; a new run must not write beside it."""
    dest = tmp_path / "m.partial"
    faults(hub, throttle_bps=8 << 20)
    first = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest), wait=False)
    for _tick in range(100):  # until the first one holds the folder
        time.sleep(0.1)
        if (dest / ".cache").is_dir():
            break
    rc, _out, err = worker(hub, tmp_path, "download", "--repo", REPO, "--revision", REV_A, "--dest", str(dest))
    assert rc == 1 and "is being written by another download" in err, err
    faults(hub)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert (dest / "model.safetensors").read_bytes() == (hub[0] / REPO / REV_A / "model.safetensors").read_bytes()
