# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layouts of one host's GPUs, compared by what each serves.

For every feasible layout (one replica per GPU, or tensor parallel over 2, 4 or 8 GPUs) the figures are estimated from
the model's shape and the host's facts:
- weights and KV cache per GPU; sequences of tokens_per_seq in flight and the longest context;
- per decode step, the weight and KV bytes each GPU reads, and the all-reduce bytes over the host's real link (NVLink,
  PCIe peer to peer, or through host memory where the GPUs have no peer-to-peer path, as on GeForce cards);
- from those, the step's time, single-stream and at full load, and the decode tokens per second of the host.
The goal picks: throughput, the most tokens per second at full load; latency, the shortest single-stream step.
Replicas are kept unless tensor parallel is ahead by more than REPLICAS_KEPT_WITHIN: they share nothing, so one can
restart while the others serve, and they need no all-reduce.

These are estimates (a roofline: memory traffic over bandwidth, all-reduce bytes over the link); the plan says so in
its reasons, and names the measurement where one exists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmhost.vllm.plugins.module_utils import model_memory as mm

MAX_NUM_SEQS_CAP = 256   # vLLM's default scheduler limit in the 0.6 series
REPLICAS_KEPT_WITHIN = 1.10
# Memory bandwidth, GB/s, by GPU name (the makers' data sheets); another GPU gets DEFAULT_MEMORY_GBPS, said so.
MEMORY_GBPS = (("H200", 4800), ("H100 PCIe", 2000), ("H100 NVL", 3900), ("H100", 3350), ("A100-SXM4-80GB", 2039),
               ("A100 80GB PCIe", 1935), ("A100", 1555), ("L40S", 864), ("L40", 864), ("RTX 6000 Ada", 960),
               ("A6000", 768), ("A40", 696), ("A10", 600), ("L4", 300), ("T4", 320), ("RTX 5090", 1792),
               ("RTX 4090", 1008), ("RTX 4080", 717), ("RTX 3090", 936), ("V100", 900))
DEFAULT_MEMORY_GBPS = 900
# PCIe bandwidth per lane and direction, GB/s, by generation; the share NCCL gets of it peer to peer, and through host
# memory (every byte crosses the bus twice: into host memory and out again).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
PCIE_SHARE = {"p2p": 0.8, "host": 0.4}
NVLINK_GBPS_PER_LINK = 25
# An all-reduce's fixed cost, seconds: kernel launch and synchronisation (an estimate; not measured here).
ALLREDUCE_LATENCY_S = 30e-6
# The one measurement of replicas against tensor parallel (vLLM 0.25.0, a Qwen3-4B-shaped model, 2 H200 with NVLink;
# the lent-GPU notes beside the project, shared/device/README.md).
TWO_H200_NOTE = ("measured once, on 2 H200 with NVLink and a 4B model: two replicas served 1.13x (concurrency 128) and "
                 "1.80x (256) the throughput of TP=2; never on PCIe")


def memory_gbps(name):
    for key, gbps in MEMORY_GBPS:
        if key in str(name or ""):
            return gbps, True
    return DEFAULT_MEMORY_GBPS, False


def link(plan, group, p2p_codes):
    """(GB/s the all-reduce gets between the group's GPUs, how, in words)."""
    gpus = [plan.by_index[i] for i in group]
    nvlinks = [sum((g.get("nvlink") or {}).get("gpus", {}).values()) for g in gpus]
    if min(nvlinks or [0]) > 0:
        return min(nvlinks) * NVLINK_GBPS_PER_LINK, "NVLink"
    pcie = [g.get("pcie") or {} for g in gpus]
    known = all(p.get("gen_max") and p.get("width_max") for p in pcie)
    gen = min(int(p.get("gen_max") or 4) for p in pcie)
    width = min(int(p.get("width_max") or 16) for p in pcie)
    ok = bool(p2p_codes) and all(c == "OK" for c in p2p_codes.values())
    share = PCIE_SHARE["p2p" if ok else "host"]
    how = "PCIe gen %d x%d%s %s" % (gen, width, "" if known else " (assumed: gpu_facts has no link)",
                                    "peer to peer" if ok else "through host memory (no peer-to-peer path)")
    return PCIE_LANE_GBPS.get(gen, 1.969) * width * share, how


def figures(plan, tp, p2p_codes):
    """One layout's figures; None when it cannot hold the weights plus the context the plan must hold."""
    n = len(plan.used)
    if tp > n or plan.shape["heads"] % tp or plan.kv_tokens(tp, sure=True) < plan.need_len:
        return None
    kv_tokens = plan.kv_tokens(tp)
    per_seq = max(1, int(plan.w["tokens_per_seq"]))
    seqs = max(1, min(MAX_NUM_SEQS_CAP, kv_tokens // per_seq))
    gbps, known = memory_gbps(plan.by_index[plan.used[0]].get("name"))
    link_gbps, how = link(plan, plan.used[:tp], p2p_codes) if tp > 1 else (0, "")
    limit = plan.shape["max_position_embeddings"] or kv_tokens
    out = {"tp": tp, "replicas": n // tp, "weights_gib_per_gpu": plan.wbytes / tp / mm.GIB,
           "kv_tokens": kv_tokens, "seqs": seqs, "context": min(kv_tokens, limit, 32768),
           "memory_gbps": gbps, "memory_gbps_known": known, "link_gbps": link_gbps, "link": how}
    out["single_ms"] = _step(plan, tp, 1, per_seq, gbps, link_gbps)[0]
    out["full_ms"], out["allreduce_mb"] = _step(plan, tp, seqs, per_seq, gbps, link_gbps)
    out["tokens_per_s"] = out["replicas"] * seqs / (out["full_ms"] / 1000.0)
    return out


def _step(plan, tp, seqs, per_seq, gbps, link_gbps):
    """(milliseconds of one decode step of ``seqs`` sequences at half their length, all-reduce MB per GPU)."""
    read = mm.weight_bytes_read(plan.shape, plan.fmt, seqs) / tp
    read += seqs * (per_seq // 2) * mm.kv_bytes_per_token(plan.shape, tp, plan.kv_value_bytes)
    seconds = read / (gbps * 1e9)
    allreduce = 0
    if tp > 1:
        # two all-reduces a layer (after attention, after the MLP) of seqs x hidden 16-bit values; a ring moves
        # 2 (tp - 1) / tp of the buffer through each GPU's link
        allreduce = 2 * plan.shape["layers"] * seqs * plan.shape["hidden_size"] * 2 * 2.0 * (tp - 1) / tp
        seconds += allreduce / (link_gbps * 1e9) + 2 * plan.shape["layers"] * ALLREDUCE_LATENCY_S
    return seconds * 1000.0, allreduce / 1e6


def feasible(plan, p2p_codes):
    """The figures of every layout that holds the weights and the context, fewest GPUs per replica first."""
    return [f for f in (figures(plan, tp, p2p_codes) for tp in (1, 2, 4, 8)) if f]


def choose(options, goal):
    """(the chosen layout, the runner-up or None): by goal, replicas kept unless beaten by REPLICAS_KEPT_WITHIN."""
    def score(f):
        return f["tokens_per_s"] if goal == "throughput" else 1.0 / f["single_ms"]
    ranked = sorted(options, key=score, reverse=True)
    best = ranked[0]
    replicas = next((f for f in options if f["tp"] == 1), None)
    if replicas and best is not replicas and score(best) < score(replicas) * REPLICAS_KEPT_WITHIN:
        best = replicas
    rest = [f for f in ranked if f is not best]
    return best, (rest[0] if rest else None)


def describe(f):
    """One layout's figures, in words."""
    name = "one replica per GPU" if f["tp"] == 1 else "TP=%d" % f["tp"]
    text = ("%s: %.1f GiB of weights and %d tokens of KV cache per replica (%d sequences of the tokens_per_seq in "
            "flight), a step of %.1f ms single-stream and %.1f ms at full load, about %.0f tokens/s for the host"
            % (name, f["weights_gib_per_gpu"], f["kv_tokens"], f["seqs"], f["single_ms"], f["full_ms"],
               f["tokens_per_s"]))
    if f["tp"] > 1:
        text += ", %.0f MB of all-reduce per GPU and step over %s (%.0f GB/s)" % (
            f["allreduce_mb"], f["link"], f["link_gbps"])
    return text
