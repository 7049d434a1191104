"""model_check on the harness's tiny Qwen model (tests/harness/tiny_qwen.py, run as a process into a temp folder)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import model_check

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("m") / "tiny-qwen"
    subprocess.run([sys.executable, str(ROOT / "tests" / "harness" / "tiny_qwen.py"), str(out)], check=True,
                   capture_output=True)
    return out


def test_a_qwen_folder_passes(tiny):
    info = model_check.check(str(tiny), ["Qwen2ForCausalLM"])
    assert info["errors"] == []
    assert info["architecture"] == "Qwen2ForCausalLM"
    assert info["tokens"] == {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
    assert info["chat_template"] is True and info["weights"] == ["model.safetensors"]


def test_wrong_architecture_tokens_and_template_are_named(tiny, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(tiny, bad)
    cfg = json.loads((bad / "tokenizer_config.json").read_text())
    cfg["chat_template"] = "{{ messages }}"
    (bad / "tokenizer_config.json").write_text(json.dumps(cfg))
    tok = json.loads((bad / "tokenizer.json").read_text())
    tok["added_tokens"][2]["id"] = 151646
    (bad / "tokenizer.json").write_text(json.dumps(tok))
    errors = model_check.check(str(bad), ["Qwen3ForCausalLM"])["errors"]
    assert "architecture Qwen2ForCausalLM is not one of Qwen3ForCausalLM (model_architectures)" in errors
    assert "special token <|im_end|> has id 151646, Qwen's is 151645" in errors
    assert any("not Qwen's ChatML" in e for e in errors)


def test_manifest_catches_a_changed_added_or_missing_file(tiny, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny, copy)
    recorded = model_check.manifest(str(copy))
    assert set(recorded) == {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                             "tokenizer_config.json"}
    assert model_check.compare_manifest(recorded, model_check.manifest(str(copy))) == []
    (copy / "tokenizer_config.json").write_text("{}")
    (copy / "extra.bin").write_bytes(b"x")
    (copy / "generation_config.json").unlink()
    (copy / model_check.MANIFEST).write_text("{}")   # our own file is never part of it
    problems = model_check.compare_manifest(recorded, model_check.manifest(str(copy)))
    assert problems[0] == "extra.bin is not in the manifest (added after it was recorded)"
    assert problems[1] == "generation_config.json is missing (recorded in the manifest)"
    assert problems[2].startswith("tokenizer_config.json does not match the manifest")
    assert len(problems) == 3
