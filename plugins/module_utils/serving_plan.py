# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The serving plan: GPU facts + model config + the user's wishes -> how vLLM runs, with reasons.

One pure function, ``make_plan``. It decides tensor parallel vs one replica per GPU, the weight
format, --max-model-len and --max-num-seqs within the KV-cache budget, NUMA binding, the NCCL
settings for GPUs without peer-to-peer, and renders each replica's `vllm serve` argv, checked
against the option table of the profile's vLLM version. Every decision carries its reason.
Memory figures are estimates from the model's shape (vLLM measures the real ones at start-up);
they exist to refuse what cannot fit and to pick sane defaults, not to replace vLLM's profiler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options

GIB = 1024 ** 3
# Headroom per GPU beyond weights and KV cache: activations at the profiled batch, CUDA graphs,
# the CUDA context and NCCL buffers. vLLM measures it at start; this is a conservative estimate.
OVERHEAD_BYTES = 2 * GIB
FP8_MIN_CC = (8, 9)      # FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell
BF16_MIN_CC = (8, 0)
MAX_NUM_SEQS_CAP = 256   # vLLM's default scheduler limit in the 0.6 series
H200_FP8_NOTE = ("on a lent H200 with a Qwen3-4B-shaped model FP8 weights gave 1.16x vLLM's defaults under mixed load "
                 "with a lower P95 TTFT (docs/reference-serving-h200.md)")

DEFAULT_WISHES = {
    "gpus": "all",                 # "all" or a list of GPU indices
    "mode": "auto",                # auto | replicas | tensor_parallel
    "tensor_parallel_size": 0,     # 0: decided
    "weight_format": "auto",       # auto | checkpoint | bf16 | fp16 | fp8
    "max_model_len": 0,            # 0: decided
    "max_num_seqs": 0,             # 0: decided
    "tokens_per_seq": 2048,        # typical prompt + output, for max_num_seqs
    "gpu_memory_utilization": 0.90,
    "enforce_eager": False,
    "numa": "auto",                # auto | off
    "host": "127.0.0.1",
    "base_port": 8000,
    "served_model_name": "",
    "model_path": "",
    "shutdown_timeout": 30,
    "extra_args": [],
}


class PlanError(Exception):
    pass


def _cc(text):
    try:
        major, minor = str(text).split(".")[:2]
        return int(major), int(minor)
    except (ValueError, AttributeError):
        return None


def model_shape(config):
    """The numbers the plan needs from a Hugging Face config.json (dict)."""
    cfg = config.get("text_config") or config
    hidden = int(cfg["hidden_size"])
    heads = int(cfg["num_attention_heads"])
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    layers = int(cfg["num_hidden_layers"])
    inter = int(cfg.get("intermediate_size") or 4 * hidden)
    vocab = int(cfg.get("vocab_size") or 0)
    tied = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    linear = layers * (hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2 + 3 * hidden * inter)
    embed = vocab * hidden * (1 if tied else 2)
    quant = config.get("quantization_config") or cfg.get("quantization_config") or None
    return {
        "architecture": (config.get("architectures") or ["?"])[0],
        "hidden_size": hidden, "layers": layers, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
        "max_position_embeddings": int(cfg.get("max_position_embeddings") or 0),
        "linear_params": linear, "embedding_params": embed, "params": linear + embed,
        "quantization": (quant or {}).get("quant_method") if quant else None,
        "quantization_config": quant,
    }


def weight_bytes(shape, fmt):
    """Estimated weight bytes for one copy of the model in a format."""
    per_linear = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "awq": 0.5 + 2.5 / 128,
                  "gptq": 0.5 + 2.5 / 128, "compressed-tensors": 0.5 + 2.5 / 128}.get(fmt, 2.0)
    return int(shape["linear_params"] * per_linear + shape["embedding_params"] * 2)


def kv_bytes_per_token(shape, tp):
    """KV-cache bytes per token on one GPU of a TP group (16-bit cache)."""
    kv_heads_per_gpu = max(1, shape["kv_heads"] // tp)
    return 2 * shape["layers"] * kv_heads_per_gpu * shape["head_dim"] * 2


def _decide(decisions, key, value, reason):
    decisions.append({"key": key, "value": value, "reason": reason})


def make_plan(gpus, p2p, config, wishes, table):  # noqa: C901 -- one decision after another, kept in order
    """Return the plan dict; raise PlanError (message names the variable) for what cannot work."""
    w = dict(DEFAULT_WISHES)
    w.update({k: v for k, v in (wishes or {}).items() if v is not None})
    decisions, warnings = [], []
    shape = model_shape(config)

    # which GPUs
    if not gpus:
        raise PlanError("no GPU in gpu_facts: vLLM needs an NVIDIA GPU with a loaded driver (see the preflight report)")
    by_index = {int(g["index"]): g for g in gpus}
    if w["gpus"] in ("all", "", None):
        used = sorted(by_index)
    else:
        used = [int(i) for i in w["gpus"]]
        missing = [i for i in used if i not in by_index]
        if missing:
            raise PlanError("vllm_service_gpus=%s names GPU(s) %s, but the host has %s"
                            % (w["gpus"], missing, sorted(by_index)))
    n = len(used)
    mems = [int(by_index[i].get("memory_total_mib") or 0) * 1024 * 1024 for i in used]
    if min(mems) <= 0:
        raise PlanError("gpu_facts reports no memory size for some GPUs; the plan cannot size the KV cache")
    mem = min(mems)
    ccs = [_cc(by_index[i].get("compute_capability")) for i in used]
    util = float(w["gpu_memory_utilization"])
    if not 0.1 <= util <= 0.98:
        raise PlanError("vllm_service_gpu_memory_utilization=%s must be between 0.1 and 0.98" % util)

    # weight format
    fmt = w["weight_format"]
    flags = []
    if fmt not in ("auto", "checkpoint", "bf16", "fp16", "fp8"):
        raise PlanError("vllm_service_weight_format=%s; choose one of auto, checkpoint, bf16, fp16, fp8" % fmt)
    if shape["quantization"]:
        if fmt not in ("auto", "checkpoint"):
            raise PlanError("vllm_service_weight_format=%s, but the model is already quantized (%s, from its "
                            "quantization_config); use auto or checkpoint" % (fmt, shape["quantization"]))
        fmt = shape["quantization"]
        _decide(decisions, "weight_format", fmt, "the checkpoint is %s-quantized: vLLM reads its quantization_config, "
                "so no --quantization flag is passed" % fmt)
    elif fmt == "checkpoint":
        raise PlanError("vllm_service_weight_format=checkpoint, but the model has no quantization_config "
                        "(run the quantize role, or choose auto, bf16, fp16 or fp8)")
    elif fmt == "auto":
        if all(c and c >= FP8_MIN_CC for c in ccs):
            fmt = "fp8"
            _decide(decisions, "weight_format", "fp8", "every GPU has FP8 tensor cores (compute capability %s): "
                    "--quantization fp8 quantizes the BF16 weights at load; %s" % (_cc_text(ccs), H200_FP8_NOTE))
        elif all(c and c >= BF16_MIN_CC for c in ccs):
            fmt = "bf16"
            _decide(decisions, "weight_format", "bf16", "no FP8 tensor cores (compute capability %s): the "
                    "checkpoint's 16-bit weights as they are" % _cc_text(ccs))
        else:
            fmt = "fp16"
            _decide(decisions, "weight_format", "fp16", "compute capability %s has no bfloat16: --dtype half"
                    % _cc_text(ccs))
    else:
        _decide(decisions, "weight_format", fmt, "vllm_service_weight_format=%s (asked)" % fmt)
        if fmt == "fp8" and not all(c and c >= FP8_MIN_CC for c in ccs):
            warnings.append("fp8 on compute capability %s: no FP8 tensor cores, vLLM falls back to weight-only FP8 "
                            "kernels (memory saving, no speed-up)" % _cc_text(ccs))
    if fmt == "fp8":
        flags += ["--quantization", "fp8"]
    elif fmt == "fp16":
        flags += ["--dtype", "half"]

    wbytes = weight_bytes(shape, fmt)

    def kv_tokens(tp):
        """Tokens of KV cache one GPU of a TP group holds after weights and headroom."""
        budget = mem * util - wbytes / tp - OVERHEAD_BYTES
        return int(max(0, budget) // kv_bytes_per_token(shape, tp))

    model_max = shape["max_position_embeddings"] or 4096
    want_len = int(w["max_model_len"] or 0)
    need_len = want_len or min(model_max, 4096)

    # tensor parallel or replicas
    mode, tp = w["mode"], int(w["tensor_parallel_size"] or 0)
    if mode not in ("auto", "replicas", "tensor_parallel"):
        raise PlanError("vllm_service_mode=%s; choose one of auto, replicas, tensor_parallel" % mode)
    if tp > n:
        raise PlanError("vllm_service_tensor_parallel_size=%d is larger than the %d GPU(s) used (%s)" % (tp, n, used))
    if tp and shape["heads"] % tp:
        raise PlanError("vllm_service_tensor_parallel_size=%d does not divide the model's %d attention heads"
                        % (tp, shape["heads"]))
    pair_codes = _pairs(used, p2p)
    p2p_ok = bool(pair_codes) and all(c == "OK" for c in pair_codes.values())
    fits_one = kv_tokens(1) >= need_len
    if mode == "replicas" or tp == 1:
        tp = 1
        if not fits_one:
            raise PlanError("vllm_service_mode=replicas: one GPU (%.1f GiB at utilization %.2f) cannot hold the "
                            "%.1f GiB of weights plus %d tokens of KV cache; use tensor_parallel"
                            % (mem / GIB, util, wbytes / GIB, need_len))
        _decide(decisions, "mode", "replicas", "asked (vllm_service_mode=replicas)")
    elif tp > 1 or mode == "tensor_parallel":
        if not tp:
            tp = _smallest_tp(shape, n, kv_tokens, need_len) or n
        if kv_tokens(tp) < need_len:
            raise PlanError("vllm_service_tensor_parallel_size=%d: %d GPU(s) cannot hold the weights plus %d tokens "
                            "of KV cache" % (tp, tp, need_len))
        _decide(decisions, "mode", "tensor_parallel", "asked: TP=%d" % tp)
    elif fits_one:
        tp = 1
        why = ("the model (%.1f GiB of %s weights) fits one GPU with room for %d tokens of KV cache"
               % (wbytes / GIB, fmt, kv_tokens(1)))
        if n > 1:
            why += ("; one replica per GPU serves twice the requests with no all-reduce between GPUs%s"
                    % ("" if p2p_ok else ", which matters here: the GPUs have no peer-to-peer path (%s), so "
                       "tensor-parallel all-reduce would go through host memory" % _pairs_text(pair_codes)))
        _decide(decisions, "mode", "replicas", why)
    else:
        tp = _smallest_tp(shape, n, kv_tokens, need_len)
        if not tp and want_len:
            best = max(kv_tokens(t) for t in (1, 2, 4, 8) if t <= n)
            raise PlanError("vllm_service_max_model_len=%d does not fit: even split over %d GPU(s) the KV-cache budget "
                            "holds about %d tokens per replica" % (want_len, n, best))
        if not tp:
            raise PlanError("the model (%.1f GiB of %s weights, %d tokens of context) does not fit the %d GPU(s) "
                            "of %.1f GiB even with tensor parallel; lower vllm_service_max_model_len, choose a "
                            "smaller vllm_service_weight_format, or quantize"
                            % (wbytes / GIB, fmt, need_len, n, mem / GIB))
        _decide(decisions, "mode", "tensor_parallel", "the model does not fit one GPU; TP=%d is the smallest split "
                "that holds the weights and %d tokens of KV cache" % (tp, need_len))
    groups = [used[k:k + tp] for k in range(0, n - n % tp, tp)]
    if n % tp:
        warnings.append("GPU(s) %s left unused: %d GPU(s) do not split into groups of %d"
                        % (used[n - n % tp:], n, tp))

    # context length and batch
    cap = kv_tokens(tp)
    if want_len:
        if want_len > cap:
            raise PlanError("vllm_service_max_model_len=%d does not fit: at TP=%d the KV-cache budget per replica "
                            "holds about %d tokens (%.1f GiB GPU x %.2f, minus %.1f GiB of weights and %.1f GiB of "
                            "headroom)" % (want_len, tp, cap, mem / GIB, util, wbytes / tp / GIB,
                                           OVERHEAD_BYTES / GIB))
        if shape["max_position_embeddings"] and want_len > shape["max_position_embeddings"]:
            raise PlanError("vllm_service_max_model_len=%d is beyond the model's max_position_embeddings (%d)"
                            % (want_len, shape["max_position_embeddings"]))
        max_len = want_len
        _decide(decisions, "max_model_len", max_len, "asked; the KV-cache budget holds about %d tokens" % cap)
    else:
        max_len = min(model_max, 32768, cap // 1024 * 1024 or cap)
        _decide(decisions, "max_model_len", max_len, "the model's limit is %d, the KV-cache budget holds about %d "
                "tokens; capped at 32768 so that several long requests fit at once" % (model_max, cap))
    want_seqs = int(w["max_num_seqs"] or 0)
    per_seq = max(1, min(int(w["tokens_per_seq"]), max_len))
    if want_seqs:
        max_seqs = want_seqs
        _decide(decisions, "max_num_seqs", max_seqs, "asked")
        if want_seqs * per_seq > cap:
            warnings.append("vllm_service_max_num_seqs=%d x %d tokens exceeds the ~%d-token KV cache: expect "
                            "preemption under full load" % (want_seqs, per_seq, cap))
    else:
        max_seqs = max(1, min(MAX_NUM_SEQS_CAP, cap // per_seq))
        _decide(decisions, "max_num_seqs", max_seqs, "%d sequences of %d tokens fill the ~%d-token KV cache "
                "without preemption (at most %d)" % (max_seqs, per_seq, cap, MAX_NUM_SEQS_CAP))

    # CUDA graphs
    if w["enforce_eager"]:
        flags.append("--enforce-eager")
        warnings.append("vllm_service_enforce_eager=true turns CUDA graphs and torch.compile off: a debug switch; "
                        "on a lent H200 it cut decode throughput 5.9-6.8x")
        _decide(decisions, "cuda_graphs", False, "vllm_service_enforce_eager=true (debug)")
    else:
        _decide(decisions, "cuda_graphs", True, "CUDA graphs stay on (no --enforce-eager): the seed's "
                "--enforce-eager cut decode throughput 5.9-6.8x on a lent H200")

    # per replica: GPUs, NCCL, NUMA, argv
    nodes = sorted({by_index[i].get("numa_node") for i in used if by_index[i].get("numa_node") is not None})
    numa_on = w["numa"] == "auto" and len(nodes) > 1
    _decide(decisions, "numa", "bind" if numa_on else "off",
            "the GPUs sit on NUMA nodes %s: each replica runs on its GPU's node" % nodes if numa_on else
            ("vllm_service_numa=off" if w["numa"] == "off" else
             "the GPUs share %s: binding would only narrow the scheduler" %
             ("NUMA node %s" % nodes[0] if nodes else "one memory domain (no NUMA information)")))
    name = w["served_model_name"] or (w["model_path"].rstrip("/").rsplit("/", 1)[-1] if w["model_path"] else "model")
    replicas = []
    for k, group in enumerate(groups):
        env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in group)}
        rflags = list(flags)
        if tp > 1:
            codes = _pairs(group, p2p)
            if not codes or any(c != "OK" for c in codes.values()):
                env["NCCL_P2P_DISABLE"] = "1"
                if vllm_options.has(table, "--disable-custom-all-reduce"):
                    rflags.append("--disable-custom-all-reduce")
                _decide(decisions, "p2p[%d]" % k, "off", "GPUs %s have no peer-to-peer path (%s): NCCL_P2P_DISABLE=1 "
                        "and vLLM's custom all-reduce off, which needs P2P" % (group, _pairs_text(codes) or "unknown"))
        node = None
        group_nodes = {by_index[i].get("numa_node") for i in group}
        if numa_on and len(group_nodes) == 1:
            node = group_nodes.pop()
        port = int(w["base_port"]) + k
        argv = ["serve", w["model_path"], "--host", w["host"], "--port", str(port), "--served-model-name", name,
                "--max-model-len", str(max_len), "--max-num-seqs", str(max_seqs),
                "--gpu-memory-utilization", "%.2f" % util]
        if tp > 1:
            argv += ["--tensor-parallel-size", str(tp)]
        if vllm_options.has(table, "--shutdown-timeout") and int(w["shutdown_timeout"]) > 0:
            argv += ["--shutdown-timeout", str(int(w["shutdown_timeout"]))]
        argv += rflags
        replicas.append({"name": str(k), "gpus": group, "port": port, "numa_node": node,
                         "cpus": by_index[group[0]].get("cpu_affinity") if node is not None else None,
                         "env": env, "argv": argv + [str(a) for a in w["extra_args"]]})

    errors = vllm_options.validate(replicas[0]["argv"][2:len(replicas[0]["argv"]) - len(w["extra_args"])], table,
                                   "the serving plan")
    errors += vllm_options.validate(list(w["extra_args"]), table, "vllm_service_extra_args", refuse_owned=True)
    if errors:
        raise PlanError("; ".join(errors))
    return {
        "mode": "tensor_parallel" if tp > 1 else "replicas",
        "tensor_parallel_size": tp,
        "weight_format": fmt,
        "max_model_len": max_len,
        "max_num_seqs": max_seqs,
        "served_model_name": name,
        "replicas": replicas,
        "decisions": decisions,
        "warnings": warnings,
        "estimates": {"params": shape["params"], "weight_gib": round(wbytes / GIB, 2),
                      "kv_bytes_per_token": kv_bytes_per_token(shape, tp), "kv_tokens_per_replica": cap,
                      "gpu_memory_gib": round(mem / GIB, 1)},
        "model": {k: shape[k] for k in ("architecture", "layers", "heads", "kv_heads", "head_dim",
                                        "max_position_embeddings", "quantization")},
        "vllm_version": table.get("vllm_version"),
    }


def _smallest_tp(shape, n, kv_tokens, need_len):
    for tp in (2, 4, 8):
        if tp <= n and shape["heads"] % tp == 0 and kv_tokens(tp) >= need_len:
            return tp
    return 0


def _pairs(group, p2p):
    out = {}
    for a in group:
        for b in group:
            if a < b:
                code = (p2p or {}).get("%d,%d" % (a, b))
                if code is not None:
                    out["%d,%d" % (a, b)] = code
    return out


def _pairs_text(codes):
    return ", ".join("%s: %s" % kv for kv in sorted(codes.items()))


def _cc_text(ccs):
    return "/".join(sorted({"%d.%d" % c for c in ccs if c})) or "unknown"
