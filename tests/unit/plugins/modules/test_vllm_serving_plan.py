"""vllm_serving_plan as the role calls it: wishes typed and checked by the module's argument spec."""
import json
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.modules import vllm_serving_plan

ROOT = Path(__file__).resolve().parents[4]
TABLE = json.loads((ROOT / "roles" / "vllm_service" / "files" / "vllm-options" / "0.6.3.json").read_text())
GPUS = [{"index": i, "compute_capability": "8.9", "memory_total_mib": 24564, "numa_node": 0} for i in (0, 1)]
CONFIG = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 36,
          "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 11008,
          "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}


def run(wishes, capsys):
    args = {"gpus": GPUS, "p2p": {"0,1": "NS"}, "model_path": "/srv/models/q", "model_config": CONFIG,
            "option_table": TABLE, "wishes": wishes}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            vllm_serving_plan.main()
    return json.loads(capsys.readouterr().out)


def test_role_shaped_wishes_are_converted_and_planned(capsys):
    # the role's templated values arrive as strings
    out = run({"mode": "auto", "tensor_parallel_size": "0", "max_model_len": "8192", "enforce_eager": "false",
               "base_port": "9000", "extra_args": ["--seed", 7], "numa": "off"}, capsys)
    plan = out["plan"]
    assert not out.get("failed") and plan["model_path"] == "/srv/models/q" and plan["max_model_len"] == 8192
    assert [r["port"] for r in plan["replicas"]] == [9000, 9001]
    assert plan["replicas"][1]["options"][-2:] == ["--seed", "7"]


@pytest.mark.parametrize("wishes,words", [
    ({"mode": "sharded"}, "vllm_service_mode must be one of: auto, replicas, tensor_parallel; got 'sharded'"),
    ({"weight_format": "int3"}, "vllm_service_weight_format must be one of: auto, checkpoint, bf16, fp16, fp8"),
    ({"kv_cache_dtype": "fp16"}, "vllm_service_kv_cache_dtype must be one of: auto, fp8, model; got 'fp16'"),
    ({"max_num_seqs": "many"}, "vllm_service_max_num_seqs: got 'many' (a string); needs a whole number"),
    ({"tokens_per_sequence": 100}, "tokens_per_sequence is not a wish of the plan (did you mean tokens_per_seq?)"),
])
def test_bad_wishes_are_refused_by_the_planner_in_the_first_play_s_words(capsys, wishes, words):
    out = run(wishes, capsys)
    assert out["failed"] and words in out["msg"]


# Qwen2.5-72B-Instruct-AWQ's published config: about 41 GB of weights, more than one 2x 24 GB box holds with a cache.
QWEN25_72B_AWQ = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 8192, "num_hidden_layers": 80,
                  "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 29568,
                  "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False,
                  "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}


def run_cluster(this, cluster_args, capsys):
    members = [{"name": name, "gpus": GPUS, "p2p": {"0,1": "NS"}} for name in ("box1", "box2")]
    args = {"gpus": GPUS, "p2p": {"0,1": "NS"}, "model_path": "/srv/models/q", "model_config": QWEN25_72B_AWQ,
            "option_table": TABLE, "wishes": {"served_model_name": "qwen72b"},
            "cluster": dict({"members": members, "this": this, "interface": "enp65s0",
                             "ray_address": "10.0.0.1:6379"}, **cluster_args)}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            vllm_serving_plan.main()
    return json.loads(capsys.readouterr().out)


def test_a_cluster_s_head_serves_the_model_in_stages_and_its_worker_nothing(capsys):
    head = run_cluster("box1", {}, capsys)["plan"]
    assert (head["mode"], head["span"], head["cluster_role"], len(head["replicas"])) == (
        "pipeline_parallel", 2, "head", 1)
    assert head["replicas"][0]["env"]["RAY_ADDRESS"] == "10.0.0.1:6379"
    assert "--distributed-executor-backend" in head["replicas"][0]["options"]
    worker = run_cluster("box2", {"link_mbps": "1000"}, capsys)["plan"]
    assert worker["cluster_role"] == "worker" and worker["replicas"] == []
    assert any("1000 Mbit/s, below 10000" in w for w in worker["warnings"])


def test_a_cluster_option_out_of_its_choices_is_refused_by_the_spec(capsys):
    out = run_cluster("box1", {"across": "sometimes"}, capsys)
    assert out["failed"] and "value of across must be one of: auto, always, got: sometimes" in out["msg"]


def run_tuned(capsys, **extra):
    args = dict({"gpus": GPUS, "p2p": {"0,1": "NS"}, "model_path": "/srv/models/q", "model_config": CONFIG,
                 "option_table": TABLE, "wishes": {"max_model_len": "8192"}}, **extra)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            vllm_serving_plan.main()
    return json.loads(capsys.readouterr().out)


def test_the_adopted_tuning_is_planned_and_a_later_trial_and_the_candidates_include_it(capsys):
    """tuned.json as the role reads it: adopted under the user's wishes, with the plan's decision; a candidate being
    measured replaces it; the candidates are re-planned around the planner's own choice, the adopted one among them."""
    fp = run_tuned(capsys)["fingerprint"]
    rec = {"candidate": "seqs_half", "wishes": {"max_num_seqs": 8}, "extra_args": ["--max-num-batched-tokens", "2048"],
           "for": fp, "adopted": "2026-12-07T11:00:00Z", "why": "seqs_half: fastest", "goal": "throughput",
           "measured": {"throughput": 1.0, "p95_ttft_ms": 1.0}}
    out = run_tuned(capsys, tuned=json.dumps(rec), candidates={"limit": 10})
    assert out["tuning"]["state"] == "adopted" and out["plan"]["max_num_seqs"] == 8
    assert out["plan"]["decisions"][-1]["key"] == "tuning"
    assert out["plan"]["replicas"][1]["options"][-2:] == ["--max-num-batched-tokens", "2048"]
    names = [c["name"] for c in out["candidates"]]
    assert names[0] == "plan" and out["candidates"][0]["plan"]["max_num_seqs"] != 8
    assert names[1] == "adopted_seqs_half" and "the adopted tuning (tuned.json)" in out["candidates"][1]["reason"]
    trial = {"name": "batched_8192", "wishes": {}, "extra_args": ["--max-num-batched-tokens", "8192"], "reason": "r"}
    out = run_tuned(capsys, tuned=json.dumps(rec), trial=trial)
    assert out["tuning"] == {"state": "trial", "candidate": "batched_8192"}
    assert out["plan"]["replicas"][0]["options"][-2:] == ["--max-num-batched-tokens", "8192"]
    assert out["plan"]["max_num_seqs"] != 8


def test_a_tuning_the_planner_now_refuses_is_set_aside_with_a_warning(capsys):
    fp = run_tuned(capsys)["fingerprint"]
    rec = {"candidate": "mine", "wishes": {"max_model_len": 10 ** 7}, "extra_args": [], "for": fp,
           "adopted": "2026-12-07T11:00:00Z", "why": "w", "goal": "throughput", "measured": {}}
    out = run_tuned(capsys, wishes={}, tuned=json.dumps(rec))
    assert not out.get("failed") and out["tuning"]["state"] == "set_aside"
    assert "with it the planner refuses" in out["plan"]["warnings"][-1]
    out = run_tuned(capsys, tuned="{half written")
    assert out["tuning"]["state"] == "set_aside" and "not a record of playbooks/tune.yml" in out["plan"]["warnings"][-1]
