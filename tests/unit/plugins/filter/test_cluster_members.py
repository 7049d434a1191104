"""The cluster's filters read only what they need of each member's variables (plugin_utils member_values)."""
from ansible_collections.llmhost.vllm.plugins.filter.ray_cluster_view import ray_cluster_view
from ansible_collections.llmhost.vllm.plugins.filter.serving_members import serving_members
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import member_values

GPU = {"index": 0, "compute_capability": "8.9", "memory_total_mib": 24564}
HOSTVARS = {
    "box1": {"ansible_facts": {"enp65s0_1": {"ipv4": {"address": "10.0.0.1"}}, "gpu_topology": {"gpus": [GPU] * 2}},
             "secret": "not read"},
    "box2": {"ansible_facts": {"enp65s0_1": {"ipv4": {"address": "10.0.0.2"}}}, "ray_cluster_node_address": "10.0.0.2",
             "vllm_service_plan_gpus": [GPU], "vllm_service_plan_p2p": {}},
}
SETTINGS = {"group": "cluster", "group_hosts": ["box1", "box2", "box3"], "interface": "enp65s0.1", "head": "",
            "ports": {"gcs": 6379}, "workers": [10002, 10999]}


def test_each_member_gives_only_the_keys_and_facts_asked():
    got = member_values(HOSTVARS, ["box1", "box3"], ["ray_cluster_node_address"], ["enp65s0_1", ""])
    assert got == {"box1": {"ray_cluster_node_address": None,
                            "ansible_facts": {"enp65s0_1": {"ipv4": {"address": "10.0.0.1"}}}},
                   "box3": {"ray_cluster_node_address": None, "ansible_facts": {}}}


def test_the_view_reads_each_member_s_interface_and_names_one_that_is_unknown():
    view = ray_cluster_view(HOSTVARS, "box1", ["box1", "box2", "box3"], SETTINGS)
    assert [(m["name"], m["address"]) for m in view["members"]] == [("box1", "10.0.0.1"), ("box2", "10.0.0.2"),
                                                                    ("box3", "")]
    assert view["part"] == "head" and any(e.startswith("box3: no address") for e in view["errors"]), view["errors"]


def test_a_member_s_gpus_are_those_given_to_the_plan_else_those_read_on_it():
    assert [(m["name"], len(m["gpus"])) for m in serving_members(HOSTVARS, ["box2", "box1", "box3"])] == [
        ("box2", 1), ("box1", 2), ("box3", 0)]
