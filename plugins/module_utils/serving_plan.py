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

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.llmhost.vllm.plugins.module_utils import (
    evidence, input_types, layouts, typos, value_checks, vllm_options, wishes)
from ansible_collections.llmhost.vllm.plugins.module_utils.evidence import H200_FP8_NOTE, KV_FP8_NOTE
from ansible_collections.llmhost.vllm.plugins.module_utils.model_memory import (
    GIB, LOAD_MARGIN, kv_bytes_per_token, loaded_bytes, model_shape)

# Headroom per GPU beyond weights and KV cache: activations at the profiled batch, the CUDA context and NCCL buffers.
# vLLM measures it at start; measured beside weights and KV at a 4090's budget: 1.02-1.95 GiB (3B to 32B AWQ,
# tests/fixtures/device/vllm-0.25.0-plans-4090budget).
OVERHEAD_BYTES = 2 * GIB
FP8_MIN_CC = (8, 9)      # FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell
BF16_MIN_CC = (8, 0)
MAX_NUM_SEQS_CAP = layouts.MAX_NUM_SEQS_CAP
# The wishes (each vllm_service_<wish> variable: type, default, range or choices, the options it owns) have one
# home: module_utils/wishes.py.
# The smallest context the plan holds when none is asked (vllm_service_max_model_len=0), or the model's own limit.
MIN_CONTEXT = 4096


class PlanError(Exception):
    pass


def wish_errors(given):
    """The first play's sentences for the wishes: a wrong type or choice (input_types, as the first play's type check
    says it), else a number out of its range (value_checks.range_errors, as the role's table says it), else a list
    given as something else (value_checks.list_errors: the role's table takes no comma-separated text)."""
    out = []
    for key, wish in wishes.WISHES.items():
        name, value = wishes.PREFIX + key, given.get(key)
        problem = input_types.problem(name, value, wishes.spec(key))
        if problem:
            out.append(problem)
        elif value is None:     # left out: its default
            continue
        elif "range" in wish:
            out += value_checks.range_errors({name: [value] + list(wish["range"])})
        elif wish["type"] == "list":
            out += value_checks.list_errors({name: value})
    return out


def typed_wishes(given):
    """The wishes with their defaults (for those left out or null), checked, then converted to their types by
    Ansible's own validator, as the first play's type check reads them: digits ("64", from `-e`) become a whole
    number, a boolean word a boolean, a list's items strings. The plan's one type check, in the first play's words."""
    w = dict(wishes.DEFAULT_WISHES, **(given or {}))
    errors = ["wishes: %s is not a wish of the plan%s" % (k, typos.hint(k, wishes.WISHES))
              for k in sorted(set(w) - set(wishes.DEFAULT_WISHES))]
    errors += wish_errors(w)      # a null as the first play judges it: a boolean's is refused, the others' not
    if errors:
        raise PlanError("; ".join(errors))
    w.update({k: wishes.DEFAULT_WISHES[k] for k, v in w.items() if v is None})
    specs = {k: wishes.spec(k) for k in wishes.WISHES}
    return dict(w, **ArgumentSpecValidator(specs).validate({k: w[k] for k in specs}).validated_parameters)


class _Plan:
    """What the steps share: the wishes, the model's shape, the option table, and what was decided so far."""

    def __init__(self, asked, config, table):
        self.w = typed_wishes(asked)
        self.shape = model_shape(config)
        self.table = table
        self.kv_value_bytes = 2
        self.kv_dtype = self.w["kv_cache_dtype"]
        self.decisions, self.warnings, self.flags = [], [], []

    def decide(self, key, value, reason):
        self.decisions.append({"key": key, "value": value, "reason": reason})

    def warn(self, text):
        self.warnings.append(text)

    def kv_tokens(self, tp, sure=False):
        """Tokens of KV cache one GPU of a TP group holds after weights and headroom; ``sure``: with LOAD_MARGIN of
        the weights kept in reserve, for what must fit for vLLM to start (the context)."""
        weights = self.wbytes / tp * (1 + (LOAD_MARGIN if sure else 0))
        budget = self.mem * self.util - weights - OVERHEAD_BYTES
        return int(max(0, budget) // kv_bytes_per_token(self.shape, tp, self.kv_value_bytes))


def _cc(text):
    try:
        major, minor = str(text).split(".")[:2]
        return int(major), int(minor)
    except (ValueError, AttributeError):
        return None


def make_plan(gpus, p2p, config, wishes, table):
    """Return the plan dict; raise PlanError (message names the variable) for what cannot work."""
    plan = basis(gpus, config, wishes, table)
    choose_parallelism(plan, p2p)
    choose_kv_cache_for_load(plan)
    check_pair(plan)
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
    plan.need_len = plan.want_len or min(plan.shape["max_position_embeddings"] or MIN_CONTEXT, MIN_CONTEXT)


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
    plan.util = float(plan.w["gpu_memory_utilization"])   # in wishes.py with its range: checked with the other wishes


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
        not_measured = evidence.lever_not_measured("fp8_weights", _vllm(plan)) if fmt == "fp8" else None
        if not_measured:
            plan.warn("vllm_service_weight_format=fp8: %s" % not_measured)
        if fmt == "fp8" and not _all_at_least(ccs, FP8_MIN_CC):
            plan.warn("fp8 on compute capability %s: no FP8 tensor cores, vLLM falls back to weight-only FP8 "
                      "kernels (memory saving, no speed-up)" % _cc_text(ccs))
    plan.flags += {"fp8": ["--quantization", "fp8"], "fp16": ["--dtype", "half"]}.get(fmt, [])
    plan.fmt = fmt
    plan.wbytes = loaded_bytes(plan.shape, fmt)


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
        not_measured = evidence.lever_not_measured("fp8_kv", _vllm(plan))
        if not_measured:
            plan.warn("vllm_service_kv_cache_dtype=fp8: %s" % not_measured)
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
    why = (evidence.lever_not_measured("fp8_kv", _vllm(plan))
           or evidence.pair_unproven(plan.fmt, "fp8", _vllm(plan)))
    if why:
        return ("the budget binds (%d sequences of %d tokens), but %s; vllm_service_kv_cache_dtype=fp8 asks for it"
                % (fits, per_seq, why))
    return None


def _vllm(plan):
    return str(plan.table.get("vllm_version", "?"))


def check_pair(plan):
    """Step 4c: the weight format and KV-cache type have been served together (module_utils/evidence.py); a pair
    that has not is served as asked, with a warning naming what is unproven."""
    why = evidence.pair_unproven(plan.fmt, plan.kv_dtype, _vllm(plan))
    if why:
        plan.warn("not known to start: %s; vLLM's start-up will tell (journalctl -u 'vllm@*')" % why)


def _best_format(plan):
    ccs = plan.ccs
    not_measured = evidence.lever_not_measured("fp8_weights", _vllm(plan))
    if _all_at_least(ccs, FP8_MIN_CC) and not not_measured:
        plan.decide("weight_format", "fp8", "every GPU has FP8 tensor cores (compute capability %s): "
                    "--quantization fp8 quantizes the BF16 weights at load; %s" % (_cc_text(ccs), H200_FP8_NOTE))
        return "fp8"
    if _all_at_least(ccs, FP8_MIN_CC):
        plan.decide("weight_format", "bf16", "the checkpoint's 16-bit weights as they are: %s "
                    "(vllm_service_weight_format=fp8 asks for them)" % not_measured)
        return "bf16"
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
    else:
        plan.tp = _decided_layout(plan, gpu_pairs(plan.used, p2p))
    tp = plan.tp
    plan.groups = [plan.used[k:k + tp] for k in range(0, n - n % tp, tp)]
    if n % tp:
        plan.warn("GPU(s) %s left unused: %d GPU(s) do not split into groups of %d" % (plan.used[n - n % tp:], n, tp))


def _asked_replicas(plan):
    if plan.kv_tokens(1, sure=True) < plan.need_len:
        raise PlanError("vllm_service_mode=replicas: one GPU (%.1f GiB at utilization %.2f) cannot hold the "
                        "%.1f GiB of weights plus %d tokens of KV cache; use tensor_parallel"
                        % (plan.mem / GIB, plan.util, plan.wbytes / GIB, plan.need_len))
    plan.decide("mode", "replicas", "asked (vllm_service_mode=replicas)")
    return 1


def _asked_tensor_parallel(plan, tp):
    tp = tp or _smallest_tp(plan) or len(plan.used)
    if plan.kv_tokens(tp, sure=True) < plan.need_len:
        raise PlanError("vllm_service_tensor_parallel_size=%d: %d GPU(s) cannot hold the weights plus %d tokens "
                        "of KV cache" % (tp, tp, plan.need_len))
    plan.decide("mode", "tensor_parallel", "asked: TP=%d" % tp)
    return tp


def _decided_layout(plan, pair_codes):
    """Every layout that holds the weights and the context, compared by what it serves (module_utils/layouts.py);
    the goal picks. None fits: the refusal names the figures. With kv_cache_dtype=auto, the layouts are compared with
    the cache the plan would take under load (FP8 where it may: choose_kv_cache_for_load)."""
    fp8_kv = plan.kv_dtype == "auto" and not _why_not_fp8_kv(plan, 0, 1)
    plan.kv_value_bytes = 1 if fp8_kv else plan.kv_value_bytes
    options = layouts.feasible(plan, pair_codes)
    plan.kv_value_bytes = 2 if fp8_kv else plan.kv_value_bytes
    if not options:
        return _decided_tensor_parallel(plan)
    best, other = layouts.choose(options, plan.w["goal"])
    plan.layouts = {"chosen": best, "runner_up": other}
    mode = "replicas" if best["tp"] == 1 else "tensor_parallel"
    plan.decide("mode", mode, _layout_reason(plan, best, other, pair_codes))
    return best["tp"]


def _layout_reason(plan, best, other, pair_codes):
    fits = ("the model (%.1f GiB of %s weights) %s one GPU" % (
        plan.wbytes / GIB, plan.fmt, "fits" if plan.kv_tokens(1, sure=True) >= plan.need_len else "does not fit"))
    if other is None:
        why = "%s; %s" % (fits, layouts.describe(best))
        return why + ("" if best["tp"] == 1 else "; TP=%d is the smallest split that holds the weights and %d "
                      "tokens of KV cache" % (best["tp"], plan.need_len))
    goal = ("the most tokens/s at full load" if plan.w["goal"] == "throughput"
            else "the shortest single-stream step")
    why = "%s. Chosen for %s (vllm_service_goal=%s): %s; against %s" % (
        fits, goal, plan.w["goal"], layouts.describe(best), layouts.describe(other))
    p2p_ok = bool(pair_codes) and all(c == "OK" for c in pair_codes.values())
    if not p2p_ok:
        why += "; the GPUs have no peer-to-peer path (%s)" % (_pairs_text(pair_codes) or "unknown")
    basis = "an estimate: memory traffic over the GPU's %d GB/s (%s), all-reduce bytes over the link" % (
        best["memory_gbps"], "its data sheet" if best["memory_gbps_known"] else "a guess: a GPU the plan does not know")
    return "%s. This rests on %s; %s" % (why, basis, layouts.TWO_H200_NOTE)


def _decided_tensor_parallel(plan):
    n, tp = len(plan.used), _smallest_tp(plan)
    if not tp and plan.want_len:
        best = max(plan.kv_tokens(t, sure=True) for t in (1, 2, 4, 8) if t <= n)
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
    """Step 5: --max-model-len within the KV cache vLLM will surely have (the estimate, with LOAD_MARGIN of the
    weights in reserve: a context vLLM cannot hold stops its start), --max-num-seqs within the estimate."""
    plan.cap = cap = plan.kv_tokens(plan.tp)
    plan.max_len = _context_length(plan, plan.kv_tokens(plan.tp, sure=True))
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
                        "holds about %d tokens (%.1f GiB GPU x %.2f, minus %.1f GiB of weights with %d%% of them "
                        "in reserve, and %.1f GiB of headroom)" % (
                            want, plan.tp, cap, plan.mem / GIB, plan.util, plan.wbytes / plan.tp / GIB,
                            LOAD_MARGIN * 100, OVERHEAD_BYTES / GIB))
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
    return opts + passed_options(w)


def passed_options(w):
    """The options of the wishes the plan passes as they are (``pass`` in the table): nothing at the default, a
    boolean's option alone when true."""
    opts = []
    for key, wish in wishes.WISHES.items():
        if not wish.get("pass") or w[key] == wish["default"]:
            continue
        if wish["type"] != "bool":
            opts += [wish["flags"][0], str(w[key])]
        elif w[key]:
            opts.append(wish["flags"][0])
    return opts


def add_extra_args(plan, replicas):
    """Step 9: the plan's own options, and the user's, checked against the real parser of the profile's vLLM;
    the user's go after the plan's on every replica."""
    extra = [str(a) for a in plan.w["extra_args"]]
    errors = vllm_options.validate(list(replicas[0]["options"]), plan.table, "the serving plan")
    errors += vllm_options.validate(extra, plan.table, "vllm_service_extra_args", refuse_owned=True)
    errors += kv_memory_errors(plan, extra)
    if errors:
        raise PlanError("; ".join(errors))
    for r in replicas:
        r["options"] += extra


KV_MEMORY = "--kv-cache-memory-bytes"


def kv_memory_errors(plan, extra):
    """A KV budget the user gives in bytes (it replaces vllm_service_gpu_memory_utilization's share) that cannot hold
    one sequence of the plan's length: vLLM refuses to start on it."""
    given = vllm_options.option_value(extra, KV_MEMORY)
    if given is None:
        return []
    size = vllm_options.size_bytes(given)
    per_token = kv_bytes_per_token(plan.shape, plan.tp, plan.kv_value_bytes)
    if size is None:
        return ["vllm_service_extra_args: %s %s is not a size (bytes, or with a suffix: 512M, 8G)" % (KV_MEMORY, given)]
    if size // per_token < plan.max_len:
        return ["vllm_service_extra_args: %s %s holds about %d tokens (%d bytes a token on each GPU at TP=%d), less "
                "than one sequence of the plan's length (max_model_len %d): vLLM would not start; give at least %d, "
                "or leave the KV budget to vllm_service_gpu_memory_utilization"
                % (KV_MEMORY, given, size // per_token, per_token, plan.tp, plan.max_len, per_token * plan.max_len)]
    return []


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
        # the layouts compared when the plan chose one (module_utils/layouts.py): their figures, rounded
        "layouts": dict((k, _rounded(v)) for k, v in getattr(plan, "layouts", {}).items()) or None,
    }


def _rounded(figures):
    if figures is None:
        return None
    return dict((k, round(v, 2) if isinstance(v, float) else v) for k, v in figures.items())


def _smallest_tp(plan):
    for tp in (2, 4, 8):
        if tp <= len(plan.used) and plan.shape["heads"] % tp == 0 and plan.kv_tokens(tp, sure=True) >= plan.need_len:
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
