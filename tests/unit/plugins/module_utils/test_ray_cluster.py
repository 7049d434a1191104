"""module_utils/ray_cluster.py: each node's command line, the checks of the cluster, its firewall table and what
`ray status` says. The status fixture is real Ray 2.60.0's output (tests/fixtures/ray/)."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster as rc

ROOT = Path(__file__).resolve().parents[4]
DEFAULTS = yaml.safe_load((ROOT / "roles/ray_cluster/defaults/main.yml").read_text())
PORTS, WORKERS = DEFAULTS["ray_cluster_ports"], DEFAULTS["ray_cluster_worker_ports"]


def test_the_head_starts_the_cluster_with_every_port_fixed_and_no_dashboard():
    argv = rc.node_argv("/opt/v/bin/ray", {"address": "10.0.0.1", "head": True, "gpus": 2}, "10.0.0.1", PORTS, WORKERS,
                        "/var/lib/llmhost-ray/tmp")
    assert argv[:5] == ["/opt/v/bin/ray", "start", "--block", "--disable-usage-stats", "--node-ip-address=10.0.0.1"]
    assert argv[5:] == ["--head", "--include-dashboard=false", "--port=6379", "--node-manager-port=6380",
                        "--object-manager-port=6381", "--dashboard-agent-grpc-port=6382",
                        "--dashboard-agent-listen-port=6383", "--runtime-env-agent-port=6384",
                        "--metrics-export-port=6385", "--min-worker-port=10002", "--max-worker-port=10999",
                        "--num-gpus=2", "--temp-dir=/var/lib/llmhost-ray/tmp"]


def test_a_worker_joins_the_head_s_gcs_and_never_starts_one():
    argv = rc.node_argv("ray", {"address": "fd00::2", "head": False, "gpus": 1}, "fd00::1", PORTS, WORKERS, "/t")
    assert "--address=[fd00::1]:6379" in argv and "--head" not in argv and "--port=6379" not in argv
    assert "--node-manager-port=6380" in argv and "--num-gpus=1" in argv


@pytest.mark.parametrize("address, why", [
    ("127.0.0.1", "is a loopback address: Ray puts the host's default-route address in its place"),
    ("8.8.8.8", "is a public address: Ray has no authentication"),
    ("0.0.0.0", "is not one host's address"),
    ("eth0", "'eth0' is not an IP address"),
    ("10.0.0.256", "'10.0.0.256' is not an IP address"),
])
def test_a_node_address_ray_cannot_use_is_refused_saying_why(address, why):
    assert why in rc.address_problem(address)


@pytest.mark.parametrize("address", ["10.1.2.3", "192.168.10.11", "172.16.0.9", "fd00::5", "fe80::1"])
def test_a_private_node_address_is_taken(address):
    assert rc.address_problem(address) is None


@pytest.mark.parametrize("ports, workers, expected", [
    (dict(PORTS, metrics=6379), WORKERS, ["ray_cluster_ports: gcs and metrics are both 6379"]),
    (dict(PORTS, gcs=10500), WORKERS, ["ray_cluster_ports: gcs (10500) is inside ray_cluster_worker_ports 10002-10999"]),
    (dict(PORTS, gcs=80), WORKERS, ["ray_cluster_ports: gcs is 80, not a whole number from 1024 to 65535"]),
    (dict(PORTS, gcs=True), WORKERS, ["ray_cluster_ports: gcs is True, not a whole number from 1024 to 65535"]),
    ({k: v for k, v in PORTS.items() if k != "metrics"}, WORKERS,
     ["ray_cluster_ports: metrics is None, not a whole number from 1024 to 65535"]),
    (PORTS, [10999, 10002], ["ray_cluster_worker_ports: 10999 is above 10002"]),
    (PORTS, [10002], ["ray_cluster_worker_ports: [None, None], not the lowest and highest port, whole numbers from "
                      "1024 to 65535"]),
    (PORTS, WORKERS, []),
])
def test_ports_are_whole_fixed_distinct_and_outside_the_workers_range(ports, workers, expected):
    assert rc.port_errors(ports, workers) == expected


def _facts(address):
    return {"ansible_facts": {"enp65s0": {"ipv4": {"address": address}, "ipv6": [{"address": "fe80::1"}]}}}


def _view(hosts, this="box1", in_run=("box1", "box2"), **settings):
    base = {"group": "cluster", "group_hosts": ["box1", "box2"], "interface": "enp65s0", "head": "",
            "ports": PORTS, "workers": WORKERS}
    return rc.cluster_view(hosts, this, list(in_run), dict(base, **settings))


def test_the_view_names_the_head_the_members_and_the_gcs_address():
    hosts = {"box1": _facts("10.0.0.1"), "box2": _facts("10.0.0.2")}
    head = _view(hosts)
    assert (head["part"], head["errors"], head["address"]) == ("head", [], "10.0.0.1:6379")
    assert [(m["name"], m["address"], m["head"]) for m in head["members"]] == [("box1", "10.0.0.1", True),
                                                                               ("box2", "10.0.0.2", False)]
    assert _view(hosts, this="box2")["part"] == "worker"
    named = _view(hosts, this="box2", head="box2")
    assert named["part"] == "head" and named["address"] == "10.0.0.2:6379"


def test_a_host_outside_the_group_has_no_part_and_no_cluster_check():
    assert _view({}, this="gateway-box", in_run=["gateway-box"]) == {"part": "none", "errors": [], "members": []}
    assert _view({}, group="")["part"] == "none"


def test_what_keeps_a_cluster_from_forming_or_being_guarded_is_refused_by_name():
    hosts = {"box1": dict(_facts("10.0.0.1"), ray_cluster_node_address="10.0.0.9"), "box2": _facts("10.0.0.1")}
    errors = _view(hosts, in_run=["box1"], head="box7", interface="")["errors"]
    assert errors == [
        "ray_cluster_interface is empty: name the network interface the cluster's hosts reach each other on",
        "ray_cluster_group: box2 not in this run (--limit?): a cluster forms, and is checked, with all its members",
        "ray_cluster_head: 'box7' is not a member of the cluster's group (box1, box2)",
        "box2: no address: ray_cluster_node_address is empty and its network facts show none on ray_cluster_interface",
    ]
    same = _view({"box1": _facts("10.0.0.1"), "box2": _facts("10.0.0.1")})
    assert same["errors"] == ["ray_cluster_node_address: box1 and box2 share 10.0.0.1: each node needs its own"]
    off = _view({"box1": dict(_facts("10.0.0.1"), ray_cluster_node_address="10.0.0.9"), "box2": _facts("10.0.0.2")})
    assert off["errors"] == ["box1: ray_cluster_node_address 10.0.0.9 is not on ray_cluster_interface (which has "
                             "10.0.0.1, fe80::1)"]
    public = _view({"box1": _facts("8.8.4.4"), "box2": _facts("10.0.0.2")})
    assert public["errors"][0].startswith("box1: ray_cluster_node_address: 8.8.4.4 is a public address")


def test_the_firewall_table_lets_only_loopback_and_the_members_reach_every_port():
    text = rc.firewall_ruleset(["10.0.0.2", "10.0.0.1", "fd00::1"], PORTS, WORKERS)
    ports = "6379, 6380, 6381, 6382, 6383, 6384, 6385, 10002-10999"
    assert text.splitlines()[:4] == ["table inet llmhost_ray {", "}", "flush table inet llmhost_ray",
                                     "table inet llmhost_ray {"]
    assert '    iif "lo" accept' in text
    assert "    ip saddr { 10.0.0.1, 10.0.0.2 } tcp dport { %s } accept" % ports in text
    assert "    ip6 saddr { fd00::1 } tcp dport { %s } accept" % ports in text
    assert text.rstrip().splitlines()[-3] == "    tcp dport { %s } counter drop" % ports


def test_ray_status_gives_the_active_nodes_and_the_gpus():
    text = (ROOT / "tests/fixtures/ray/ray-2.60.0-status.txt").read_text()
    assert rc.parse_status(text) == {"nodes": 1, "gpus_used": 0.0, "gpus": 2.0}
    assert rc.parse_status("") == {"nodes": 0, "gpus_used": 0.0, "gpus": 0.0}
    # real vLLM 0.25.0 serving on the node (its rank in a placement group) on a lent H100: tests/fixtures/device/
    serving = (ROOT / "tests/fixtures/device/ray-0.25.0-h100/ray-status-serving.txt").read_text()
    assert rc.parse_status(serving) == {"nodes": 1, "gpus_used": 1.0, "gpus": 1.0}


def test_every_node_s_processes_keep_nccl_and_gloo_on_the_cluster_s_interface():
    assert rc.node_environment("enp65s0") == {"RAY_USAGE_STATS_ENABLED": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                                              "NCCL_SOCKET_IFNAME": "enp65s0", "GLOO_SOCKET_IFNAME": "enp65s0"}
