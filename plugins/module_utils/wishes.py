# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The serving plan's wishes, declared once: each ``vllm_service_<wish>`` variable's type, default, range or
choices, the `vllm serve` options it owns, and what it means.

Everything else reads this table or is written from it:
- the planner (module_utils/serving_plan.py) takes its defaults from it, and checks and converts each wish with the
  first play's words (module_utils/input_types.py, module_utils/value_checks.py);
- the first play and the role's own checks take the ranges from it (module_utils/role_inputs.py);
- `vllm_service_extra_args` refuses the options a wish owns (module_utils/vllm_options.py);
- the role's `meta/argument_specs.yml`, `defaults/main.yml` and README table are written from it by `make docs`
  (tools/wish_docs.py), and a unit test fails while they differ.

A wish whose ``pass`` is true is rendered as it is: its option with the value, a boolean's option alone when true,
nothing at its default. Adding such an option is one row here (see CONTRIBUTING.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The share of each GPU's memory vLLM may take: below 0.1 no model fits, above 0.98 the CUDA context and the
# allocator's own blocks have no room.
UTILIZATION_RANGE = (0.1, 0.98)

# name: type (an argument spec type), default, range (low, high; None: no bound) or choices, flags (the `vllm serve`
# options it owns), doc (Markdown: the README's words; `x` becomes C(x) in the argument spec).
WISHES = {
    "served_model_name": {
        "type": "str", "default": "", "flags": ["--served-model-name"],
        "doc": "Model name clients use. Empty means the model folder's name."},
    "host": {
        "type": "str", "default": "127.0.0.1", "flags": ["--host"],
        "doc": "Listen address; loopback by default. An address beyond loopback (`0.0.0.0`, `::`, a LAN address) is "
               "refused without `vllm_service_api_key`."},
    "base_port": {
        "type": "int", "default": 8000, "range": (1024, 65535), "flags": ["--port"],
        "doc": "Port of replica 0; replica k listens on base_port + k."},
    "gpus": {
        "type": "raw", "default": "all",
        "doc": "`all` or a list of GPU indices to serve on."},
    "mode": {
        "type": "str", "default": "auto", "choices": ["auto", "replicas", "tensor_parallel"],
        "doc": "`auto`, `replicas` (one vLLM per GPU) or `tensor_parallel`."},
    "tensor_parallel_size": {
        "type": "int", "default": 0, "range": (0, 64), "flags": ["--tensor-parallel-size", "-tp"],
        "doc": "Tensor-parallel size; 0 means decided by the plan."},
    "weight_format": {
        "type": "str", "default": "auto", "choices": ["auto", "checkpoint", "bf16", "fp16", "fp8"],
        "flags": ["--quantization", "-q"],
        "doc": "`auto` (FP8 on GPUs with FP8 tensor cores, the checkpoint's own quantization when it has one), "
               "`checkpoint` (the model's own quantization), `bf16`, `fp16` or `fp8`."},
    "kv_cache_dtype": {
        "type": "str", "default": "auto", "choices": ["auto", "fp8", "model"], "flags": ["--kv-cache-dtype"],
        "doc": "`auto` (decided by `vllm_service_goal` and the budget), `fp8` (one byte per value, twice the tokens; "
               "the plan sizes max_model_len and max_num_seqs for them) or `model` (the model's 16-bit type)."},
    "goal": {
        "type": "str", "default": "throughput", "choices": ["throughput", "latency"],
        "doc": "`throughput`: an FP8 KV cache where the 16-bit one binds the batch, on GPUs with FP8 tensor cores "
               "and a vLLM it was measured with (on a 4090's budget: 1.53x vLLM's defaults under mixed load at 0.83x "
               "their P95 TTFT); `latency`: the 16-bit cache (1.04x in single-stream decode)."},
    "max_model_len": {
        "type": "int", "default": 0, "range": (0, None), "flags": ["--max-model-len"],
        "doc": "Context length; 0 means the largest that fits the KV-cache budget, up to the model's limit and "
               "32768."},
    "max_num_seqs": {
        "type": "int", "default": 0, "range": (0, None), "flags": ["--max-num-seqs"],
        "doc": "Concurrent sequences; 0 means what the KV-cache budget holds at vllm_service_tokens_per_seq each "
               "(at most 256)."},
    "tokens_per_seq": {
        "type": "int", "default": 2048, "range": (1, 10485760),
        "doc": "Typical prompt plus output tokens of one request, for sizing max_num_seqs."},
    "gpu_memory_utilization": {
        "type": "float", "default": 0.9, "range": UTILIZATION_RANGE, "flags": ["--gpu-memory-utilization"],
        "doc": "Share of each GPU's memory vLLM may take."},
    "numa": {
        "type": "str", "default": "auto", "choices": ["auto", "off"],
        "doc": "`auto` binds each replica to its GPU's NUMA node when the GPUs sit on several nodes; `off` never "
               "binds."},
    "enforce_eager": {
        "type": "bool", "default": False, "flags": ["--enforce-eager"],
        "doc": "Debug only: `--enforce-eager` turns CUDA graphs and torch.compile off (5.9-6.8x slower decode on an "
               "H200)."},
    "shutdown_timeout": {
        "type": "int", "default": 30, "range": (0, 3600), "flags": ["--shutdown-timeout"],
        "doc": "Seconds vLLM drains in-flight requests on stop (`--shutdown-timeout` where the version has it); "
               "systemd waits 30 s longer."},
    "extra_args": {
        "type": "list", "elements": "str", "default": [],
        "doc": "More `vllm serve` options, checked against the real parser of the profile's vLLM version (an "
               "abbreviation argparse would take is refused as unknown); options the plan owns are refused, and so "
               "are those that would get around it: options from a file (`--config`), a listener off TCP (`--uds`), "
               "`--dtype`, pipeline, context and data parallel sizes (every data-parallel option, and the short "
               "forms `-tp`, `-pp`, `-dp...`, `-asc`, `-pcp`, `-dcp`), `--distributed-executor-backend`, "
               "`--num-gpu-blocks-override`, the replicas' own TLS, `--root-path`."},
}

PREFIX = "vllm_service_"
# Views of the table, for what reads one facet.
WISH_RANGES = {k: (w["type"],) + tuple(w["range"]) for k, w in WISHES.items() if "range" in w}
DEFAULT_WISHES = dict({k: w["default"] for k, w in WISHES.items()}, model_path="")
# The `vllm serve` options each wish owns: option -> its variable.
OWNED_FLAGS = {flag: PREFIX + k for k, w in WISHES.items() for flag in w.get("flags", ())}


def spec(key):
    """The wish's argument spec option (type, choices, elements), as Ansible's validator and the first play read it."""
    wish = WISHES[key]
    return {k: wish[k] for k in ("type", "choices", "elements") if k in wish}


def range_words(key):
    """The wish's range in words, as the README and the argument spec say it ('' without one)."""
    low, high = WISHES[key].get("range", (None, None))
    if low is None and high is None:
        return ""
    return "From %s to %s." % (low, high) if high is not None else "At least %s." % low
