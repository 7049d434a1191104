"""model + quantize on a real systemd host: the tiny Qwen-architecture test model (random weights,
tests/harness/tiny_qwen.py), fetched from the stand-in hub (test_model_hub.py), quantized for real by
the current profile's quantizer (llm-compressor, AWQ W4A16, group size 128) on the CPU.

Idempotence (a second run quantizes nothing) is Molecule's idempotence step; here: the output,
the untouched tokenizer, and an interrupted run that leaves nothing servable."""
import json
import time

import pytest

SOURCE = "/srv/llmhost-test/tiny-qwen"  # the bytes of the hub's revision A, copied by prepare to compare with
ORIGIN = "llmhost-test/tiny-qwen@cfadfc797a22451d91044093f8227f9f97c8d57f"
MODEL = "/srv/llmhost/models/tiny-qwen"
AWQ = "/srv/llmhost/models/tiny-qwen-awq-w4g128"
TOKENIZER = ["tokenizer.json", "tokenizer_config.json", "generation_config.json"]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the model pipeline is tested in the container scenario")


def sha(host, path):
    return host.check_output("sha256sum %s" % path).split()[0]


def test_model_is_in_place_unmodified_with_its_manifest(host):
    manifest = json.loads(host.file(MODEL + "/llmhost-manifest.json").content_string)
    assert manifest["source"] == ORIGIN
    assert set(manifest["files"]) == {"config.json", "model.safetensors"} | set(TOKENIZER)
    for rel, entry in manifest["files"].items():
        assert entry["sha256"] == sha(host, "%s/%s" % (SOURCE, rel)) == sha(host, "%s/%s" % (MODEL, rel)), rel


def test_quantized_output_is_awq_packed_for_vllm(host):
    cfg = json.loads(host.file(AWQ + "/config.json").content_string)
    q = cfg["quantization_config"]
    assert q["quant_method"] == "compressed-tensors" and q["format"] == "pack-quantized"
    w = q["config_groups"]["group_0"]["weights"]
    assert (w["num_bits"], w["group_size"], w["strategy"], w["symmetric"]) == (4, 128, "group", False)
    assert q["ignore"] == ["lm_head"]
    names = host.check_output(
        "python3 -c \"import json,struct,sys; f=open('%s/model.safetensors','rb'); n=struct.unpack('<Q', f.read(8))[0]; "
        "print(' '.join(json.loads(f.read(n))))\"" % AWQ).split()
    assert "model.layers.0.self_attn.q_proj.weight_packed" in names
    assert "model.layers.1.mlp.down_proj.weight_scale" in names
    assert "model.layers.0.self_attn.q_proj.weight" not in names      # no 16-bit copy left behind
    assert host.file(AWQ + "/model.safetensors").mode == 0o644         # the service user reads it


@pytest.mark.parametrize("name", TOKENIZER)
def test_tokenizer_files_are_byte_identical_to_the_source(host, name):
    assert sha(host, "%s/%s" % (AWQ, name)) == sha(host, "%s/%s" % (SOURCE, name))


def test_stamp_and_no_partial_output(host):
    stamp = json.loads(host.file(AWQ + "/llmhost-quantize.json").content_string)
    assert stamp["tool"] == "llm-compressor" and stamp["group_size"] == 128 and stamp["source"] == MODEL
    assert not host.file(AWQ + ".partial").exists
    assert host.file(AWQ + "/llmhost-manifest.json").exists


def test_an_interrupted_run_leaves_nothing_servable(host):
    dest = "/srv/llmhost/models/interrupted"
    cmd = ("/opt/llmhost/quantize/venv/bin/python /opt/llmhost/quantize/llmhost_quantize.py --tool llm-compressor "
           "--source %s --dest %s --group-size 128 --calibration /opt/llmhost/quantize/calibration.jsonl "
           "--samples 16 --seq-len 128 --device cpu --stamp /opt/llmhost/quantize/stamp.json" % (MODEL, dest))
    host.run("rm -rf %s %s.partial; (%s > /tmp/interrupted.log 2>&1 & echo $! > /tmp/interrupted.pid)" % (dest, dest, cmd))
    for _attempt in range(120):               # wait until it is writing its partial output
        time.sleep(0.5)
        if host.file(dest + ".partial").exists:
            break
    time.sleep(3)
    host.run("kill -9 $(cat /tmp/interrupted.pid)")
    time.sleep(1)
    assert not host.file(dest).exists, "a killed run must not leave a servable folder"
    assert host.file(dest + ".partial").exists
    assert host.file(dest + ".partial/.llmhost-quantize-partial").exists   # a next run may remove it: it is the worker's
    host.run("rm -rf %s.partial" % dest)


# Data loss: the worker replaces its output folder, so a quantize_output the role did not write (a
# user's folder, or the model itself) is refused by the real role before anything changes, and kept.
FOREIGN = "/srv/llmhost/models/users-own"


@pytest.mark.parametrize("output,words", [
    (FOREIGN, "it exists and holds no llmhost-quantize.json, so it is not an output of this role"),
    (MODEL, "it is, holds or lies in the model to quantize"),
])
def test_quantize_output_that_is_not_its_own_is_refused_and_kept(host, playbook, output, words):
    host.run("mkdir -p %s && echo keep > %s/notes.txt" % (FOREIGN, FOREIGN))
    before = host.check_output("cd %s && find . -type f -exec sha256sum {} + | sort" % output)
    changed, failed, out = playbook("--tags", "quantize", "-e", "quantize_output=" + output)
    assert failed > 0 and changed == 0, out[-3000:]
    assert "quantize_output=%s: %s" % (output, words) in " ".join(out.split()), out[-3000:]
    assert host.check_output("cd %s && find . -type f -exec sha256sum {} + | sort" % output) == before
    assert not host.file(output + ".partial").exists
    host.run("rm -rf %s" % FOREIGN)


# The seed profile's quantizer, AutoAWQ 0.2.6 on torch 2.3.1, run for real on the CPU by the quantize role
# alone under `llmhost_stack=seed`. The seed is Ubuntu 22.04 only: an override lets this Debian 12 host
# through the preflight, and the seed's AutoAWQ lock resolved for Python 3.11 (seed-autoawq-py311.txt)
# installs offline from the harness's wheels. Its own venv and output, so the scenario's stay as they are.
AUTOAWQ = "/srv/llmhost/models/tiny-qwen-autoawq"
QFACT = "/etc/ansible/facts.d/llmhost_quantize.fact"
SEED = ["-e", "llmhost_stack=seed", "-e", json.dumps({"llmhost_stack_overrides": {"os": {"Debian": ["12"]}}}),
        "-e", "quantize_python=/usr/bin/python3.11", "-e", "quantize_home=/opt/llmhost/quantize-seed",
        "-e", "quantize_output=" + AUTOAWQ, "-e", json.dumps({"quantize_find_links": ["/srv/llmhost-test/pypi-seed"]})]


# Last of all: it leaves the quantize role's local fact naming AutoAWQ's output (nothing runs after it that reads it).
@pytest.mark.changes_the_host(order=2)
def test_autoawq_the_seed_quantizer_quantizes_for_real(host, playbook):
    t0 = time.monotonic()
    changed, failed, out = playbook("--tags", "quantize", *SEED)
    print("AutoAWQ through the quantize role: changed=%d in %.0f s" % (changed, time.monotonic() - t0))
    assert failed == 0 and changed > 0, out[-4000:]
    assert "deprecated" in out and "llm-compressor" in out  # the seed profile's warning about AutoAWQ
    assert AUTOAWQ in host.file(QFACT).content_string       # the role recorded its new output
    q = json.loads(host.file(AUTOAWQ + "/config.json").content_string)["quantization_config"]
    assert (q["quant_method"], q["bits"], q["group_size"], q["version"], q["zero_point"]) == ("awq", 4, 128, "gemm", True)
    names = host.check_output(
        "python3 -c \"import json,struct,sys; f=open('%s/model.safetensors','rb'); n=struct.unpack('<Q', f.read(8))[0]; "
        "print(' '.join(json.loads(f.read(n))))\"" % AUTOAWQ).split()
    assert {"model.layers.0.self_attn.q_proj.qweight", "model.layers.0.self_attn.q_proj.qzeros",
            "model.layers.1.mlp.down_proj.scales"} <= set(names)
    assert "model.layers.0.self_attn.q_proj.weight" not in names
    for name in TOKENIZER:
        assert sha(host, "%s/%s" % (AUTOAWQ, name)) == sha(host, "%s/%s" % (SOURCE, name)), name
    stamp = json.loads(host.file(AUTOAWQ + "/llmhost-quantize.json").content_string)
    assert stamp["tool"] == "autoawq" and stamp["source"] == MODEL
    assert not host.file(AUTOAWQ + ".partial").exists
    versions = host.check_output("/opt/llmhost/quantize-seed/venv/bin/python -c "
                                 "'import awq, torch; print(awq.__version__, torch.__version__)'").split()
    assert versions[0] == "0.2.6" and versions[1].startswith("2.3.1")
