# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A model's weights as vLLM holds them, and its KV cache per token, from its config.json alone.

Parameters are counted by kind, because each quantization leaves some kinds in 16 bits:
- attention (q, k, v, o) and dense MLP layers (gate, up, down);
- routed experts, shared experts and the routers of mixture-of-experts layers. Which layers are sparse follows the
  config's own keys: decoder_sparse_step and mlp_only_layers (Qwen2-MoE, Qwen3-MoE), first_k_dense_replace and
  moe_layer_freq (DeepSeek-style), every layer (Mixtral's num_local_experts);
- embeddings: the input embedding and the LM head, once when tied.
Norms and biases (well under 0.1% of any model here) are not counted.

vLLM quantizes the linear layers of attention, MLPs and experts; routers and embeddings stay in 16 bits. Checked
against the published parameter counts of Qwen, Qwen-MoE and Mixtral configs, and against vLLM's own "Model loading
took ... GiB" on a lent GPU (tests/unit/plugins/module_utils/test_model_memory.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GIB = 1024 ** 3
# What vLLM holds at load beside the weights counted here: 0.04-0.11 GiB over the count for every 16-bit and FP8 shape
# served on a lent GPU (tests/fixtures/device/vllm-0.25.0-plans-4090budget; not attributed), 0.49 GiB for AWQ.
LOADED_EXTRA = GIB // 10
# How far vLLM's "Model loading took" may be above loaded_bytes: 2.1% at most there (AWQ), 2.5% allowed. The plan keeps
# this much of the weights' size in reserve where a context must fit, so that a plan that fits also starts.
LOAD_MARGIN = 0.025


def _int(cfg, *keys):
    for key in keys:
        if cfg.get(key) is not None:
            return int(cfg[key])
    return 0


def _sparse_layers(cfg, layers):
    """How many decoder layers hold experts."""
    if _int(cfg, "num_local_experts") and not _int(cfg, "num_experts", "n_routed_experts"):
        return layers                                   # Mixtral: every layer
    if _int(cfg, "n_routed_experts"):                    # DeepSeek-style
        first, freq = _int(cfg, "first_k_dense_replace"), _int(cfg, "moe_layer_freq") or 1
        return sum(1 for i in range(first, layers) if i % freq == 0)
    step, dense = _int(cfg, "decoder_sparse_step") or 1, set(cfg.get("mlp_only_layers") or [])
    return sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)


def _experts(cfg, hidden, layers):
    """Routed, shared and router parameters over all sparse layers, with the expert counts."""
    experts = _int(cfg, "num_experts", "num_local_experts", "n_routed_experts")
    if not experts:
        return {"experts": 0, "experts_per_token": 0, "sparse_layers": 0, "expert_params": 0,
                "shared_expert_params": 0, "router_params": 0}
    sparse = _sparse_layers(cfg, layers)
    expert_inter = _int(cfg, "moe_intermediate_size", "intermediate_size")
    shared_inter = _int(cfg, "shared_expert_intermediate_size") or _int(cfg, "n_shared_experts") * expert_inter
    shared_gate = hidden if _int(cfg, "shared_expert_intermediate_size") else 0
    return {"experts": experts, "experts_per_token": _int(cfg, "num_experts_per_tok") or 2, "sparse_layers": sparse,
            "expert_params": sparse * experts * 3 * hidden * expert_inter,
            "shared_expert_params": sparse * 3 * hidden * shared_inter,
            "router_params": sparse * (hidden * experts + shared_gate)}


def model_shape(config):
    """The numbers the plan needs from a Hugging Face config.json (dict)."""
    cfg = config.get("text_config") or config
    hidden = int(cfg["hidden_size"])
    heads = int(cfg["num_attention_heads"])
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    layers = int(cfg["num_hidden_layers"])
    moe = _experts(cfg, hidden, layers)
    inter = int(cfg.get("intermediate_size") or 4 * hidden)
    attention = layers * (hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2)
    dense_mlp = (layers - moe["sparse_layers"]) * 3 * hidden * inter
    vocab = int(cfg.get("vocab_size") or 0)
    tied = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    embed = vocab * hidden * (1 if tied else 2)
    linear = attention + dense_mlp + moe["expert_params"] + moe["shared_expert_params"]
    quant = config.get("quantization_config") or cfg.get("quantization_config") or None
    shape = {
        "architecture": (config.get("architectures") or ["?"])[0],
        "hidden_size": hidden, "layers": layers, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
        "vocab_size": vocab, "max_position_embeddings": int(cfg.get("max_position_embeddings") or 0),
        "attention_params": attention, "dense_mlp_params": dense_mlp, "linear_params": linear,
        "embedding_params": embed, "params": linear + moe["router_params"] + embed,
        "quantization": (quant or {}).get("quant_method") if quant else None,
        "quantization_config": quant,
    }
    shape.update(moe)
    shape["active_params"] = shape["params"] - _idle_experts(shape, 1)
    return shape


def _idle_experts(shape, tokens):
    """Routed-expert parameters a step of ``tokens`` tokens leaves unread: each token picks experts_per_token of the
    experts, so a batch touches 1 - (1 - k/E)^tokens of them, on average."""
    if not shape["experts"]:
        return 0
    touched = 1 - (1 - float(shape["experts_per_token"]) / shape["experts"]) ** max(1, tokens)
    return int(shape["expert_params"] * (1 - touched))


def bytes_per_linear_param(shape, fmt):
    """Bytes vLLM holds per parameter of a quantized linear layer, in a weight format (the checkpoint's
    quantization_config tells bits and group size)."""
    if fmt in ("bf16", "fp16", None):
        return 2.0
    if fmt == "fp8":
        return 1.0
    bits, group = _bits_and_group(shape.get("quantization_config") or {})
    if bits >= 8:
        return bits / 8.0
    # packed weights, and per group of `group` inputs: a 16-bit scale and a packed zero point (AWQ, GPTQ)
    return bits / 8.0 + (2.0 + bits / 8.0) / group


def _bits_and_group(quant):
    bits = quant.get("bits") or quant.get("w_bit")
    group = quant.get("group_size") or quant.get("q_group_size")
    for cfg in (quant.get("config_groups") or {}).values():   # compressed-tensors
        weights = (cfg or {}).get("weights") or {}
        bits = bits or weights.get("num_bits")
        group = group or weights.get("group_size")
    if not bits and quant.get("quant_method") == "fp8":
        bits = 8
    return int(bits or 16), int(group or 128)


def weight_bytes(shape, fmt):
    """Estimated weight bytes for one copy of the model in a format: linear layers (attention, MLPs, experts) at the
    format's size, routers and embeddings in 16 bits."""
    per_linear = bytes_per_linear_param(shape, fmt)
    return int(shape["linear_params"] * per_linear + (shape["router_params"] + shape["embedding_params"]) * 2)


def loaded_bytes(shape, fmt):
    """What vLLM reports as "Model loading took" for one copy of the model: the weights and LOADED_EXTRA."""
    return weight_bytes(shape, fmt) + LOADED_EXTRA


def weight_bytes_read(shape, fmt, tokens):
    """Weight bytes one decode step of ``tokens`` sequences reads: all but the routed experts no token picked."""
    return int(weight_bytes(shape, fmt) - _idle_experts(shape, tokens) * bytes_per_linear_param(shape, fmt))


def kv_bytes_per_token(shape, tp, value_bytes=2):
    """KV-cache bytes per token on one GPU of a TP group (2 bytes per value: a 16-bit cache; 1: FP8)."""
    kv_heads_per_gpu = max(1, shape["kv_heads"] // tp)
    return 2 * shape["layers"] * kv_heads_per_gpu * shape["head_dim"] * value_bytes
