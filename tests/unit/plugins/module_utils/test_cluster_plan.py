"""The serving plan across the hosts of a Ray cluster (module_utils/cluster_plan.py) on two of the design card's
boxes (2x RTX 4090 each, from public captures) and a 72B model in AWQ, with the profiles' real option tables."""
import json
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import cluster_plan as cp
from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp

TABLES = Path(__file__).resolve().parents[4] / "roles" / "vllm_service" / "files" / "vllm-options"
# Qwen2.5-72B-Instruct-AWQ's config.json (its published numbers): about 41 GB of weights, too much for 2x 24 GB
# with a useful KV cache.
QWEN25_72B_AWQ = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 8192, "num_hidden_layers": 80,
                  "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 29568,
                  "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False,
                  "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
QWEN25_3B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 36,
             "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 11008,
             "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}
WISHES = {"model_path": "/srv/models/qwen72b-awq"}


def table(version):
    return json.loads((TABLES / ("%s.json" % version)).read_text())


def hosts(box, count=2):
    gpus, p2p = box
    return [{"name": "box%d" % i, "gpus": gpus, "p2p": p2p} for i in range(1, count + 1)]


def test_a_72b_awq_model_spans_two_4090_boxes_in_two_stages(rtx4090x2):
    got = cp.across_hosts(hosts(rtx4090x2), QWEN25_72B_AWQ, WISHES, table("0.6.3"), "enp65s0", 25000)
    assert (got["span"], got["tensor_parallel_size"], got["pipeline_parallel_size"]) == (2, 2, 2)
    assert got["head"] == "box1" and got["workers"] == ["box2"] and got["weight_format"] == "awq"
    assert got["options"][:6] == ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "2",
                                  "--distributed-executor-backend", "ray"]
    assert "one host cannot serve it (the model (" in got["reason"] and got["kv_tokens_per_gpu"] > 100000
    # the cross-host traffic on the cluster's interface; each box's pair has no P2P (the user's NS matrix)
    assert got["env"]["box2"] == {"NCCL_SOCKET_IFNAME": "enp65s0", "GLOO_SOCKET_IFNAME": "enp65s0",
                                  "NCCL_P2P_DISABLE": "1"}
    assert got["warnings"] == []


def test_a_model_one_box_holds_stays_on_the_head(rtx4090x2):
    got = cp.across_hosts(hosts(rtx4090x2), QWEN25_3B, WISHES, table("0.6.3"), "enp65s0")
    assert got["span"] == 1 and got["plan"]["replicas"] and "one host serves" in got["reason"]


def test_a_slow_link_is_warned_about(rtx4090x2):
    got = cp.across_hosts(hosts(rtx4090x2), QWEN25_72B_AWQ, WISHES, table("0.6.3"), "eno1", 1000)
    assert got["warnings"] == ["the cluster's link runs at 1000 Mbit/s, below 10000: every token waits on the "
                               "activations passed between stages"]


def test_what_cannot_span_hosts_is_refused_by_name(rtx4090x2):
    gpus, p2p = rtx4090x2
    uneven = hosts(rtx4090x2) + [{"name": "box3", "gpus": gpus[:1], "p2p": {}}]
    with pytest.raises(sp.PlanError, match=r"hosts differ \(box1: 2x NVIDIA GeForce RTX 4090, .*box3: 1x NVIDIA"):
        cp.across_hosts(uneven, QWEN25_72B_AWQ, WISHES, table("0.6.3"), "eno1")
    with pytest.raises(sp.PlanError, match="80 layers do not divide into 3 pipeline stages"):
        cp.across_hosts(hosts(rtx4090x2, 3), QWEN25_72B_AWQ, WISHES, table("0.6.3"), "eno1")
    with pytest.raises(sp.PlanError, match="has no --pipeline-parallel-size"):
        cp.across_hosts(hosts(rtx4090x2), QWEN25_72B_AWQ, WISHES, {"vllm_version": "0.0", "options": {}}, "eno1")
    bf16 = dict(QWEN25_72B_AWQ)
    del bf16["quantization_config"]
    with pytest.raises(sp.PlanError, match="does not fit even across the 2 hosts"):
        cp.across_hosts(hosts(rtx4090x2), bf16, dict(WISHES, weight_format="bf16"), table("0.6.3"), "eno1")


def test_one_host_that_cannot_hold_it_says_why_as_before(rtx4090x2):
    with pytest.raises(sp.PlanError, match="does not fit the 2 GPU"):
        cp.across_hosts(hosts(rtx4090x2, 1), QWEN25_72B_AWQ, WISHES, table("0.6.3"), "eno1")


CLUSTER = {"interface": "enp65s0", "ray_address": "10.0.0.1:6379", "across": "auto", "link_mbps": 25000}


def test_host_plan_puts_the_72b_api_server_on_the_head_with_stage_options(rtx4090x2):
    head = cp.host_plan(hosts(rtx4090x2), "box1", QWEN25_72B_AWQ, WISHES, table("0.6.3"), CLUSTER)
    assert (head["mode"], head["span"], head["cluster_role"]) == ("pipeline_parallel", 2, "head")
    (server,) = head["replicas"]
    assert server["options"][-4:] == ["--pipeline-parallel-size", "2", "--distributed-executor-backend", "ray"]
    assert server["options"][server["options"].index("--tensor-parallel-size") + 1] == "2"
    assert {k: server["env"][k] for k in ("RAY_ADDRESS", "NCCL_SOCKET_IFNAME", "NCCL_P2P_DISABLE")} == {
        "RAY_ADDRESS": "10.0.0.1:6379", "NCCL_SOCKET_IFNAME": "enp65s0", "NCCL_P2P_DISABLE": "1"}
    span = [d for d in head["decisions"] if d["key"] == "span"]
    assert span[0]["value"] == 2 and span[0]["reason"].startswith("one host cannot serve it (the model (")
    # the stage's KV cache: 40 of 80 layers and half the weights on each GPU leave room for a long context
    assert head["max_model_len"] == 32768 and head["max_num_seqs"] >= 1 and head["model"]["layers"] == 80


def test_a_worker_of_a_staged_plan_serves_nothing_itself(rtx4090x2):
    worker = cp.host_plan(hosts(rtx4090x2), "box2", QWEN25_72B_AWQ, WISHES, table("0.6.3"), CLUSTER)
    assert worker["cluster_role"] == "worker" and worker["replicas"] == [] and worker["head"] == "box1"
    assert worker["node_env"]["box2"]["NCCL_SOCKET_IFNAME"] == "enp65s0"


def test_a_model_one_host_holds_is_served_by_every_member_unless_asked_to_span(rtx4090x2):
    for name in ("box1", "box2"):
        plan = cp.host_plan(hosts(rtx4090x2), name, QWEN25_3B, WISHES, table("0.6.3"), CLUSTER)
        assert plan["span"] == 1 and len(plan["replicas"]) == 2 and plan["cluster_role"] == "member"
    asked = cp.host_plan(hosts(rtx4090x2), "box1", QWEN25_3B, WISHES, table("0.6.3"), dict(CLUSTER, across="always"))
    (span,) = [d["reason"] for d in asked["decisions"] if d["key"] == "span"]
    assert asked["span"] == 2 and span.startswith("vllm_service_across_hosts=always (asked), though one host could")


def test_host_plan_warns_of_a_slow_link_and_not_of_one_it_cannot_read(rtx4090x2):
    slow = cp.host_plan(hosts(rtx4090x2), "box1", QWEN25_72B_AWQ, WISHES, table("0.6.3"), dict(CLUSTER, link_mbps=1000))
    assert slow["warnings"] == ["the cluster's link runs at 1000 Mbit/s, below 10000: every token waits on the "
                                "activations passed between stages"]
    for unread in (-1, None, 0):
        plan = cp.host_plan(hosts(rtx4090x2), "box1", QWEN25_72B_AWQ, WISHES, table("0.6.3"),
                            dict(CLUSTER, link_mbps=unread))
        assert plan["warnings"] == [], unread


def test_host_plan_refuses_a_host_outside_the_cluster(rtx4090x2):
    with pytest.raises(sp.PlanError, match=r"this host \(box9\) is not a member \(box1, box2\)"):
        cp.host_plan(hosts(rtx4090x2), "box9", QWEN25_3B, WISHES, table("0.6.3"), CLUSTER)
