"""The serving plan on real GPU facts (our H200 captures; a 2x4090 built from public captures) and
Qwen-shaped model configs, with the option tables of the profiles' real vLLM versions."""
import json
import re
from pathlib import Path

import pytest
import shapes

from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp
from ansible_collections.llmhost.vllm.plugins.module_utils import sysfs, topology
from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options

ROOT = Path(__file__).resolve().parents[4]
TABLES = ROOT / "roles" / "vllm_service" / "files" / "vllm-options"

# config.json shapes (tests/unit/shapes.py, the published configs' numbers); Qwen3-4B-Instruct-2507 publishes 262144
# tokens of context, the lent runs' folder 40960
QWEN25_3B, QWEN25_32B = shapes.QWEN25_3B, shapes.QWEN25_32B
QWEN3_4B = dict(shapes.QWEN3_4B, max_position_embeddings=262144)


def table(version):
    return json.loads((TABLES / ("%s.json" % version)).read_text())


@pytest.fixture
def h200x2_facts(h200x2):
    return topology.build(nvml_dump=h200x2.nvml(), smi_topo=smi.parse_topo_matrix(h200x2.cmd("nvidia-smi-topo-m.txt")),
                          smi_p2p=smi.parse_p2p_matrix(h200x2.cmd("nvidia-smi-topo-p2p-r.txt")),
                          sys_gpus=sysfs.nvidia_gpus(h200x2.root), driver=sysfs.driver_info(h200x2.root))


def plan(gpu_list, p2p, config, version="0.33.0", **wishes):
    wishes.setdefault("model_path", "/srv/models/m")
    return sp.make_plan(gpu_list, p2p, config, wishes, table(version))


def keyed(p):
    return {d["key"]: d for d in p["decisions"]}


def test_design_card_box_serves_the_seed_model_as_two_replicas_without_p2p(rtx4090x2):
    gpus, p2p = rtx4090x2
    assert p2p == {"0,1": "NS"}
    p = plan(gpus, p2p, QWEN25_3B, version="0.6.3", served_model_name="qwen")
    assert p["mode"] == "replicas" and p["tensor_parallel_size"] == 1
    assert [r["gpus"] for r in p["replicas"]] == [[0], [1]]
    assert [r["port"] for r in p["replicas"]] == [8000, 8001]
    d = keyed(p)
    assert "no peer-to-peer path (0,1: NS)" in d["mode"]["reason"]
    # the one rule for evidence: FP8 weights were measured with vLLM 0.25.0, which does not count for 0.6.3
    assert p["weight_format"] == "bf16" and p["kv_cache_dtype"] == "model"
    assert ("FP8 weights were measured with vLLM 0.25.0, and a measurement counts for that vLLM and later ones, not "
            "for 0.6.3") in d["weight_format"]["reason"]
    assert d["numa"]["value"] == "off"
    r = p["replicas"][0]
    assert r["env"] == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "0"}
    assert p["model_path"] == "/srv/models/m" and r["options"][:2] == ["--host", "127.0.0.1"]
    assert "--enforce-eager" not in r["options"] and "--shutdown-timeout" not in r["options"]  # 0.6.3 has no drain option
    assert "--quantization" not in r["options"] and not p["warnings"]
    assert p["max_model_len"] == 32768                 # the model's own limit fits easily
    assert 1 <= p["max_num_seqs"] <= 256
    assert vllm_options.validate(r["options"], table("0.6.3"), "x") == []
    # under the current profile's vLLM the measurement counts: FP8 weights, as measured
    current = plan(gpus, p2p, QWEN25_3B, version="0.33.0")
    assert current["weight_format"] == "fp8" and "FP8 tensor cores (compute capability 8.9)" in \
        keyed(current)["weight_format"]["reason"]
    assert current["replicas"][0]["options"][current["replicas"][0]["options"].index("--quantization") + 1] == "fp8"


QWEN25_32B_AWQ = shapes.QWEN25_32B_AWQ


def test_a_model_too_big_for_one_consumer_gpu_goes_tensor_parallel_with_p2p_off(rtx4090x2):
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, QWEN25_32B_AWQ, version="0.6.3", max_model_len=8192)
    assert p["mode"] == "tensor_parallel" and p["tensor_parallel_size"] == 2
    assert len(p["replicas"]) == 1 and p["replicas"][0]["gpus"] == [0, 1]
    r = p["replicas"][0]
    assert r["env"]["NCCL_P2P_DISABLE"] == "1"
    assert "--disable-custom-all-reduce" in r["options"]
    assert r["options"][r["options"].index("--tensor-parallel-size") + 1] == "2"
    # the checkpoint says AWQ: vLLM reads it; no --quantization flag is forced
    assert p["weight_format"] == "awq" and "--quantization" not in r["options"]
    assert "does not fit one GPU" in keyed(p)["mode"]["reason"]
    assert "no peer-to-peer path (0,1: NS)" in keyed(p)["p2p[0]"]["reason"]


def test_h200_pair_with_nvlink_serves_current_model_as_replicas(h200x2_facts):
    f = h200x2_facts
    p = plan(f["gpus"], f["p2p"], QWEN3_4B)
    assert p["mode"] == "replicas" and len(p["replicas"]) == 2
    assert p["weight_format"] == "fp8"
    assert "no peer-to-peer" not in keyed(p)["mode"]["reason"]
    for r in p["replicas"]:
        assert "NCCL_P2P_DISABLE" not in r["env"]
        assert r["options"][r["options"].index("--shutdown-timeout") + 1] == "30"   # 0.33.0 drains
    assert p["max_model_len"] == 32768
    assert p["max_num_seqs"] == 256


def test_numa_binding_follows_the_gpus_nodes(h200x2_facts):
    f = h200x2_facts
    nodes = sorted({g["numa_node"] for g in f["gpus"]})
    p = plan(f["gpus"], f["p2p"], QWEN3_4B)
    if len(nodes) > 1:
        assert keyed(p)["numa"]["value"] == "bind"
        assert [r["numa_node"] for r in p["replicas"]] == [f["gpus"][0]["numa_node"], f["gpus"][1]["numa_node"]]
        assert all(r["cpus"] for r in p["replicas"])
    else:
        assert keyed(p)["numa"]["value"] == "off" and all(r["numa_node"] is None for r in p["replicas"])
    # two GPUs on two nodes, by hand: each replica on its own node; TP across them: no binding
    gpus = [dict(f["gpus"][0], numa_node=0, cpu_affinity="0-7"), dict(f["gpus"][1], numa_node=1, cpu_affinity="8-15")]
    p = plan(gpus, f["p2p"], QWEN3_4B)
    assert [(r["numa_node"], r["cpus"]) for r in p["replicas"]] == [(0, "0-7"), (1, "8-15")]
    p = plan(gpus, f["p2p"], QWEN3_4B, tensor_parallel_size=2)
    assert p["replicas"][0]["numa_node"] is None
    assert "NCCL_P2P_DISABLE" not in p["replicas"][0]["env"]  # NVLink pair: P2P OK


def test_cuda_graphs_stay_on_unless_eager_is_asked(rtx4090x2):
    gpus, p2p = rtx4090x2
    assert keyed(plan(gpus, p2p, QWEN25_3B))["cuda_graphs"]["value"] is True
    p = plan(gpus, p2p, QWEN25_3B, enforce_eager=True)
    assert "--enforce-eager" in p["replicas"][0]["options"]
    assert any("debug switch" in w for w in p["warnings"])


QWEN3_4B_REAL_LIMIT = shapes.QWEN3_4B  # the lent runs' model folder


BUDGET_RUNS = ROOT / "tests" / "fixtures" / "bench" / "vllm-0.25.0-h200-4090budget"


def _measured(run, phase):
    result = json.loads((BUDGET_RUNS / run / ("%s.json" % phase)).read_text())
    return result["output_throughput"], result["p95_ttft_ms"]


def _kv_tokens_measured(server):
    """vLLM's own "GPU KV cache size" of a server in the budget runs' start-up lines."""
    text = (BUDGET_RUNS / "server-lines.txt").read_text()
    block = text.split("== %s\n" % server, 1)[1].split("\n== ", 1)[0]
    return int(re.search(r"GPU KV cache size: ([\d,]+) tokens", block).group(1).replace(",", ""))


def test_the_options_measured_under_a_4090s_budget_are_the_plan_for_one_4090(rtx4090x2):
    """The 16-bit cache holds 54 sequences of 2048 tokens, fewer than the 256 the scheduler runs: the budget binds,
    and the plan takes the FP8 cache, as the plan_kvfp8 run did; goal latency keeps the plan run's options. Those runs
    asked for 110 and 55 sequences; the plan now counts the 0.1 GiB vLLM holds beside the weights (measured since) and
    asks one fewer, still what the measured caches hold without preemption."""
    gpus, p2p = rtx4090x2
    p = plan(gpus[:1], p2p, QWEN3_4B_REAL_LIMIT, version="0.33.0")
    # tests/fixtures/bench/vllm-0.25.0-h200-4090budget/plan_kvfp8 ran these (not --shutdown-timeout: it only drains)
    assert p["replicas"][0]["options"][6:] == ["--max-model-len", "32768", "--max-num-seqs", "109",
                                               "--gpu-memory-utilization", "0.90", "--shutdown-timeout", "30",
                                               "--quantization", "fp8", "--kv-cache-dtype", "fp8"]
    assert 109 * 2048 <= _kv_tokens_measured("plan_4090_kvfp8")
    d = keyed(p)["kv_cache_dtype"]
    assert p["kv_cache_dtype"] == d["value"] == "fp8"
    assert "holds 54 sequences of 2048 tokens, fewer than the 256" in d["reason"] and "1.53x" in d["reason"]
    latency = plan(gpus[:1], p2p, QWEN3_4B_REAL_LIMIT, version="0.33.0", goal="latency")
    # .../plan ran these
    assert latency["replicas"][0]["options"][6:] == ["--max-model-len", "32768", "--max-num-seqs", "54",
                                                     "--gpu-memory-utilization", "0.90", "--shutdown-timeout", "30",
                                                     "--quantization", "fp8"]
    assert 54 * 2048 <= _kv_tokens_measured("plan_4090")
    assert latency["kv_cache_dtype"] == "model" and "vllm_service_goal=latency" in keyed(latency)["kv_cache_dtype"]["reason"]


def test_the_default_plan_is_the_best_measured_choice_under_load_on_a_4090s_budget():
    """Of the runs measured on that budget, the one the plan now picks (plan_kvfp8) has the most throughput under
    mixed load, and its P95 time to first token there is below vLLM's defaults' (the plain plan's was 1.23x)."""
    runs = ("defaults", "plan", "plan_kvfp8", "plan_mbt8192")
    mixed = {run: _measured(run, "mixed_c128") for run in runs}
    assert max(runs, key=lambda run: mixed[run][0]) == "plan_kvfp8"
    assert mixed["plan_kvfp8"][1] < mixed["defaults"][1] < mixed["plan"][1]
    assert round(mixed["plan_kvfp8"][0] / mixed["defaults"][0], 2) == 1.53
    assert round(mixed["plan_kvfp8"][1] / mixed["defaults"][1], 2) == 0.83
    # what goal=latency keeps: the 16-bit plan is ahead of FP8 in single-stream decode and prefill
    assert _measured("plan", "decode_c1")[0] > _measured("plan_kvfp8", "decode_c1")[0]
    assert _measured("plan", "prefill_2048")[1] < _measured("plan_kvfp8", "prefill_2048")[1]


@pytest.mark.parametrize("gpu,version,words", [
    ({}, "0.6.3", "an FP8 KV cache was measured with vLLM 0.25.0, and a measurement counts for that vLLM and later "
                  "ones, not for 0.6.3"),
    ({"compute_capability": "8.6"}, "0.33.0", "compute capability 8.6 has no FP8 tensor cores"),
    ({"memory_total_mib": 143771}, "0.33.0", "the budget does not bind"),
])
def test_the_16_bit_cache_stays_where_fp8_was_not_measured_or_is_not_needed(rtx4090x2, gpu, version, words):
    gpus, p2p = rtx4090x2
    p = plan([dict(gpus[0], **gpu)], p2p, QWEN3_4B_REAL_LIMIT, version=version)
    assert p["kv_cache_dtype"] == "model" and "--kv-cache-dtype" not in p["replicas"][0]["options"]
    assert words in keyed(p)["kv_cache_dtype"]["reason"], keyed(p)["kv_cache_dtype"]["reason"]


def test_an_fp8_kv_cache_is_asked_for_and_sized_for_twice_the_tokens(rtx4090x2):
    gpus, p2p = rtx4090x2
    auto = plan(gpus[:1], p2p, QWEN3_4B_REAL_LIMIT, kv_cache_dtype="model")
    fp8 = plan(gpus[:1], p2p, QWEN3_4B_REAL_LIMIT, kv_cache_dtype="fp8")
    assert fp8["estimates"]["kv_bytes_per_token"] * 2 == auto["estimates"]["kv_bytes_per_token"]
    assert fp8["estimates"]["kv_tokens_per_replica"] == 2 * auto["estimates"]["kv_tokens_per_replica"]
    # one fewer than the 55 and 110 the measured runs used (the 0.1 GiB vLLM holds beside the weights, counted now)
    assert (auto["max_num_seqs"], fp8["max_num_seqs"]) == (54, 109)
    opts = fp8["replicas"][0]["options"]
    assert opts[opts.index("--kv-cache-dtype") + 1] == "fp8" and fp8["kv_cache_dtype"] == "fp8"
    assert "(asked)" in keyed(fp8)["kv_cache_dtype"]["reason"] and not fp8["warnings"]
    # the seed's vLLM has the option too; an Ampere card gets a warning, not a refusal
    assert "--kv-cache-dtype" in plan(gpus[:1], p2p, QWEN3_4B_REAL_LIMIT, version="0.6.3",
                                      kv_cache_dtype="fp8")["replicas"][0]["options"]
    ampere = plan([dict(gpus[0], compute_capability="8.6")], p2p, QWEN3_4B_REAL_LIMIT, kv_cache_dtype="fp8")
    assert any("never measured" in w for w in ampere["warnings"])


def test_older_gpus_get_fp16_or_bf16_not_fp8():
    turing = [{"index": 0, "name": "Tesla T4", "compute_capability": "7.5", "memory_total_mib": 15360, "numa_node": None}]
    p = plan(turing, {}, QWEN25_3B, version="0.6.3")
    assert p["weight_format"] == "fp16"
    assert p["replicas"][0]["options"][-2:] == ["--dtype", "half"]
    ampere = [dict(turing[0], name="NVIDIA A10", compute_capability="8.6", memory_total_mib=23028)]
    p = plan(ampere, {}, QWEN25_3B)
    assert p["weight_format"] == "bf16" and "--quantization" not in p["replicas"][0]["options"]


def test_extra_args_are_checked_against_the_real_parser(rtx4090x2):
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, QWEN25_3B, extra_args=["--enable-prefix-caching", "--seed", "7"])
    assert p["replicas"][1]["options"][-3:] == ["--enable-prefix-caching", "--seed", "7"]
    with pytest.raises(sp.PlanError, match=r"--kv-cache-dtype is set by the serving plan; use vllm_service_kv_cache_dtype"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--kv-cache-dtype", "fp8"])
    with pytest.raises(sp.PlanError, match=r"vllm_service_extra_args: --swap-space is not an option of vllm serve "
                                           r"in vLLM 0\.33\.0"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--swap-space", "4"])          # removed after 0.6
    with pytest.raises(sp.PlanError, match=r"--enable-prefix-cachin is not an option .*did you mean "
                                           r"--enable-prefix-caching"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--enable-prefix-cachin"])
    with pytest.raises(sp.PlanError, match=r"--api-key is set by the serving plan; use vllm_service_api_key"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--api-key", "sk-123"])
    with pytest.raises(sp.PlanError, match=r"--dtype bf16 is not one of auto, "):
        plan(gpus, p2p, QWEN25_3B, version="0.6.3", extra_args=["--dtype", "bf16"])
    with pytest.raises(sp.PlanError, match=r"--enable-prefix-caching is a switch and takes no value"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--enable-prefix-caching=yes"])


def test_a_kv_budget_in_bytes_must_hold_one_sequence_of_the_plan_s_length(rtx4090x2):
    """Qwen2.5-3B on a 4090, with the FP8 KV cache the plan picks there: 36 layers x 2 KV heads x 128 x 2 (K and V)
    x 1 byte = 18,432 bytes a token at TP=1."""
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, QWEN25_3B, max_model_len=8192, extra_args=["--kv-cache-memory-bytes", "2G"])
    assert p["replicas"][0]["options"][-2:] == ["--kv-cache-memory-bytes", "2G"]  # 116,508 tokens: it fits
    with pytest.raises(sp.PlanError, match=r"vllm_service_extra_args: --kv-cache-memory-bytes 128M holds about 7281 "
                                           r"tokens \(18432 bytes a token on each GPU at TP=1\), less than one sequence "
                                           r"of the plan's length \(max_model_len 8192\): vLLM would not start; give "
                                           r"at least 150994944"):
        plan(gpus, p2p, QWEN25_3B, max_model_len=8192, extra_args=["--kv-cache-memory-bytes=128M"])
    with pytest.raises(sp.PlanError, match=r"--kv-cache-memory-bytes lots is not a size"):
        plan(gpus, p2p, QWEN25_3B, extra_args=["--kv-cache-memory-bytes", "lots"])


@pytest.mark.parametrize("text,size", [("1000", 1000), ("25.6k", 25600), ("4G", 4 * 1024 ** 3), ("2m", 2000000),
                                       ("1.5", None), ("1.5K", None), ("", None), ("4 G", None), ("-1", None),
                                       ("1e9", None)])
def test_sizes_are_read_as_vllm_reads_them(text, size):
    from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options
    assert vllm_options.size_bytes(text) == size


@pytest.mark.parametrize("wishes,words", [
    ({"tensor_parallel_size": 4}, "vllm_service_tensor_parallel_size=4 is larger than the 2 GPU(s) used"),
    ({"tensor_parallel_size": 3, "gpus": [0, 1]}, "vllm_service_tensor_parallel_size=3 is larger"),
    ({"max_model_len": 262144, "weight_format": "bf16", "kv_cache_dtype": "model"},
     "vllm_service_max_model_len=262144 does not fit"),
    ({"gpus": [0, 2]}, "vllm_service_gpus=[0, 2] names GPU(s) [2]"),
    ({"weight_format": "int3"}, "vllm_service_weight_format must be one of: auto, checkpoint"),
    ({"weight_format": "checkpoint"}, "vllm_service_weight_format=checkpoint, but the model has no quantization_config"),
    ({"mode": "sharded"}, "vllm_service_mode must be one of: auto, replicas, tensor_parallel; got 'sharded'"),
    ({"kv_cache_dtype": "fp8_e5m2"}, "vllm_service_kv_cache_dtype must be one of: auto, fp8, model; got 'fp8_e5m2'"),
    ({"enforce_eager": "maybe"}, "vllm_service_enforce_eager: got 'maybe' (a string); needs true or false"),
    ({"max_num_seqs": "6.5"}, "vllm_service_max_num_seqs: got '6.5' (a string); needs a whole number"),
    ({"extra_args": "--seed 7"}, "vllm_service_extra_args must be a list, got str '--seed 7'"),
    ({"enforce_eager": None}, "vllm_service_enforce_eager: got None (null); needs true or false"),
    ({"tokens_per_sequence": 100}, "wishes: tokens_per_sequence is not a wish of the plan (did you mean tokens_per_seq?)"),
    ({"gpu_memory_utilization": 1.5}, "vllm_service_gpu_memory_utilization=1.5 must be a number from 0.1 to 0.98"),
    # the last step: ports that exist, and arguments the unit carries as they are
    ({"base_port": 65535}, "vllm_service_base_port=65535 with 2 replica(s) puts the last one on port 65536"),
    ({"model_path": "/srv/my models/m"}, "cannot be passed safely through the unit: ['/srv/my models/m']"),
    ({"served_model_name": "qwen$x"}, "vllm_service_served_model_name / vllm_service_extra_args: arguments with "
                                      "spaces, quotes, $ or backslashes cannot be passed safely through the unit: "
                                      "['qwen$x']"),
])
def test_bad_wishes_fail_naming_the_variable(rtx4090x2, wishes, words):
    gpus, p2p = rtx4090x2
    with pytest.raises(sp.PlanError) as e:
        plan(gpus, p2p, QWEN3_4B, **wishes)
    assert words in str(e.value)


def test_replicas_refused_when_the_model_does_not_fit_one_gpu(rtx4090x2):
    gpus, p2p = rtx4090x2
    with pytest.raises(sp.PlanError, match="vllm_service_mode=replicas: one GPU"):
        plan(gpus, p2p, QWEN25_32B_AWQ, mode="replicas", max_model_len=16384)
    with pytest.raises(sp.PlanError, match="does not fit the 2 GPU"):
        plan(gpus, p2p, QWEN25_32B, weight_format="bf16")


def test_no_gpu_is_a_clear_error():
    with pytest.raises(sp.PlanError, match="no GPU in gpu_facts"):
        plan([], {}, QWEN25_3B)


def test_model_shape_counts_qwen_parameters():
    assert round(sp.model_shape(QWEN25_3B)["params"] / 1e9, 2) == 3.09   # Qwen2.5-3B: 3.09B
    assert round(sp.model_shape(QWEN3_4B)["params"] / 1e9, 2) == 4.02    # Qwen3-4B: 4.0B
    assert sp.kv_bytes_per_token(sp.model_shape(QWEN3_4B), 1) == 2 * 36 * 8 * 128 * 2


@pytest.mark.parametrize("version", ["0.6.3", "0.33.0"])
def test_shipped_tables_are_the_real_parsers(shared, version):
    """The role's tables equal ../shared's dumps of the real parsers (tools/vllm_option_table.py compact)."""
    dump = json.loads((shared.parent / "vllm" / ("vllm-%s-serve-flags.json" % version)).read_text())
    mine = table(version)
    assert mine["vllm_version"] == version == dump["vllm_version"]
    assert set(mine["options"]) == set(dump["options"])
    for flag, spec in dump["options"].items():
        assert mine["options"][flag]["takes_value"] == spec["takes_value"], flag


# The planner's steps, one at a time, on a plan that has gone through the steps before them.

def started(facts, config=None, version="0.33.0", **wishes):
    p = sp._Plan(dict(wishes, model_path="/srv/models/m"), config or QWEN25_3B, table(version))
    sp.select_gpus(p, facts)
    return p


def test_step_select_gpus_takes_the_smallest_memory_and_names_a_missing_gpu(rtx4090x2):
    gpus = rtx4090x2[0]
    mixed = [gpus[0], dict(gpus[1], memory_total_mib=12282, compute_capability="8.6")]
    p = started(mixed)
    assert p.used == [0, 1] and p.mem == 12282 * 1024 * 1024 and p.ccs == [(8, 9), (8, 6)]
    assert started(mixed, gpus=[1]).used == [1]
    with pytest.raises(sp.PlanError, match=r"vllm_service_gpus=\[3\] names GPU\(s\) \[3\], but the host has \[0, 1\]"):
        started(mixed, gpus=[3])
    with pytest.raises(sp.PlanError, match="no memory size"):
        started([dict(gpus[0], memory_total_mib=None)])


def test_step_weight_format_takes_the_weakest_gpu(rtx4090x2):
    gpus = rtx4090x2[0]
    p = started([gpus[0], dict(gpus[1], compute_capability="8.6")])
    sp.choose_weight_format(p)
    assert p.fmt == "bf16" and p.flags == [] and "compute capability 8.6/8.9" in p.decisions[0]["reason"]
    p = started([dict(gpus[0], compute_capability="8.6")], weight_format="fp8")
    sp.choose_weight_format(p)
    assert p.flags == ["--quantization", "fp8"] and "no FP8 tensor cores" in p.warnings[0]
    assert p.wbytes == sp.loaded_bytes(p.shape, "fp8") < sp.loaded_bytes(p.shape, "bf16")


def test_step_parallelism_leaves_an_odd_gpu_out_with_a_warning(h200x2_facts):
    three = [dict(h200x2_facts["gpus"][0], index=i) for i in range(3)]
    p = started(three, config=QWEN3_4B, tensor_parallel_size=2)
    sp.choose_weight_format(p)
    sp.choose_parallelism(p, {})
    assert p.tp == 2 and p.groups == [[0, 1]]
    assert p.warnings == ["GPU(s) [2] left unused: 3 GPU(s) do not split into groups of 2"]
    assert p.decisions[-1] == {"key": "mode", "value": "tensor_parallel", "reason": "asked: TP=2"}


def test_step_context_and_batch_fill_the_kv_budget(rtx4090x2):
    gpus = rtx4090x2[0]
    p = started(gpus, max_num_seqs=4096)
    for step in (sp.choose_weight_format, lambda q: sp.choose_parallelism(q, {}), sp.size_context_and_batch):
        step(p)
    assert p.cap == p.kv_tokens(1) > 0 and p.max_len == 32768
    assert p.max_seqs == 4096 and "expect preemption" in p.warnings[0]


def test_step_numa_and_replicas(h200x2_facts):
    gpus = [dict(h200x2_facts["gpus"][0], numa_node=0, cpu_affinity="0-7"),
            dict(h200x2_facts["gpus"][1], numa_node=1, cpu_affinity="8-15")]
    p = started(gpus, config=QWEN3_4B, numa="off")
    for step in (sp.choose_weight_format, lambda q: sp.choose_parallelism(q, {}), sp.size_context_and_batch,
                 sp.choose_cuda_graphs, sp.choose_numa):
        step(p)
    assert p.decisions[-1] == {"key": "numa", "value": "off", "reason": "vllm_service_numa=off"}
    replicas = sp.build_replicas(p, {})
    assert [(r["numa_node"], r["cpus"], r["port"]) for r in replicas] == [(None, None, 8000), (None, None, 8001)]
    assert p.name == "m" and all(r["options"][-2:] == ["--quantization", "fp8"] for r in replicas)


def test_extra_args_go_after_the_plans_options_on_every_replica_and_the_model_path_apart(rtx4090x2):
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, QWEN25_3B, model_path="/srv/models/ab", extra_args=["--seed", 7])
    assert p["model_path"] == "/srv/models/ab"
    assert all(r["options"][-2:] == ["--seed", "7"] and "/srv/models/ab" not in r["options"] for r in p["replicas"])


def test_the_wishes_have_one_home_that_the_role_and_the_module_read():
    """module_utils/wishes.py is the wishes' one home: the role's argument_specs, defaults and README table are written
    from it (tests/unit/test_wish_docs.py), the module declares no wish of its own (it takes a plain mapping and the
    planner checks it), and the role's preflight names no wish (filter plan_wishes picks them by the table)."""
    import yaml
    from ansible_collections.llmhost.vllm.plugins.module_utils import wishes
    from ansible_collections.llmhost.vllm.plugins.modules import vllm_serving_plan as mod
    doc = yaml.safe_load(mod.DOCUMENTATION)["options"]["wishes"]
    assert doc["type"] == "dict" and "suboptions" not in doc and not hasattr(mod, "WISH_TYPES")
    preflight = (ROOT / "roles" / "vllm_service" / "tasks" / "preflight.yml").read_text()
    task = [t for t in yaml.safe_load(preflight) if "llmhost.vllm.vllm_serving_plan" in t][0]
    assert "llmhost.vllm.plan_wishes" in task["llmhost.vllm.vllm_serving_plan"]["wishes"]
    assert not [k for k in wishes.WISHES if "vllm_service_%s " % k in preflight or "vllm_service_%s}" % k in preflight]
    defaults = yaml.safe_load((ROOT / "roles" / "vllm_service" / "defaults" / "main.yml").read_text())
    assert {k: defaults["vllm_service_" + k] for k in wishes.WISHES} == {k: w["default"] for k, w in wishes.WISHES.items()}


@pytest.mark.parametrize("given,typed", [
    ({"max_num_seqs": "64"}, {"max_num_seqs": 64}),                    # digits from -e
    ({"gpu_memory_utilization": "0.8"}, {"gpu_memory_utilization": 0.8}),
    ({"enforce_eager": "yes"}, {"enforce_eager": True}),
    ({"extra_args": ["--seed", 7]}, {"extra_args": ["--seed", "7"]}),
    ({"gpus": [0], "max_num_seqs": None}, {"gpus": [0], "max_num_seqs": 0}),   # null: the default
])
def test_the_planner_converts_each_wish_as_the_first_play_reads_it(given, typed):
    w = sp.typed_wishes(given)
    assert {k: w[k] for k in typed} == typed and w["tokens_per_seq"] == 2048


def test_a_wish_the_plan_passes_as_it_is_is_one_row_of_the_table(rtx4090x2, monkeypatch):
    """The table's `pass` rows reach the argv with no code of their own, and extra_args may not set them."""
    from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options, wishes
    rows = {"swap_space": {"type": "int", "default": 0, "range": (0, 1024), "flags": ["--swap-space"], "pass": True,
                           "doc": "GiB of CPU swap per GPU."},
            "disable_log_stats": {"type": "bool", "default": False, "flags": ["--disable-log-stats"], "pass": True,
                                  "doc": "No periodic stats in the log."}}
    monkeypatch.setattr(wishes, "WISHES", dict(wishes.WISHES, **rows))
    monkeypatch.setattr(wishes, "DEFAULT_WISHES", dict(wishes.DEFAULT_WISHES, swap_space=0, disable_log_stats=False))
    gpus, p2p = rtx4090x2
    opts = plan(gpus, p2p, QWEN25_3B, version="0.6.3", swap_space="8", disable_log_stats=True)["replicas"][0]["options"]
    assert opts[-3:] == ["--swap-space", "8", "--disable-log-stats"]
    assert "--swap-space" not in plan(gpus, p2p, QWEN25_3B, version="0.6.3")["replicas"][0]["options"]
    with pytest.raises(sp.PlanError, match="vllm_service_swap_space=2000 must be a number from 0 to 1024"):
        plan(gpus, p2p, QWEN25_3B, version="0.6.3", swap_space=2000)
    monkeypatch.setattr(vllm_options, "OWNED", dict(vllm_options.OWNED, **{"--swap-space": "vllm_service_swap_space"}))
    with pytest.raises(sp.PlanError, match="vllm_service_swap_space"):
        plan(gpus, p2p, QWEN25_3B, version="0.6.3", extra_args=["--swap-space", "4"])


def test_every_option_a_wish_owns_is_refused_in_extra_args():
    from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options, wishes
    assert {flag: vllm_options.owner(flag) for flag in wishes.OWNED_FLAGS} == wishes.OWNED_FLAGS
    assert vllm_options.owner("--max-num-seqs") == "vllm_service_max_num_seqs"


# Layout by what each choice serves (module_utils/layouts.py), on the public 2x4090 facts.

def test_a_30b_class_awq_model_gets_tensor_parallel_with_both_layouts_figures(rtx4090x2):
    """Its weights fit one 4090, but a replica keeps ~1 GiB for the KV cache (vLLM had 4,688 tokens at that budget:
    tests/fixtures/device/vllm-0.25.0-plans-4090budget); TP=2 holds half the weights per GPU and serves far more."""
    gpus, p2p = rtx4090x2
    for version in ("0.33.0", "0.6.3"):
        p = plan(gpus, p2p, shapes.QWEN25_32B_AWQ, version=version)
        assert p["mode"] == "tensor_parallel" and p["tensor_parallel_size"] == 2, version
        assert p["weight_format"] == "awq" and p["kv_cache_dtype"] == "model"   # AWQ with an FP8 cache failed
        reason = keyed(p)["mode"]["reason"]
        assert reason.startswith("the model (18.1 GiB of awq weights) fits one GPU. Chosen for the most tokens/s at "
                                 "full load (vllm_service_goal=throughput): TP=2: 9.0 GiB of weights")
        assert "; against one replica per GPU: 18.1 GiB of weights and 6103 tokens of KV cache per replica (2 " \
               "sequences" in reason
        assert "over PCIe gen 4 x16 through host memory (no peer-to-peer path)" in reason
        assert "This rests on an estimate" in reason and "never on PCIe" in reason
        assert p["replicas"][0]["env"]["NCCL_P2P_DISABLE"] == "1"
    tp, rep = layouts_of(gpus, p2p, shapes.QWEN25_32B_AWQ)
    assert tp["seqs"] >= 10 * rep["seqs"] and tp["tokens_per_s"] > 3 * rep["tokens_per_s"]


def layouts_of(gpus, p2p, config, **wishes):
    p = plan(gpus, p2p, config, **wishes)
    chosen = p["layouts"]["chosen"]
    return chosen, p["layouts"]["runner_up"]


def test_a_mixture_of_experts_model_counts_its_experts_and_splits_over_two_4090s(rtx4090x2):
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, shapes.QWEN3_30B_A3B)
    assert (p["mode"], p["tensor_parallel_size"], p["weight_format"]) == ("tensor_parallel", 2, "fp8")
    assert p["estimates"]["weight_gib"] == 29.13 and round(p["estimates"]["params"] / 1e9, 1) == 30.5
    assert "does not fit one GPU" in keyed(p)["mode"]["reason"]
    # one 4090 cannot hold it; the seed's vLLM gets no FP8 weights (measured with 0.25.0), and 57 GiB fits nowhere
    with pytest.raises(sp.PlanError, match=r"the model \(29\.1 GiB of fp8 weights, 4096 tokens of context\) does not "
                                           r"fit the 1 GPU"):
        plan(gpus[:1], p2p, shapes.QWEN3_30B_A3B)
    with pytest.raises(sp.PlanError, match=r"\(57\.0 GiB of bf16 weights.*does not fit the 2 GPU"):
        plan(gpus, p2p, shapes.QWEN3_30B_A3B, version="0.6.3")


@pytest.mark.parametrize("config,seqs", [(shapes.QWEN3_4B, 109), (shapes.QWEN3_8B, 76)])
def test_the_4b_and_8b_shapes_keep_their_measured_plans_as_one_replica_per_4090(rtx4090x2, config, seqs):
    gpus, p2p = rtx4090x2
    one, two = plan(gpus[:1], p2p, config), plan(gpus, p2p, config)
    assert two["mode"] == "replicas" and len(two["replicas"]) == 2
    for p in (one, two):
        assert (p["weight_format"], p["kv_cache_dtype"], p["max_model_len"], p["max_num_seqs"]) == \
            ("fp8", "fp8", 32768, seqs)
    reason = keyed(two)["mode"]["reason"]
    assert "Chosen for the most tokens/s at full load" in reason and "against TP=2" in reason
    chosen, other = layouts_of(gpus, p2p, config)
    assert chosen["tp"] == 1 and other["tp"] == 2


def test_goal_latency_compares_single_stream_steps(rtx4090x2):
    gpus, p2p = rtx4090x2
    p = plan(gpus, p2p, shapes.QWEN25_32B_AWQ, goal="latency")
    chosen, other = p["layouts"]["chosen"], p["layouts"]["runner_up"]
    assert "Chosen for the shortest single-stream step (vllm_service_goal=latency)" in keyed(p)["mode"]["reason"]
    # half the weights read per GPU and step, against 128 small all-reduces through host memory
    assert chosen["tp"] == 2 and chosen["single_ms"] * sp.layouts.REPLICAS_KEPT_WITHIN < other["single_ms"]
    # a small model: the all-reduces cost what the halved reads save, and replicas stay
    assert plan(gpus, p2p, shapes.QWEN3_4B, goal="latency")["mode"] == "replicas"


def test_replicas_are_kept_unless_tensor_parallel_is_clearly_ahead():
    from ansible_collections.llmhost.vllm.plugins.module_utils import layouts
    replicas = {"tp": 1, "tokens_per_s": 1000.0, "single_ms": 10.0}
    close = {"tp": 2, "tokens_per_s": 1090.0, "single_ms": 9.2}
    ahead = {"tp": 2, "tokens_per_s": 1200.0, "single_ms": 8.0}
    assert layouts.choose([replicas, close], "throughput") == (replicas, close)
    assert layouts.choose([replicas, ahead], "throughput") == (ahead, replicas)
    assert layouts.choose([replicas, close], "latency") == (replicas, close)
    assert layouts.choose([replicas, ahead], "latency") == (ahead, replicas)
    assert layouts.choose([ahead], "latency") == (ahead, None)


def test_the_link_comes_from_the_facts_and_an_unknown_one_is_said_so(rtx4090x2):
    gpus, p2p = rtx4090x2
    bare = [dict(g, pcie={}) for g in gpus]
    reason = keyed(plan(bare, p2p, shapes.QWEN25_32B_AWQ))["mode"]["reason"]
    assert "PCIe gen 4 x16 (assumed: gpu_facts has no link) through host memory" in reason
    other = [dict(g, name="NVIDIA Mystery GPU") for g in gpus]
    assert "a guess: a GPU the plan does not know" in keyed(plan(other, p2p, shapes.QWEN25_32B_AWQ))["mode"]["reason"]


@pytest.mark.parametrize("value", [0.05, 0.0999, 0.1, 0.5, 0.98, 0.9801, 1.0])
def test_the_first_play_and_the_plan_give_one_verdict_on_the_memory_share(rtx4090x2, value):
    """One range (wishes.UTILIZATION_RANGE): 0.05 was let through by the first play (0.01 to 1) and refused
    only by the plan, after kernel, driver, vLLM and model had changed the host."""
    from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs, value_checks
    name = "vllm_service_gpu_memory_utilization"
    low, high = role_inputs.TABLES["vllm_service"]["ranges"][name]      # what the first play checks it against
    first_play = value_checks.range_errors({name: [value, low, high]})
    try:
        plan(rtx4090x2[0], rtx4090x2[1], QWEN25_3B, gpu_memory_utilization=value)
        planned = True
    except sp.PlanError as e:
        planned = "gpu_memory_utilization" not in str(e)
    assert bool(first_play) != planned, (value, first_play)
