"""vllm_serving_plan as the role calls it: wishes typed and checked by the module's argument spec."""
import json
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.modules import vllm_serving_plan

ROOT = Path(__file__).resolve().parents[4]
TABLE = json.loads((ROOT / "roles" / "vllm_service" / "files" / "vllm-options" / "0.6.3.json").read_text())
GPUS = [{"index": i, "compute_capability": "8.9", "memory_total_mib": 24564, "numa_node": 0} for i in (0, 1)]
CONFIG = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 36,
          "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 11008,
          "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}


def run(wishes, capsys):
    args = {"gpus": GPUS, "p2p": {"0,1": "NS"}, "model_path": "/srv/models/q", "model_config": CONFIG,
            "option_table": TABLE, "wishes": wishes}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            vllm_serving_plan.main()
    return json.loads(capsys.readouterr().out)


def test_role_shaped_wishes_are_converted_and_planned(capsys):
    # the role's templated values arrive as strings
    out = run({"mode": "auto", "tensor_parallel_size": "0", "max_model_len": "8192", "enforce_eager": "false",
               "base_port": "9000", "extra_args": ["--seed", 7], "numa": "off"}, capsys)
    plan = out["plan"]
    assert not out.get("failed") and plan["model_path"] == "/srv/models/q" and plan["max_model_len"] == 8192
    assert [r["port"] for r in plan["replicas"]] == [9000, 9001]
    assert plan["replicas"][1]["options"][-2:] == ["--seed", "7"]


@pytest.mark.parametrize("wishes,words", [
    ({"mode": "sharded"}, "value of mode must be one of: auto, replicas, tensor_parallel, got: sharded"),
    ({"weight_format": "int3"}, "value of weight_format must be one of: auto, checkpoint, bf16, fp16, fp8"),
    ({"kv_cache_dtype": "fp16"}, "value of kv_cache_dtype must be one of: auto, fp8, model, got: fp16"),
    ({"max_num_seqs": "many"}, "max_num_seqs"),
    ({"tokens_per_sequence": 100}, "Unsupported parameters"),
])
def test_bad_wishes_are_refused_by_the_spec(capsys, wishes, words):
    out = run(wishes, capsys)
    assert out["failed"] and words in out["msg"]
