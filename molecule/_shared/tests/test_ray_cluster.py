"""ray_cluster on the container's host: a one-node Ray cluster from PyPI's real Ray 2.60.0 (on CPU), started by the
role's unit with its fixed ports. The two GPUs the node offers Ray are declared (ray_cluster_num_gpus), labelled
stand-ins: there is no GPU here. The placement check asks Ray's real placement-group API for one bundle per GPU, as
vLLM's Ray executor does for its ranks. The role's nftables table is left out in this scenario (the container may not
load one): tests/integration/test_ray_firewall.py loads it in a namespace of its own."""
import json
import os
import re

import pytest

UNIT = "llmhost-ray.service"
VENV = "/opt/llmhost/vllm/venv"
GCS_PORT = 3160
pytestmark = pytest.mark.skipif(os.environ.get("MOLECULE_SCENARIO_NAME") != "container",
                                reason="the Ray cluster is tested in the container scenario")

PLACE = r"""
import json, sys, ray
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
ray.init(address=sys.argv[1], logging_level="ERROR")
pg = placement_group([{"GPU": 1}] * 2, strategy="PACK")
ray.get(pg.ready(), timeout=60)
@ray.remote(num_gpus=1, num_cpus=0)  # as vLLM asks for its ranks: a GPU, no CPU
def where():
    return [ray.get_runtime_context().get_node_id(), [str(i) for i in ray.get_gpu_ids()]]
got = ray.get([where.options(scheduling_strategy=PlacementGroupSchedulingStrategy(pg, k)).remote() for k in range(2)],
              timeout=120)
print(json.dumps({"tasks": got, "nodes": [n["NodeID"] for n in ray.nodes() if n["Alive"]]}))
"""


@pytest.fixture(scope="module")
def address(host):
    """The head's GCS, at the node address the role chose (the interface's, which this host's default route uses)."""
    start = host.file("/etc/systemd/system/" + UNIT).content_string
    node = re.search(r" --node-ip-address=(\S+) ", start).group(1)
    assert " src %s " % node in host.check_output("ip -4 route get 192.0.2.1 || ip -4 route get 10.0.0.1")
    return "%s:%d" % (node, GCS_PORT)


def test_the_node_runs_as_the_service_user_with_fixed_ports_and_no_dashboard(host):
    unit = host.file("/etc/systemd/system/" + UNIT).content_string
    assert host.service(UNIT).is_running and host.service(UNIT).is_enabled
    assert "User=vllm" in unit and "ProtectSystem=strict" in unit and "ReadWritePaths=/var/lib/llmhost-ray" in unit
    start = [line for line in unit.splitlines() if line.startswith("ExecStart=")][0].split()
    assert start[:4] == ["ExecStart=%s/bin/ray" % VENV, "start", "--block", "--disable-usage-stats"]
    assert {"--head", "--include-dashboard=false", "--port=3160", "--node-manager-port=3161",
            "--min-worker-port=3170", "--max-worker-port=3199", "--num-gpus=2",
            "--temp-dir=/var/lib/llmhost-ray/tmp"} <= set(start)
    assert "Environment=RAY_USAGE_STATS_ENABLED=0" in unit and "Requires=" not in unit  # no table: firewall off here
    folder = host.file("/var/lib/llmhost-ray")
    assert (folder.user, folder.mode) == ("vllm", 0o700)  # Ray's own temp folder is 0777, inside this one


def test_the_head_sees_its_node_and_the_declared_gpus(host, address):
    status = host.check_output("%s/bin/ray status --address=%s", VENV, address)
    assert re.search(r"^Active:\n +1 node_[0-9a-f]+$", status, re.M) and re.search(r"^ +0\.0/2\.0 GPU$", status, re.M)


def test_ray_places_one_bundle_per_gpu_through_its_placement_group_api(host, address):
    """As vLLM's Ray executor places its ranks: a placement group of one GPU bundle per GPU, a task in each."""
    script = "/tmp/llmhost-ray-place.py"
    host.run_test("printf '%%s' %s > %s", PLACE, script)
    try:
        out = host.check_output("runuser -u vllm -- %s/bin/python %s %s", VENV, script, address)
    finally:
        host.run("rm -f %s", script)
    got = json.loads(out.splitlines()[-1])
    assert len(got["nodes"]) == 1
    assert sorted(gpus for _node, gpus in got["tasks"]) == [["0"], ["1"]]
    assert {node for node, _gpus in got["tasks"]} == set(got["nodes"])


def test_the_replicas_start_after_the_node_and_may_write_its_sessions(host):
    unit = host.file("/etc/systemd/system/vllm@.service").content_string
    assert "llmhost-ray.service" in [line for line in unit.splitlines() if line.startswith("After=")][0]
    assert "ReadWritePaths=/var/lib/llmhost-ray" in unit
