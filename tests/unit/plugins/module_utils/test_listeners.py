"""One host, one port each (module_utils/listeners.py), on the roles' real defaults."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.port_clashes import port_clashes
from ansible_collections.llmhost.vllm.plugins.module_utils.listeners import clash_errors, listeners

CLIENTS = [{"name": "alice", "key": "alice-secret-key-0123456789"}]


def test_the_defaults_clash_nowhere_with_or_without_a_gateway():
    assert port_clashes({}) == []
    assert port_clashes({"gateway_clients": CLIENTS}) == []


@pytest.mark.parametrize("host_vars,words", [
    ({"gateway_clients": CLIENTS, "gateway_port": 8001},
     "vllm_service_base_port (ports 8000-8007) and gateway_port=8001 would listen on the same port"),
    ({"monitoring_prometheus_port": 9100},
     "monitoring_prometheus_port=9100 and monitoring_node_exporter_port=9100 would listen on the same port"),
    ({"monitoring_alertmanager_port": 9835},
     "monitoring_alertmanager_port=9835 and monitoring_gpu_exporter_port=9835"),
    ({"vllm_service_base_port": 9088, "vllm_service_gpus": [0, 1, 2]},
     "vllm_service_base_port (ports 9088-9090) and monitoring_prometheus_port=9090"),
    # every address clashes with loopback
    ({"gateway_clients": CLIENTS, "gateway_port": 9090, "gateway_listen_address": "0.0.0.0"},
     "gateway_port=9090 and monitoring_prometheus_port=9090"),
    # a Ray node takes its ports on every address, on a host of its group
    ({"ray_cluster_group": "gpus", "group_names": ["vllm_hosts", "gpus"], "monitoring_node_exporter_port": 6380},
     "monitoring_node_exporter_port=6380 and ray_cluster_ports.node_manager=6380 would listen on the same port"),
    ({"ray_cluster_group": "gpus", "group_names": ["gpus"], "vllm_service_base_port": 10990},
     "vllm_service_base_port (ports 10990-10997) and ray_cluster_worker_ports (ports 10002-10999)"),
])
def test_two_listeners_on_one_port_are_named_both(host_vars, words):
    assert any(words in e for e in port_clashes(host_vars)), port_clashes(host_vars)


@pytest.mark.parametrize("host_vars", [
    # a gateway that is not wanted takes no port
    {"gateway_port": 8001},
    # a service that is off takes none
    {"monitoring_node_exporter": False, "monitoring_prometheus_port": 9100},
    {"monitoring_alertmanager": "none", "monitoring_alertmanager_port": 9100, "monitoring_node_exporter": "false"},
    # two GPUs listed: the replicas take 8000-8001 only
    {"vllm_service_gpus": [0, 1], "gateway_clients": CLIENTS, "gateway_port": 8002},
    # different addresses, neither of them every address
    {"gateway_clients": CLIENTS, "gateway_port": 9090, "gateway_listen_address": "10.0.0.5"},
    # Ray's ports on a host outside its group, or without a cluster, take nothing
    {"ray_cluster_group": "gpus", "group_names": ["vllm_hosts"], "monitoring_node_exporter_port": 6380},
    {"monitoring_node_exporter_port": 6380},
])
def test_what_takes_no_port_or_another_address_does_not_clash(host_vars):
    assert port_clashes(host_vars) == []


def test_the_preflight_count_of_replicas_narrows_the_range():
    merged = {"vllm_service_base_port": 8000, "vllm_service_host": "127.0.0.1", "vllm_service_gpus": "all",
              "gateway_state": "present", "gateway_clients": [], "gateway_port": 8003, "gateway_listen_address": "0.0.0.0",
              "monitoring_listen_address": "127.0.0.1", "monitoring_prometheus": "external", "monitoring_alertmanager": "none",
              "monitoring_node_exporter": False, "monitoring_gpu_exporter": False}
    assert listeners(merged, replicas=2)[0] == ("vllm_service_base_port", 8000, 8001, "127.0.0.1")
    assert clash_errors(merged, replicas=2) == [] and len(clash_errors(merged)) == 1
