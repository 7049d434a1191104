# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The serving plan: GPU facts + model config + the user's wishes -> how vLLM runs, with reasons.

One pure function, ``make_plan``, in named steps run in order: the GPUs, the weight format, the KV
cache's value type when asked, tensor parallel or replicas, the KV cache's value type for the load (where the
budget binds), context length and batch, CUDA graphs, NUMA, and the
replicas with their `vllm serve` options (checked against the option table of the profile's vLLM version). Each step
records its decisions and their reasons, and its warnings, on one ``_Plan``. The model path and
the options are returned apart: the command is ``vllm serve <model_path> <options...>``.
Memory figures are estimates from the model's shape (vLLM measures the real ones at start-up);
they exist to refuse what cannot fit and to pick sane defaults, not to replace vLLM's profiler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options

GIB = 1024 ** 3
# Headroom per GPU beyond weights and KV cache: activations at the profiled batch, CUDA graphs,
# the CUDA context and NCCL buffers. vLLM measures it at start; this is a conservative estimate.
OVERHEAD_BYTES = 2 * GIB
FP8_MIN_CC = (8, 9)      # FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell
BF16_MIN_CC = (8, 0)
MAX_NUM_SEQS_CAP = 256   # vLLM's default scheduler limit in the 0.6 series
# The vLLM version an FP8 KV cache was measured with (tests/fixtures/bench/vllm-0.25.0-h200-4090budget).
FP8_KV_MEASURED_FROM = (0, 25)
H200_FP8_NOTE = ("on a lent H200 with a Qwen3-4B-shaped model the plan with FP8 weights gave 1.14x vLLM's defaults under "
                 "mixed load at 0.73x their P95 TTFT, and 1.26x in single-stream decode (vLLM 0.25.0, the seed's "
                 "protocol through playbooks/benchmark.yml's code; tests/fixtures/bench/vllm-0.25.0-h200-run2)")
KV_FP8_NOTE = ("on a lent H200 held to an RTX 4090's memory budget (--gpu-memory-utilization 0.1538), FP8 KV doubled "
               "the cache (237,520 tokens, against 118,768) and the plan's 55 sequences to 110: 1.40x the 16-bit "
               "cache under mixed load at 0.68x its P95 TTFT (1.53x vLLM's defaults at 0.83x theirs), but 0.96x in "
               "single-stream decode and 0.97x in prefill (and 0.97x single-stream on a whole H200); its quality "
               "cost was not measured (random weights). vLLM 0.25.0; "
               "tests/fixtures/bench/vllm-0.25.0-h200-4090budget")

# The wishes' allowed values: the module's argument spec takes its choices from here.
WISH_CHOICES = {
    "mode": ["auto", "replicas", "tensor_parallel"],
    "weight_format": ["auto", "checkpoint", "bf16", "fp16", "fp8"],
    "numa": ["auto", "off"],
    "kv_cache_dtype": ["auto", "fp8", "model"],
    "goal": ["throughput", "latency"],
}

DEFAULT_WISHES = {
    "gpus": "all",                 # "all" or a list of GPU indices
    "mode": "auto",                # WISH_CHOICES["mode"]
    "tensor_parallel_size": 0,     # 0: decided
    "weight_format": "auto",       # WISH_CHOICES["weight_format"]
    "kv_cache_dtype": "auto",      # WISH_CHOICES["kv_cache_dtype"]: auto is decided by the goal and the budget
    "goal": "throughput",          # WISH_CHOICES["goal"]: most users at once, or the lowest single-stream latency
    "max_model_len": 0,            # 0: decided
    "max_num_seqs": 0,             # 0: decided
    "tokens_per_seq": 2048,        # typical prompt + output, for max_num_seqs
    "gpu_memory_utilization": 0.90,
    "enforce_eager": False,
    "numa": "auto",                # WISH_CHOICES["numa"]
    "host": "127.0.0.1",
    "base_port": 8000,
    "served_model_name": "",
    "model_path": "",
    "shutdown_timeout": 30,
    "extra_args": [],
}


class PlanError(Exception):
    pass


class _Plan:
    """What the steps share: the wishes, the model's shape, the option table, and what was decided so far."""

    def __init__(self, wishes, config, table):
        self.w = dict(DEFAULT_WISHES)
        self.w.update({k: v for k, v in (wishes or {}).items() if v is not None})
        for key, allowed in WISH_CHOICES.items():
            if self.w[key] not in allowed:
                raise PlanError("vllm_service_%s=%s; choose one of %s" % (key, self.w[key], ", ".join(allowed)))
        self.shape = model_shape(config)
        self.table = table
        self.kv_value_bytes = 2
        self.decisions, self.warnings, self.flags = [], [], []

    def decide(self, key, value, reason):
        self.decisions.append({"key": key, "value": value, "reason": reason})

    def warn(self, text):
        self.warnings.append(text)

    def kv_tokens(self, tp):
        """Tokens of KV cache one GPU of a TP group holds after weights and headroom."""
        budget = self.mem * self.util - self.wbytes / tp - OVERHEAD_BYTES
        return int(max(0, budget) // kv_bytes_per_token(self.shape, tp, self.kv_value_bytes))


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


def kv_bytes_per_token(shape, tp, value_bytes=2):
    """KV-cache bytes per token on one GPU of a TP group (2 bytes per value: a 16-bit cache; 1: FP8)."""
    kv_heads_per_gpu = max(1, shape["kv_heads"] // tp)
    return 2 * shape["layers"] * kv_heads_per_gpu * shape["head_dim"] * value_bytes


def make_plan(gpus, p2p, config, wishes, table):
    """Return the plan dict; raise PlanError (message names the variable) for what cannot work."""
    plan = basis(gpus, config, wishes, table)
    choose_parallelism(plan, p2p)
    choose_kv_cache_for_load(plan)
    size_context_and_batch(plan)
    choose_cuda_graphs(plan)
    choose_numa(plan)
    replicas = build_replicas(plan, p2p)
    add_extra_args(plan, replicas)
    check_unit_lines(plan, replicas)
    return _result(plan, replicas)


def basis(gpus, config, wishes, table):
    """Steps 1 to 3, shared with the plan across hosts (cluster_plan.py): the GPUs, the weights' format, the KV
    cache's value type asked for, and the context the plan must hold (need_len)."""
    plan = _Plan(wishes, config, table)
    select_gpus(plan, gpus)
    choose_weight_format(plan)
    choose_kv_cache(plan)
    context_wanted(plan)
    return plan


def context_wanted(plan):
    """The context asked for (want_len, 0: decided) and the least the KV cache must hold (need_len)."""
    plan.want_len = int(plan.w["max_model_len"] or 0)
    plan.need_len = plan.want_len or min(plan.shape["max_position_embeddings"] or 4096, 4096)


# One argument of the unit's command line: systemd splits VLLM_ARGS at whitespace and would expand $.
UNIT_ARG = re.compile(r"[^\s\"'\\$`]+\Z")


def check_unit_lines(plan, replicas):
    """Last step: every replica on a port that exists, and every argument one the unit carries as it is."""
    last = max(r["port"] for r in replicas) if replicas else 0
    if last > 65535:
        raise PlanError("vllm_service_base_port=%s with %d replica(s) puts the last one on port %d; ports go up to "
                        "65535. Choose a lower vllm_service_base_port." % (plan.w["base_port"], len(replicas), last))
    args = [str(a) for a in [plan.model_path] + [o for r in replicas for o in r["options"]]]
    unsafe = [a for i, a in enumerate(args) if not UNIT_ARG.match(a) and a not in args[:i]]
    if unsafe:
        raise PlanError("vllm_service_model_path / vllm_service_served_model_name / vllm_service_extra_args: arguments "
                        "with spaces, quotes, $ or backslashes cannot be passed safely through the unit: %s" % unsafe)


def select_gpus(plan, gpus):
    """Step 1: the GPUs used, their smallest memory and their compute capabilities."""
    if not gpus:
        raise PlanError("no GPU in gpu_facts: vLLM needs an NVIDIA GPU with a loaded driver (see the host report: make host-report)")
    plan.by_index = {int(g["index"]): g for g in gpus}
    wanted = plan.w["gpus"]
    if wanted in ("all", "", None):
        plan.used = sorted(plan.by_index)
    else:
        plan.used = [int(i) for i in wanted]
        missing = [i for i in plan.used if i not in plan.by_index]
        if missing:
            raise PlanError("vllm_service_gpus=%s names GPU(s) %s, but the host has %s"
                            % (wanted, missing, sorted(plan.by_index)))
    mems = [int(plan.by_index[i].get("memory_total_mib") or 0) * 1024 * 1024 for i in plan.used]
    if min(mems) <= 0:
        raise PlanError("gpu_facts reports no memory size for some GPUs; the plan cannot size the KV cache")
    plan.mem = min(mems)
    plan.ccs = [_cc(plan.by_index[i].get("compute_capability")) for i in plan.used]
    plan.util = float(plan.w["gpu_memory_utilization"])
    if not 0.1 <= plan.util <= 0.98:
        raise PlanError("vllm_service_gpu_memory_utilization=%s must be between 0.1 and 0.98" % plan.util)


def choose_weight_format(plan):
    """Step 2: the checkpoint's own quantization, the asked format, or the best the GPUs run."""
    fmt, quant, ccs = plan.w["weight_format"], plan.shape["quantization"], plan.ccs
    if quant:
        if fmt not in ("auto", "checkpoint"):
            raise PlanError("vllm_service_weight_format=%s, but the model is already quantized (%s, from its "
                            "quantization_config); use auto or checkpoint" % (fmt, quant))
        fmt = quant
        plan.decide("weight_format", fmt, "the checkpoint is %s-quantized: vLLM reads its quantization_config, "
                    "so no --quantization flag is passed" % fmt)
    elif fmt == "checkpoint":
        raise PlanError("vllm_service_weight_format=checkpoint, but the model has no quantization_config "
                        "(run the quantize role, or choose auto, bf16, fp16 or fp8)")
    elif fmt == "auto":
        fmt = _best_format(plan)
    else:
        plan.decide("weight_format", fmt, "vllm_service_weight_format=%s (asked)" % fmt)
        if fmt == "fp8" and not _all_at_least(ccs, FP8_MIN_CC):
            plan.warn("fp8 on compute capability %s: no FP8 tensor cores, vLLM falls back to weight-only FP8 "
                      "kernels (memory saving, no speed-up)" % _cc_text(ccs))
    plan.flags += {"fp8": ["--quantization", "fp8"], "fp16": ["--dtype", "half"]}.get(fmt, [])
    plan.fmt = fmt
    plan.wbytes = weight_bytes(plan.shape, fmt)


def choose_kv_cache(plan):
    """Step 3: the KV cache's value type when it is asked for (it may change the tensor-parallel size): FP8 halves
    each token's bytes, so the later steps size the context and the batch for twice the tokens. auto is decided
    after the parallelism, where the budget is known (choose_kv_cache_for_load)."""
    plan.kv_dtype = plan.w["kv_cache_dtype"]
    if plan.kv_dtype == "fp8":
        _use_fp8_kv(plan)
        plan.decide("kv_cache_dtype", "fp8", "vllm_service_kv_cache_dtype=fp8 (asked): one byte per value, twice "
                    "the tokens in the same memory; %s" % KV_FP8_NOTE)
        if not _all_at_least(plan.ccs, FP8_MIN_CC):
            plan.warn("an FP8 KV cache on compute capability %s (no FP8 tensor cores) was never measured here"
                      % _cc_text(plan.ccs))
    elif plan.kv_dtype == "model":
        plan.decide("kv_cache_dtype", "model", "vllm_service_kv_cache_dtype=model (asked): a 16-bit KV cache, the "
                    "model's dtype")


def _use_fp8_kv(plan):
    plan.kv_value_bytes = 1
    plan.flags += ["--kv-cache-dtype", "fp8"]


def choose_kv_cache_for_load(plan):
    """Step 4b, for kv_cache_dtype=auto: where the KV budget binds (fewer sequences of tokens_per_seq fit the 16-bit
    cache than the scheduler would run at once) and the goal is throughput, an FP8 cache: the lever measured best
    under load on a 4090's budget. Otherwise the model's 16-bit cache, with the reason."""
    if plan.kv_dtype != "auto":
        return
    per_seq = max(1, int(plan.w["tokens_per_seq"]))
    fits = plan.kv_tokens(plan.tp) // per_seq
    why_not = _why_not_fp8_kv(plan, fits, per_seq)
    if why_not:
        plan.kv_dtype = "model"
        plan.decide("kv_cache_dtype", "model", "a 16-bit KV cache (the model's dtype): %s" % why_not)
        return
    _use_fp8_kv(plan)
    plan.kv_dtype = "fp8"
    plan.decide("kv_cache_dtype", "fp8", "the 16-bit KV cache holds %d sequences of %d tokens, fewer than the %d "
                "the scheduler runs at once, so the cache binds: an FP8 cache holds twice as many (goal throughput; "
                "vllm_service_goal=latency or vllm_service_kv_cache_dtype=model keeps 16 bits); %s"
                % (fits, per_seq, MAX_NUM_SEQS_CAP, KV_FP8_NOTE))


def _why_not_fp8_kv(plan, fits, per_seq):
    """Why the 16-bit cache stays, in words; None when FP8 is the choice."""
    if plan.w["goal"] == "latency":
        return ("vllm_service_goal=latency: single-stream decode and prefill ran 0.96x and 0.97x with an FP8 cache, "
                "measured")
    if fits >= MAX_NUM_SEQS_CAP:
        return ("it holds %d sequences of %d tokens, no fewer than the %d the scheduler runs at once: the budget does "
                "not bind" % (fits, per_seq, MAX_NUM_SEQS_CAP))
    if not _all_at_least(plan.ccs, FP8_MIN_CC):
        return ("the budget binds (%d sequences of %d tokens), but compute capability %s has no FP8 tensor cores, "
                "where an FP8 cache was never measured" % (fits, per_seq, _cc_text(plan.ccs)))
    version = str(plan.table.get("vllm_version", "?"))
    if _version(version) < FP8_KV_MEASURED_FROM:
        return ("the budget binds (%d sequences of %d tokens), but an FP8 cache was measured with vLLM 0.25.0, not %s "
                "(vLLM 0.6's FlashAttention backend has none: its attention would move to xFormers); "
                "vllm_service_kv_cache_dtype=fp8 asks for it" % (fits, per_seq, version))
    return None


def _version(text):
    try:
        return tuple(int(part) for part in text.split(".")[:2])
    except ValueError:
        return (0, 0)


def _best_format(plan):
    ccs = plan.ccs
    if _all_at_least(ccs, FP8_MIN_CC):
        plan.decide("weight_format", "fp8", "every GPU has FP8 tensor cores (compute capability %s): "
                    "--quantization fp8 quantizes the BF16 weights at load; %s" % (_cc_text(ccs), H200_FP8_NOTE))
        return "fp8"
    if _all_at_least(ccs, BF16_MIN_CC):
        plan.decide("weight_format", "bf16", "no FP8 tensor cores (compute capability %s): the "
                    "checkpoint's 16-bit weights as they are" % _cc_text(ccs))
        return "bf16"
    plan.decide("weight_format", "fp16", "compute capability %s has no bfloat16: --dtype half" % _cc_text(ccs))
    return "fp16"


def choose_parallelism(plan, p2p):
    """Step 4: the tensor-parallel size, asked or decided, and the GPU groups it makes."""
    w, n = plan.w, len(plan.used)
    context_wanted(plan)
    tp = int(w["tensor_parallel_size"] or 0)
    if tp > n:
        raise PlanError("vllm_service_tensor_parallel_size=%d is larger than the %d GPU(s) used (%s)"
                        % (tp, n, plan.used))
    if tp and plan.shape["heads"] % tp:
        raise PlanError("vllm_service_tensor_parallel_size=%d does not divide the model's %d attention heads"
                        % (tp, plan.shape["heads"]))
    if w["mode"] == "replicas" or tp == 1:
        plan.tp = _asked_replicas(plan)
    elif tp > 1 or w["mode"] == "tensor_parallel":
        plan.tp = _asked_tensor_parallel(plan, tp)
    elif plan.kv_tokens(1) >= plan.need_len:
        plan.tp = _decided_replicas(plan, gpu_pairs(plan.used, p2p))
    else:
        plan.tp = _decided_tensor_parallel(plan)
    tp = plan.tp
    plan.groups = [plan.used[k:k + tp] for k in range(0, n - n % tp, tp)]
    if n % tp:
        plan.warn("GPU(s) %s left unused: %d GPU(s) do not split into groups of %d" % (plan.used[n - n % tp:], n, tp))


def _asked_replicas(plan):
    if plan.kv_tokens(1) < plan.need_len:
        raise PlanError("vllm_service_mode=replicas: one GPU (%.1f GiB at utilization %.2f) cannot hold the "
                        "%.1f GiB of weights plus %d tokens of KV cache; use tensor_parallel"
                        % (plan.mem / GIB, plan.util, plan.wbytes / GIB, plan.need_len))
    plan.decide("mode", "replicas", "asked (vllm_service_mode=replicas)")
    return 1


def _asked_tensor_parallel(plan, tp):
    tp = tp or _smallest_tp(plan) or len(plan.used)
    if plan.kv_tokens(tp) < plan.need_len:
        raise PlanError("vllm_service_tensor_parallel_size=%d: %d GPU(s) cannot hold the weights plus %d tokens "
                        "of KV cache" % (tp, tp, plan.need_len))
    plan.decide("mode", "tensor_parallel", "asked: TP=%d" % tp)
    return tp


def _decided_replicas(plan, pair_codes):
    why = ("the model (%.1f GiB of %s weights) fits one GPU with room for %d tokens of KV cache"
           % (plan.wbytes / GIB, plan.fmt, plan.kv_tokens(1)))
    if len(plan.used) > 1:
        p2p_ok = bool(pair_codes) and all(c == "OK" for c in pair_codes.values())
        why += ("; one replica per GPU serves twice the requests with no all-reduce between GPUs%s"
                % ("" if p2p_ok else ", which matters here: the GPUs have no peer-to-peer path (%s), so "
                   "tensor-parallel all-reduce would go through host memory" % _pairs_text(pair_codes)))
    plan.decide("mode", "replicas", why)
    return 1


def _decided_tensor_parallel(plan):
    n, tp = len(plan.used), _smallest_tp(plan)
    if not tp and plan.want_len:
        best = max(plan.kv_tokens(t) for t in (1, 2, 4, 8) if t <= n)
        raise PlanError("vllm_service_max_model_len=%d does not fit: even split over %d GPU(s) the KV-cache budget "
                        "holds about %d tokens per replica" % (plan.want_len, n, best))
    if not tp:
        raise PlanError("the model (%.1f GiB of %s weights, %d tokens of context) does not fit the %d GPU(s) "
                        "of %.1f GiB even with tensor parallel; lower vllm_service_max_model_len, choose a "
                        "smaller vllm_service_weight_format, or quantize"
                        % (plan.wbytes / GIB, plan.fmt, plan.need_len, n, plan.mem / GIB))
    plan.decide("mode", "tensor_parallel", "the model does not fit one GPU; TP=%d is the smallest split "
                "that holds the weights and %d tokens of KV cache" % (tp, plan.need_len))
    return tp


def size_context_and_batch(plan):
    """Step 5: --max-model-len and --max-num-seqs within the KV-cache budget of one replica."""
    plan.cap = cap = plan.kv_tokens(plan.tp)
    plan.max_len = _context_length(plan, cap)
    want_seqs = int(plan.w["max_num_seqs"] or 0)
    per_seq = max(1, min(int(plan.w["tokens_per_seq"]), plan.max_len))
    if want_seqs:
        plan.max_seqs = want_seqs
        plan.decide("max_num_seqs", want_seqs, "asked")
        if want_seqs * per_seq > cap:
            plan.warn("vllm_service_max_num_seqs=%d x %d tokens exceeds the ~%d-token KV cache: expect "
                      "preemption under full load" % (want_seqs, per_seq, cap))
    else:
        plan.max_seqs = max(1, min(MAX_NUM_SEQS_CAP, cap // per_seq))
        plan.decide("max_num_seqs", plan.max_seqs, "%d sequences of %d tokens fill the ~%d-token KV cache "
                    "without preemption (at most %d)" % (plan.max_seqs, per_seq, cap, MAX_NUM_SEQS_CAP))


def _context_length(plan, cap):
    want, limit = plan.want_len, plan.shape["max_position_embeddings"]
    if not want:
        model_max = limit or 4096
        max_len = min(model_max, 32768, cap // 1024 * 1024 or cap)
        plan.decide("max_model_len", max_len, "the model's limit is %d, the KV-cache budget holds about %d "
                    "tokens; capped at 32768 so that several long requests fit at once" % (model_max, cap))
        return max_len
    if want > cap:
        raise PlanError("vllm_service_max_model_len=%d does not fit: at TP=%d the KV-cache budget per replica "
                        "holds about %d tokens (%.1f GiB GPU x %.2f, minus %.1f GiB of weights and %.1f GiB of "
                        "headroom)" % (want, plan.tp, cap, plan.mem / GIB, plan.util, plan.wbytes / plan.tp / GIB,
                                       OVERHEAD_BYTES / GIB))
    if limit and want > limit:
        raise PlanError("vllm_service_max_model_len=%d is beyond the model's max_position_embeddings (%d)"
                        % (want, limit))
    plan.decide("max_model_len", want, "asked; the KV-cache budget holds about %d tokens" % cap)
    return want


def choose_cuda_graphs(plan):
    """Step 6: CUDA graphs stay on; --enforce-eager only when asked, with a warning."""
    if plan.w["enforce_eager"]:
        plan.flags.append("--enforce-eager")
        plan.warn("vllm_service_enforce_eager=true turns CUDA graphs and torch.compile off: a debug switch; "
                  "on a lent H200 it cut decode throughput 5.9-6.8x")
        plan.decide("cuda_graphs", False, "vllm_service_enforce_eager=true (debug)")
    else:
        plan.decide("cuda_graphs", True, "CUDA graphs stay on (no --enforce-eager): the seed's "
                    "--enforce-eager cut decode throughput 5.9-6.8x on a lent H200")


def choose_numa(plan):
    """Step 7: bind each replica to its GPU's node when the GPUs sit on several."""
    nodes = sorted({plan.by_index[i].get("numa_node") for i in plan.used
                    if plan.by_index[i].get("numa_node") is not None})
    plan.numa_on = plan.w["numa"] == "auto" and len(nodes) > 1
    if plan.numa_on:
        why = "the GPUs sit on NUMA nodes %s: each replica runs on its GPU's node" % nodes
    elif plan.w["numa"] == "off":
        why = "vllm_service_numa=off"
    else:
        why = ("the GPUs share %s: binding would only narrow the scheduler"
               % ("NUMA node %s" % nodes[0] if nodes else "one memory domain (no NUMA information)"))
    plan.decide("numa", "bind" if plan.numa_on else "off", why)


def build_replicas(plan, p2p):
    """Step 8: one replica per GPU group, with its port, environment, NUMA node and options."""
    w = plan.w
    plan.model_path = w["model_path"]
    plan.name = w["served_model_name"] or (plan.model_path.rstrip("/").rsplit("/", 1)[-1] if plan.model_path
                                           else "model")
    return [_replica(plan, k, group, p2p) for k, group in enumerate(plan.groups)]


def _replica(plan, k, group, p2p):
    env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in group)}
    flags = list(plan.flags)
    if plan.tp > 1:
        codes = gpu_pairs(group, p2p)
        if not codes or any(c != "OK" for c in codes.values()):
            env["NCCL_P2P_DISABLE"] = "1"
            if vllm_options.has(plan.table, "--disable-custom-all-reduce"):
                flags.append("--disable-custom-all-reduce")
            plan.decide("p2p[%d]" % k, "off", "GPUs %s have no peer-to-peer path (%s): NCCL_P2P_DISABLE=1 "
                        "and vLLM's custom all-reduce off, which needs P2P" % (group, _pairs_text(codes) or "unknown"))
    group_nodes = {plan.by_index[i].get("numa_node") for i in group}
    node = group_nodes.pop() if plan.numa_on and len(group_nodes) == 1 else None
    port = int(plan.w["base_port"]) + k
    return {"name": str(k), "gpus": group, "port": port, "numa_node": node,
            "cpus": plan.by_index[group[0]].get("cpu_affinity") if node is not None else None,
            "env": env, "options": _options(plan, port) + flags}


def _options(plan, port):
    w = plan.w
    opts = ["--host", w["host"], "--port", str(port), "--served-model-name", plan.name,
            "--max-model-len", str(plan.max_len), "--max-num-seqs", str(plan.max_seqs),
            "--gpu-memory-utilization", "%.2f" % plan.util]
    if plan.tp > 1:
        opts += ["--tensor-parallel-size", str(plan.tp)]
    if vllm_options.has(plan.table, "--shutdown-timeout") and int(w["shutdown_timeout"]) > 0:
        opts += ["--shutdown-timeout", str(int(w["shutdown_timeout"]))]
    return opts


def add_extra_args(plan, replicas):
    """Step 9: the plan's own options, and the user's, checked against the real parser of the profile's vLLM;
    the user's go after the plan's on every replica."""
    extra = [str(a) for a in plan.w["extra_args"]]
    errors = vllm_options.validate(list(replicas[0]["options"]), plan.table, "the serving plan")
    errors += vllm_options.validate(extra, plan.table, "vllm_service_extra_args", refuse_owned=True)
    if errors:
        raise PlanError("; ".join(errors))
    for r in replicas:
        r["options"] += extra


def _result(plan, replicas):
    shape = plan.shape
    return {
        "mode": "tensor_parallel" if plan.tp > 1 else "replicas",
        "tensor_parallel_size": plan.tp,
        "weight_format": plan.fmt,
        "kv_cache_dtype": plan.kv_dtype,
        "max_model_len": plan.max_len,
        "max_num_seqs": plan.max_seqs,
        "served_model_name": plan.name,
        "model_path": plan.model_path,
        "replicas": replicas,
        "decisions": plan.decisions,
        "warnings": plan.warnings,
        "estimates": {"params": shape["params"], "weight_gib": round(plan.wbytes / GIB, 2),
                      "kv_bytes_per_token": kv_bytes_per_token(shape, plan.tp, plan.kv_value_bytes),
                      "kv_tokens_per_replica": plan.cap,
                      "gpu_memory_gib": round(plan.mem / GIB, 1)},
        "model": {k: shape[k] for k in ("architecture", "layers", "heads", "kv_heads", "head_dim",
                                        "max_position_embeddings", "quantization")},
        "vllm_version": plan.table.get("vllm_version"),
    }


def _smallest_tp(plan):
    for tp in (2, 4, 8):
        if tp <= len(plan.used) and plan.shape["heads"] % tp == 0 and plan.kv_tokens(tp) >= plan.need_len:
            return tp
    return 0


def _all_at_least(ccs, minimum):
    return all(c and c >= minimum for c in ccs)


def gpu_pairs(group, p2p):
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
