"""Weights as vLLM holds them: parameter counts against the published ones, and the loaded size against vLLM's own
"Model loading took ... GiB" on lent GPUs; the one-GPU plans against the KV cache vLLM really had there."""
import json
import re
from pathlib import Path

import pytest
from shapes import PUBLISHED, QWEN3_4B, QWEN3_30B_A3B, SHAPES

from ansible_collections.llmhost.vllm.plugins.module_utils import model_memory as mm
from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
PLANS = FIXTURES / "device" / "vllm-0.25.0-plans-4090budget"
FOUR_B = FIXTURES / "bench" / "vllm-0.25.0-h200-4090budget"


def _servers(path):
    """{server: its block of start-up lines} from a record's server-lines.txt."""
    return dict(re.findall(r"== (\S+)\n(.*?)(?=\n== |\Z)", path.read_text(), re.S))


def _figure(block, pattern):
    found = re.search(pattern, block)
    return float(found.group(1).replace(",", "")) if found else None


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameters_within_5_percent_of_the_published_counts(name):
    config, total, active = PUBLISHED[name]
    shape = mm.model_shape(config)
    assert abs(shape["params"] / 1e9 / total - 1) < 0.05, shape["params"]
    if active:
        assert abs(shape["active_params"] / 1e9 / active - 1) < 0.05, shape["active_params"]


def test_experts_count_in_the_weights_and_routers_stay_16_bit():
    shape = mm.model_shape(QWEN3_30B_A3B)
    assert (shape["experts"], shape["experts_per_token"], shape["sparse_layers"]) == (128, 8, 48)
    assert shape["expert_params"] == 48 * 128 * 3 * 2048 * 768 and shape["dense_mlp_params"] == 0
    # FP8 halves the experts, not the routers or the embeddings
    fp8, bf16 = mm.weight_bytes(shape, "fp8"), mm.weight_bytes(shape, "bf16")
    assert bf16 - fp8 == shape["linear_params"]
    # decoder_sparse_step and mlp_only_layers make dense layers of some
    every_other = mm.model_shape(dict(QWEN3_30B_A3B, decoder_sparse_step=2, mlp_only_layers=[1]))
    assert every_other["sparse_layers"] == 23 and every_other["dense_mlp_params"] == 25 * 3 * 2048 * 6144


def test_a_single_token_reads_only_the_experts_it_picks():
    shape = mm.model_shape(QWEN3_30B_A3B)
    one, many = mm.weight_bytes_read(shape, "bf16", 1), mm.weight_bytes_read(shape, "bf16", 256)
    assert one == shape["active_params"] * 2
    assert one < many <= mm.weight_bytes(shape, "bf16")
    dense = mm.model_shape(QWEN3_4B)
    assert mm.weight_bytes_read(dense, "fp8", 1) == mm.weight_bytes(dense, "fp8")


# (record, server, shape, weight format) -> vLLM's "Model loading took"
LOADED = [
    (PLANS, "qwen3-8b", "qwen3-8b", "fp8"),
    (PLANS, "qwen3-8b-bf16", "qwen3-8b", "bf16"),
    (PLANS, "qwen2.5-32b-awq", "qwen2.5-32b-awq", "awq"),
    (PLANS, "qwen2.5-3b", "qwen2.5-3b", "fp8"),
    (PLANS, "qwen3-30b-a3b-fp8", "qwen3-30b-a3b", "fp8"),
    (PLANS, "qwen3-30b-a3b-bf16", "qwen3-30b-a3b", "bf16"),
    (FOUR_B, "defaults_4090", "qwen3-4b", "bf16"),
    (FOUR_B, "plan_4090", "qwen3-4b", "fp8"),
]


@pytest.mark.parametrize("record,server,shape,fmt", LOADED, ids=[case[1] for case in LOADED])
def test_the_loaded_estimate_is_within_3_percent_of_what_vllm_loaded(record, server, shape, fmt):
    loaded = _figure(_servers(record / "server-lines.txt")[server], r"Model loading took ([\d.]+) GiB")
    estimate = mm.loaded_bytes(mm.model_shape(SHAPES[shape]), fmt) / mm.GIB
    assert abs(estimate / loaded - 1) <= 0.03, (estimate, loaded)
    # where a context must fit, the plan keeps LOAD_MARGIN in reserve: never below what vLLM loaded
    assert estimate * (1 + mm.LOAD_MARGIN) >= loaded


@pytest.mark.parametrize("server,shape,wishes", [
    ("qwen3-8b", "qwen3-8b", {}),
    ("qwen3-8b-bf16", "qwen3-8b", {"weight_format": "bf16"}),
    ("qwen2.5-32b-awq", "qwen2.5-32b-awq", {}),
    ("qwen2.5-3b", "qwen2.5-3b", {}),
])
def test_each_one_gpu_plan_started_and_holds_what_it_asks_for(rtx4090x2, server, shape, wishes):
    """The plan made today for one 4090, with the option table of the vLLM that served it, against that server: it
    started and answered, its context fits vLLM's KV cache, and its sequences of tokens_per_seq fit too (the
    sequences it promises are sequences the replica serves without preemption)."""
    table = json.loads((PLANS / "vllm-0.25.0-options.json").read_text())
    p = sp.make_plan(rtx4090x2[0][:1], {}, SHAPES[shape], dict(wishes, model_path="/m"), table)
    block = _servers(PLANS / "server-lines.txt")[server]
    kv_tokens = _figure(block, r"GPU KV cache size: ([\d,]+) tokens")
    assert re.search(r"=== \S+ %s: ready after \d+ s; answered: 8 tokens" % re.escape(server),
                     (PLANS / "proof.log").read_text())
    assert p["max_model_len"] <= kv_tokens
    assert p["max_num_seqs"] * min(2048, p["max_model_len"]) <= kv_tokens, (p["max_num_seqs"], kv_tokens)
    ran = block.split("\n", 1)[0]
    assert ("--kv-cache-dtype fp8" in ran) == (p["kv_cache_dtype"] == "fp8")
    assert ("--quantization fp8" in ran) == (p["weight_format"] == "fp8")
