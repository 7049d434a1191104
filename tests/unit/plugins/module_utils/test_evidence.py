"""One rule for evidence across vLLM versions, for FP8 weights, the FP8 KV cache and the pairs the plan emits."""
import json
import re
from pathlib import Path

import pytest
import shapes

from ansible_collections.llmhost.vllm.plugins.module_utils import evidence
from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp

ROOT = Path(__file__).resolve().parents[4]
TABLES = ROOT / "roles" / "vllm_service" / "files" / "vllm-options"


@pytest.mark.parametrize("version,counts", [("0.25.0", True), ("0.33.0", True), ("1.0.0", True), ("0.6.3", False),
                                            ("0.24.9", False), ("garbage", False)])
def test_a_measurement_counts_for_its_vllm_and_later_ones(version, counts):
    assert evidence.counts("0.25.0", version) is counts
    assert (evidence.lever_not_measured("fp8_weights", version) is None) is counts
    assert (evidence.lever_not_measured("fp8_kv", version) is None) is counts


def test_pairs_served_together_failed_or_never_served():
    assert evidence.pair_unproven("bf16", "model", "0.6.3") is None        # vLLM's own path
    assert evidence.pair_unproven("fp8", "fp8", "0.33.0") is None
    assert evidence.pair_unproven("awq", "model", "0.33.0") is None
    assert "which does not count for 0.6.3" in evidence.pair_unproven("awq", "model", "0.6.3")
    assert "failed in warm-up" in evidence.pair_unproven("awq", "fp8", "0.33.0")
    never = "gptq weights with a 16-bit KV cache were never served together on a lent GPU"
    assert evidence.pair_unproven("gptq", "model", "0.33.0") == never
    for fmt_kv, (version, record) in evidence.SERVED_TOGETHER.items():
        assert (ROOT / record).is_dir(), record
        assert evidence.counts(version, version)


def test_the_rule_is_stated_once_in_the_code_and_in_the_readme():
    """No other module compares vLLM versions for evidence; the README says the rule in the code's words."""
    for module in ("serving_plan.py", "layouts.py", "cluster_plan.py", "model_memory.py"):
        source = (ROOT / "plugins" / "module_utils" / module).read_text()
        assert not re.search(r"\(0, 25\)|measured_with|version_tuple", source), module
    readme = " ".join((ROOT / "roles" / "vllm_service" / "README.md").read_text().split())
    assert ("a measurement counts for the vLLM version it was made with and for later ones, never for an earlier "
            "one") in readme


GPUS = {"rtx4090": ("NVIDIA GeForce RTX 4090", "8.9", 24564), "a10": ("NVIDIA A10", "8.6", 23028),
        "t4": ("Tesla T4", "7.5", 15360), "h200": ("NVIDIA H200", "9.0", 143771)}


@pytest.mark.parametrize("gpu", sorted(GPUS))
@pytest.mark.parametrize("version", ["0.6.3", "0.33.0"])
@pytest.mark.parametrize("goal", ["throughput", "latency"])
def test_what_the_plan_chooses_by_itself_is_known_to_start(gpu, version, goal):
    """Every pair of weight format and KV cache the plan picks by itself was served together under a vLLM the
    measurement counts for, or is vLLM's own 16-bit path; a quantized checkpoint the plan does not choose is warned
    about where its pair is unproven."""
    name, cc, mib = GPUS[gpu]
    facts = [{"index": i, "name": name, "compute_capability": cc, "memory_total_mib": mib, "numa_node": 0}
             for i in (0, 1)]
    table = json.loads((TABLES / ("%s.json" % version)).read_text())
    for config in (shapes.QWEN25_3B, shapes.QWEN3_4B, shapes.QWEN3_8B, shapes.QWEN25_32B_AWQ, shapes.QWEN3_30B_A3B):
        try:
            p = sp.make_plan(facts, {}, config, {"model_path": "/m", "goal": goal}, table)
        except sp.PlanError:
            continue
        unproven = evidence.pair_unproven(p["weight_format"], p["kv_cache_dtype"], version)
        if "quantization_config" not in config:
            assert unproven is None, (gpu, version, config["architectures"], p["weight_format"], p["kv_cache_dtype"])
        assert any("not known to start" in w for w in p["warnings"]) == bool(unproven)
