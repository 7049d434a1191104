"""The model's default source, the hub, on a real systemd host reached through Docker (no controller
path can work there): the role sends its fetch worker to the host, and the real huggingface_hub client
of the vLLM venv downloads the pinned revision from the harness's loopback STAND-IN of the Hugging Face
Hub (tests/harness/hfhub.py), which serves the tiny model at two revisions.

Here: the pinned revision is the one in place, checked and tidy; the token reached the hub and nowhere
else; a revision the hub does not have is refused before anything is written; a new revision that fails
its checks leaves the model in place untouched; a folder without the collection's manifest is refused
and kept; the worker the role sent, killed half-way through a throttled download, continues where it
stopped, and a second one started on the same folder meanwhile is refused. The second run without
the hub is in test_vllm_service_rerun.py (`--tags model` with the hub unreachable); bytes that do not
match the hub's sha256 are an integration test with the same client (tests/integration/test_model_fetch.py).
Container scenario only."""
import json
import os
import re
import time
from pathlib import Path

import pytest

REPO = "llmhost-test/tiny-qwen"
REV_A, REV_B = "cfadfc797a22451d91044093f8227f9f97c8d57f", "0030871344bfdbc0dd45c2709b02c0395d8e1885"
TOKEN = "hf_llmhostMoleculeTestToken"
MODEL = "/srv/llmhost/models/tiny-qwen"
FACT = "/etc/ansible/facts.d/llmhost_model.fact"
SOURCE = "/srv/llmhost-test/tiny-qwen"  # the bytes of revision A, copied by prepare to compare with


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("hub downloads are tested in the container scenario")


def test_the_pinned_revision_is_in_place_checked_and_tidy(host, hub_requests):
    assert json.loads(host.file(MODEL + "/llmhost-manifest.json").content_string)["source"] == "%s@%s" % (REPO, REV_A)
    assert "llmhost_test_revision" not in host.file(MODEL + "/generation_config.json").content_string  # not B's
    assert not host.file(MODEL + ".partial").exists and not host.file(MODEL + "/.cache").exists
    worker = host.file("/usr/local/lib/llmhost/llmhost_fetch.py")
    assert worker.exists and worker.user == "root" and worker.mode == 0o644
    fetched = [r["path"] for r in hub_requests() if r["method"] == "GET" and "/resolve/" in r["path"]]
    assert any("/resolve/%s/model.safetensors" % REV_A in p for p in fetched), fetched
    assert not any(REV_B in p for p in fetched)


def test_the_token_reached_the_hub_and_nothing_else(host, hub_requests):
    token_file = host.file("/etc/llmhost/hf-token")
    assert token_file.mode == 0o600 and token_file.user == "root"
    seen = [r for r in hub_requests() if REPO in r["path"]]  # the repository's routes (not the client's own calls)
    assert seen and all(r["authorization"] == "Bearer " + TOKEN for r in seen), seen
    # not the venvs' site-packages: the wheels the lock names, installed as they are (a few GB of torch read per look)
    for where in ("/srv/llmhost", "/opt/llmhost", "/etc/systemd", "/etc/llmhost/vllm", "/var/log"):
        assert host.run("grep -rlsF --exclude-dir=site-packages %s %s" % (TOKEN, where)).stdout == "", where
    assert TOKEN not in host.check_output("journalctl --no-pager -q")


def test_a_revision_the_hub_lacks_is_refused_before_anything_is_written(host, playbook):
    missing, store = "0" * 40, "/srv/llmhost-test/store-of-a-missing-revision"
    fact = host.file(FACT).content_string
    changed, failed, out = playbook("--tags", "model", "-v", "-e", "model_revision=" + missing, "-e", "model_store=" + store)
    assert failed and changed == 0, out[-3000:]
    assert "model_revision=%s" % missing in out and "RevisionNotFound" in out, out[-3000:]
    assert not host.file(store).exists and host.file(FACT).content_string == fact
    assert TOKEN not in out


def test_a_new_revision_that_fails_its_checks_leaves_the_model_in_place(host, playbook):
    """Revision B with an architecture list it does not meet: it is downloaded and checked beside the model
    in place, which stays byte for byte as it was; the next run for the model in place removes B's leftover."""
    listing = "cd %s && sha256sum * | sort" % MODEL  # the manifest included
    before, fact = host.check_output(listing), host.file(FACT).content_string
    changed, failed, out = playbook("--tags", "model", "-e", "model_revision=" + REV_B,
                                    "-e", json.dumps({"model_architectures": ["LlamaForCausalLM"]}))
    assert failed and "architecture Qwen2ForCausalLM is not one of LlamaForCausalLM" in " ".join(out.split()), out[-3000:]
    # the download's wait says how far it is, once a poll (llmhost.vllm.job_wait), not "ASYNC POLL ... finished=0"
    assert re.search(r"\| model download: \d+ s, [\d.]+ of [\d.]+ [MG]iB \(\d+%\)", out) and "ASYNC POLL" not in out, out[-3000:]
    assert host.check_output(listing) == before and host.file(FACT).content_string == fact
    assert host.file(MODEL + ".partial/generation_config.json").contains("llmhost_test_revision")  # B's, beside it
    assert not host.file(MODEL + ".old").exists
    changed, failed, out = playbook("--tags", "model", "-e", "model_hf_endpoint=http://127.0.0.1:9")
    assert failed == 0 and changed == 1, out[-3000:]
    assert not host.file(MODEL + ".partial").exists and host.check_output(listing) == before


def test_a_folder_the_collection_did_not_make_is_refused_and_kept(host, playbook):
    store = "/srv/llmhost-test/store-with-a-foreign-folder"
    for folder in ("tiny-qwen", "tiny-qwen.old"):   # the model's name, and what a swap sets aside
        host.run_expect([0], "mkdir -p %s/%s && echo mine > %s/%s/notes.txt" % (store, folder, store, folder))
    changed, failed, out = playbook("--tags", "model", "-e", "model_store=" + store)
    assert failed and changed == 0, out[-3000:]
    assert ("%s/tiny-qwen exists and %s/tiny-qwen.old exists without llmhost-manifest.json" % (store, store)
            in " ".join(out.split())), out[-3000:]
    for folder in ("tiny-qwen", "tiny-qwen.old"):
        assert host.file("%s/%s/notes.txt" % (store, folder)).content_string == "mine\n"
    assert not host.file(store + "/tiny-qwen.partial").exists


def test_check_mode_plans_the_service_from_the_hubs_config(host, playbook):
    """--check before a new revision is fetched: the hub's answer carries its config.json, and the serving
    plan is made from it; nothing is written."""
    dest = "/srv/llmhost/models/tiny-qwen-b"
    changed, failed, out = playbook("--check", "--tags", "model,vllm_service", "-e", "model_revision=" + REV_B,
                                    "-e", "model_name=tiny-qwen-b")
    assert failed == 0, out[-4000:]
    text = " ".join(out.replace("''", "'").split())  # the yaml callback doubles quotes and folds lines
    assert "%s/config.json is not there yet" % dest in text and "the plan is made from the model role's model_config" in text
    assert not host.file(dest).exists and not host.file(dest + ".partial").exists


def _gets(requests):
    return [r["path"].rsplit("/", 1)[-1] for r in requests if r["method"] == "GET" and "/resolve/%s/" % REV_A in r["path"]]


def test_a_killed_download_continues_and_a_second_one_meanwhile_is_refused(host, hub_requests):
    """The role's worker and the vLLM venv's real huggingface_hub client, run on the host as the role runs them
    (token on stdin), against the stand-in hub throttled to 2 MB/s: killed (-9) while the weights arrive, a
    second worker started on the same folder meanwhile is refused and touches nothing, and the next run
    fetches only what the killed one had not finished, then checks every file against the hub."""
    dest, cache = "/srv/llmhost-test/killed-download.partial", "/srv/llmhost-test/killed-download-hf"
    worker = ("echo %s | env HF_ENDPOINT=http://127.0.0.1:%s HF_HOME=%s HF_HUB_OFFLINE=0 /opt/llmhost/vllm/venv/bin/python "
              "/usr/local/lib/llmhost/llmhost_fetch.py download --repo %s --revision %s --dest %s --token-stdin"
              % (TOKEN, os.environ.get("LLMHOST_HFHUB_PORT", "3144"), cache, REPO, REV_A, dest))
    faults = Path(os.environ["LLMHOST_HFHUB_ROOT"]) / "faults.json"
    host.run_expect([0], "rm -rf %s %s" % (dest, cache))
    start = len(hub_requests())
    faults.write_text(json.dumps({"throttle_bps": 2 << 20}))
    try:
        host.run_expect([0], "(sh -c '%s' > /tmp/killed-download.log 2>&1 & echo $! > /tmp/killed-download.pid)" % worker)
        for _attempt in range(120):            # until the weights are on their way (bounded: 60 s)
            if "model.safetensors" in _gets(hub_requests()[start:]):
                break
            time.sleep(0.5)
        time.sleep(3)
        listing = host.check_output("cd %s && find . -type f | sort" % dest)
        second = host.run(worker)
        assert second.rc != 0 and "is being written by another download" in second.stderr, second.stderr
        assert host.check_output("cd %s && find . -type f | sort" % dest) == listing   # the refused one touched nothing
        host.run_expect([0], "pkill -9 -f '[l]lmhost_fetch.py download .*killed-download'; sleep 1")
    finally:
        faults.unlink()
    first = _gets(hub_requests()[start:])
    assert "config.json" in first and host.file(dest + "/config.json").exists     # finished before the kill
    assert not host.file(dest + "/model.safetensors").exists                       # not finished
    again = len(hub_requests())
    done = host.run(worker)
    assert done.rc == 0, done.stderr[-3000:]
    refetched = _gets(hub_requests()[again:])
    assert "model.safetensors" in refetched and "config.json" not in refetched, refetched
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        assert (host.check_output("sha256sum %s/%s" % (dest, name)).split()[0]
                == host.check_output("sha256sum %s/%s" % (SOURCE, name)).split()[0]), name
    host.run("rm -rf %s %s /tmp/killed-download.*" % (dest, cache))
