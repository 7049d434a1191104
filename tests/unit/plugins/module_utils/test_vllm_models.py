"""Which architectures each pinned vLLM serves (tables read from vLLM's own model registries), and the verdict on a
model's architecture that the model role gives before anything is downloaded and again on the folder."""
import importlib.util
import json
import zipfile
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.filter.model_architecture_errors import model_architecture_errors
from ansible_collections.llmhost.vllm.plugins.filter.vllm_model_summary import vllm_model_summary
from ansible_collections.llmhost.vllm.plugins.module_utils import model_check, vllm_models

ROOT = Path(__file__).resolve().parents[4]
STACK = ROOT / "roles" / "llmhost_stack"
TABLES = STACK / "files" / "vllm-architectures"
TOOL = ROOT / "tools" / "vllm_model_table.py"


def profile_versions():
    known = yaml.safe_load((STACK / "vars" / "main.yml").read_text())["__llmhost_stack_known"]
    return {p: yaml.safe_load((STACK / "vars" / ("%s.yml" % p)).read_text())["__llmhost_stack_data"]["vllm"]["version"]
            for p in known}


def summary(profile):
    texts = [t.read_text() for t in sorted(TABLES.glob("*.json"))]
    versions = profile_versions()
    return vllm_model_summary(texts, versions, profile, versions[profile])


def test_every_profile_pins_a_vllm_with_a_table_of_its_own_version():
    for profile, version in profile_versions().items():
        table = json.loads((TABLES / ("%s.json" % version)).read_text())
        assert table["vllm_version"] == version, profile
        assert table["source"] == "vllm/model_executor/models/registry.py"
        assert len(table["architectures"]["text_generation"]) > 40


@pytest.mark.parametrize("version,has,lacks", [
    ("0.6.3", ["Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "MixtralForCausalLM", "Qwen2VLForConditionalGeneration"],
     ["Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen2ForRewardModel", "MedusaModel"]),
    ("0.33.0", ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM"],
     ["QWenLMHeadModel", "Qwen2ForRewardModel", "Qwen3_5MTP"]),
])
def test_served_is_what_the_registry_generates_text_with(version, has, lacks):
    served = vllm_models.served(json.loads((TABLES / ("%s.json" % version)).read_text()))
    assert set(has) <= set(served)
    assert not set(lacks) & set(served)


def test_qwen3_under_the_seed_profile_is_refused_naming_the_vllm_and_the_profile_that_has_it():
    errors = model_architecture_errors({"architectures": ["Qwen3ForCausalLM"]},
                                       ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"], summary("seed"))
    assert errors == ["architecture Qwen3ForCausalLM has no model class in vLLM 0.6.3, the vLLM of stack profile seed "
                      "(its model registry: the model would fail when the service starts); choose "
                      "llmhost_stack=current (vLLM 0.33.0), or another model"]
    assert model_architecture_errors({"architectures": ["Qwen3MoeForCausalLM"]}, [], summary("current")) == []


def test_the_users_list_and_the_registry_are_both_named():
    errors = model_architecture_errors({"architectures": ["QWenLMHeadModel"]}, ["Qwen2ForCausalLM"], summary("current"))
    assert errors[0] == "architecture QWenLMHeadModel is not one of Qwen2ForCausalLM (model_architectures)"
    assert "no profile's vLLM has it" not in errors[1] and "choose llmhost_stack=seed (vLLM 0.6.3)" in errors[1]
    nowhere = model_architecture_errors({"architectures": ["NoSuchForCausalLM"]}, [], summary("seed"))
    assert nowhere[0].endswith("no profile's vLLM has it: choose another model")
    assert "architecture None" in model_architecture_errors({}, ["Qwen2ForCausalLM"], summary("seed"))[0]


def test_a_vllm_without_a_table_checks_the_users_list_alone():
    models = dict(summary("seed"), version="0.7.0")     # llmhost_stack_overrides: {vllm: {version: 0.7.0}}
    assert model_architecture_errors({"architectures": ["Qwen3ForCausalLM"]}, [], models) == []
    assert model_architecture_errors({"architectures": ["Qwen3ForCausalLM"]}, [], {}) == []


def test_the_default_accept_list_and_each_profiles_default_model_are_served():
    defaults = yaml.safe_load((ROOT / "roles" / "model" / "defaults" / "main.yml").read_text())["model_architectures"]
    seed, current = summary("seed"), summary("current")
    assert set(defaults) <= set(current["served"]["0.33.0"])
    # the profiles' default models: Qwen2.5-3B-Instruct (Qwen2ForCausalLM), Qwen3-4B-Instruct-2507 (Qwen3ForCausalLM)
    assert model_architecture_errors({"architectures": ["Qwen2ForCausalLM"]}, defaults, seed) == []
    assert model_architecture_errors({"architectures": ["Qwen3ForCausalLM"]}, defaults, current) == []


def test_the_folder_check_gives_the_same_verdict(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["Qwen3MoeForCausalLM"]}))
    errors = model_check.check(str(tmp_path), ["Qwen3MoeForCausalLM"], qwen_tokens=False,
                               vllm_models=summary("seed"))["errors"]
    assert errors[0].startswith("architecture Qwen3MoeForCausalLM has no model class in vLLM 0.6.3")


SOURCE = '''
from typing import Dict, List
_TEXT_GENERATION_MODELS = {"Qwen2ForCausalLM": ("qwen2", "Qwen2ForCausalLM"), "ZForCausalLM": ("z", "Z")}
_MULTIMODAL_MODELS: Dict[str, tuple] = {"Qwen2VLForConditionalGeneration": ("qwen2_vl", "Q")}
_EMBEDDING_MODELS = {**_TEXT_GENERATION_MODELS}
_VLLM_MODELS = {"Everything": ("x", "X")}
_PREVIOUSLY_SUPPORTED_MODELS = {"QWenLMHeadModel": "0.23.0"}
_ROCM_UNSUPPORTED_MODELS: List[str] = []
'''


def _tool():
    spec = importlib.util.spec_from_file_location("vllm_model_table", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_tool_reads_the_registrys_literal_dicts_without_importing_it(tmp_path):
    tool = _tool()
    (tmp_path / "registry.py").write_text(SOURCE)
    assert tool.table(*tool.read(str(tmp_path / "registry.py"), "9.9.9")) == {
        "vllm_version": "9.9.9", "source": "vllm/model_executor/models/registry.py",
        "architectures": {"text_generation": ["Qwen2ForCausalLM", "ZForCausalLM"],
                          "multimodal": ["Qwen2VLForConditionalGeneration"]}}
    with zipfile.ZipFile(tmp_path / "vllm-1.2.3-cp38-abi3-manylinux1_x86_64.whl", "w") as wheel:
        wheel.writestr(tool.REGISTRY, SOURCE)
    source, version = tool.read(str(tmp_path / "vllm-1.2.3-cp38-abi3-manylinux1_x86_64.whl"))
    assert version == "1.2.3" and tool.groups(source)["text_generation"] == ["Qwen2ForCausalLM", "ZForCausalLM"]
    with pytest.raises(SystemExit, match="not a vLLM model registry"):
        tool.table("X = {}\n", "1")
