# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the serving plan takes from measurements, and the one rule for carrying a measurement across vLLM versions.

The rule: a measurement counts for the vLLM version it was made with and for later ones, never for an earlier one.
Kernels differ between series (vLLM 0.6's FlashAttention backend has no FP8 KV cache; its FP8 GEMMs are another
generation), while later releases keep what earlier ones served. It decides alike:
- the levers the plan pulls by itself: FP8 weights (--quantization fp8) and an FP8 KV cache. Under a vLLM the
  measurement does not count for, the plan keeps 16 bits and says why; asked for, the lever is used with a warning;
- the pairs of weight format and KV-cache type the plan emits: each was served together on a lent GPU, or the plan
  warns, naming what is unproven. A pair that failed is never chosen, and warned about when asked. vLLM's own path,
  the checkpoint's 16-bit weights with a 16-bit cache, needs no record."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

H200_FP8_NOTE = ("on a lent H200 with a Qwen3-4B-shaped model the plan with FP8 weights gave 1.14x vLLM's defaults under "
                 "mixed load at 0.73x their P95 TTFT, and 1.26x in single-stream decode (vLLM 0.25.0, the seed's "
                 "protocol through playbooks/benchmark.yml's code; tests/fixtures/bench/vllm-0.25.0-h200-run2)")
KV_FP8_NOTE = ("on a lent H200 held to an RTX 4090's memory budget (--gpu-memory-utilization 0.1538), FP8 KV doubled "
               "the cache (237,520 tokens, against 118,768) and the plan's 55 sequences to 110: 1.40x the 16-bit "
               "cache under mixed load at 0.68x its P95 TTFT (1.53x vLLM's defaults at 0.83x theirs), but 0.96x in "
               "single-stream decode and 0.97x in prefill (and 0.97x single-stream on a whole H200); its quality "
               "cost was not measured (random weights). vLLM 0.25.0; "
               "tests/fixtures/bench/vllm-0.25.0-h200-4090budget")
# The levers the plan pulls by itself: the vLLM each was measured with, and the measurement.
LEVERS = {
    "fp8_weights": ("0.25.0", "FP8 weights", H200_FP8_NOTE),
    "fp8_kv": ("0.25.0", "an FP8 KV cache", KV_FP8_NOTE),
}
FOUR_B = "tests/fixtures/bench/vllm-0.25.0-h200-4090budget"
PLANS = "tests/fixtures/device/vllm-0.25.0-plans-4090budget"
# Weight format and KV-cache type served together on a lent GPU: the vLLM, and the record.
SERVED_TOGETHER = {
    ("fp8", "model"): ("0.25.0", FOUR_B + "/plan"),
    ("fp8", "fp8"): ("0.25.0", FOUR_B + "/plan_kvfp8"),
    ("bf16", "fp8"): ("0.25.0", PLANS),
    ("awq", "model"): ("0.25.0", PLANS),
}
# Served together and failed: never chosen.
FAILED_TOGETHER = {
    ("awq", "fp8"): ("AWQ weights with an FP8 KV cache failed in warm-up on a lent H100 (vLLM 0.25.0's FlashAttention: "
                     "\"For FP16/BF16 input, output must have the same dtype as inputs\"; %s)" % PLANS),
}
PLAIN = (("bf16", "model"), ("fp16", "model"))


def version_tuple(text):
    try:
        return tuple(int(part) for part in str(text).split(".")[:3])
    except ValueError:
        return (0,)


def counts(measured_with, version):
    """The rule: a measurement made with vLLM ``measured_with`` counts for ``version`` when that is no earlier."""
    return version_tuple(version) >= version_tuple(measured_with)


def lever_not_measured(lever, version):
    """Why a lever the plan would pull by itself does not count under this vLLM, in words; None when it counts."""
    measured_with, name, _note = LEVERS[lever]
    if counts(measured_with, version):
        return None
    return ("%s were measured with vLLM %s, and a measurement counts for that vLLM and later ones, not for %s"
            % (name, measured_with, version)).replace("an FP8 KV cache were", "an FP8 KV cache was")


def pair_unproven(fmt, kv, version):
    """Why a weight format and KV-cache type are not known to start together under this vLLM; None when they are."""
    pair = (fmt, kv)
    if pair in PLAIN:
        return None
    if pair in FAILED_TOGETHER:
        return FAILED_TOGETHER[pair]
    if pair not in SERVED_TOGETHER:
        return ("%s weights with a %s KV cache were never served together on a lent GPU"
                % (fmt, "16-bit" if kv == "model" else kv))
    measured_with, record = SERVED_TOGETHER[pair]
    if counts(measured_with, version):
        return None
    return ("%s weights with a %s KV cache were served together with vLLM %s (%s), which does not count for %s"
            % (fmt, "16-bit" if kv == "model" else kv, measured_with, record, version))
