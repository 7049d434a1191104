"""doctor: the checks on a running host, over real captures: the H200 hosts' /proc/driver/nvidia/version and
nvidia-smi output, real vLLM 0.25.0 start-up logs from a lent H200, and errors users posted (read from ../shared)."""
import re
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import doctor

DEVICE = Path(__file__).resolve().parents[3] / "fixtures" / "hosts" / "h200x1-device"
# Xid lines as drivers print them (the same public threads test_gpu_metrics.py quotes)
XIDS = [
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception",
    "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008",
    "kernel: NVRM: Xid (PCI:0000:00:07): 79, pid=1818990, name=python3, GPU has fallen off the bus.",
]
PLAN = {"max_model_len": 8192, "max_num_seqs": 256, "estimates": {"kv_tokens_per_replica": 780000}}


def _library_version(capture):
    return re.search(r"<driver_version>([^<]+)<", capture.cmd("nvidia-smi-q.xml")).group(1)


def test_the_kernel_module_and_the_library_agree_on_both_hosts(capture):
    proc = (Path(capture.root) / "proc" / "driver" / "nvidia" / "version").read_text()
    assert doctor.kernel_module_version(proc) == "580.159.04"
    [got] = doctor.driver_checks(proc, _library_version(capture))
    assert got["status"] == "PASS" and got["have"] == "580.159.04"


def test_a_library_of_another_version_fails_with_the_fix(capture, shared):
    proc = (Path(capture.root) / "proc" / "driver" / "nvidia" / "version").read_text()
    said = (shared / "errors" / "nvml-mismatch-with-library-version-intel-llvm-17614.txt").read_text()
    [got] = doctor.driver_checks(proc, None, said)
    assert got["status"] == "FAIL" and "reboot" in got["fix"]
    [got] = doctor.driver_checks(proc, "580.126.09")
    assert got["status"] == "FAIL" and got["want"] == "580.159.04" and got["have"] == "580.126.09"


def test_no_module_loaded_fails():
    [got] = doctor.driver_checks("", None, "NVIDIA-SMI has failed because it couldn't communicate with the driver")
    assert (got["item"], got["status"]) == ("kernel module", "FAIL")


def test_xid_lines_are_counted_per_gpu_and_judged(capture):
    gpus = [{"index": 0, "pci_bus_id": "00000000:CB:00.0"}]
    got = {c["item"]: c for c in doctor.xid_checks(XIDS, gpus)}
    assert got["GPU 0 Xid 13"]["status"] == "WARN"  # an application's fault
    assert got["GPU 0 Xid 109"]["status"] == "FAIL"
    assert got["GPU 0000:00:07.0 Xid 79"]["status"] == "FAIL" and got["GPU 0000:00:07.0 Xid 79"]["have"] == "1 line(s)"


def test_a_kernel_log_without_xid_passes(shared):
    lines = (shared / "errors" / "dmesg-fallen-off-bus-nvsentinel-155.txt").read_text().splitlines()
    assert [c["status"] for c in doctor.xid_checks(lines, [])] == ["PASS"]


def test_the_kv_cache_of_a_real_start_is_set_against_the_plan():
    log = (DEVICE / "sandbox-proof" / "serve.log").read_text()  # vLLM 0.25.0: "GPU KV cache size: 801,136 tokens"
    [got] = doctor.kv_cache_checks(0, log, PLAN)
    assert got["status"] == "PASS" and got["have"].startswith("801136 tokens (97.8 sequences of the full 8192)")
    [got] = doctor.kv_cache_checks(0, log, dict(PLAN, estimates={"kv_tokens_per_replica": 1000000}))
    assert got["status"] == "WARN" and "vllm_service_max_num_seqs" in got["fix"]


def test_a_v0_engine_log_counts_blocks_and_a_log_without_the_line_says_so():
    v0 = "INFO 10-17 12:00:00 gpu_executor.py:122] # GPU blocks: 50000, # CPU blocks: 4096\n"
    [got] = doctor.kv_cache_checks(1, v0, PLAN)
    assert got["have"].startswith("800000 tokens") and got["status"] == "PASS"
    [got] = doctor.kv_cache_checks(1, "INFO started\n", PLAN)
    assert got["status"] == "INFO"


def test_units_restarted_or_down_are_named_with_their_last_result():
    units = [{"Id": "vllm@0.service", "ActiveState": "active", "Result": "success", "NRestarts": "0"},
             {"Id": "vllm@1.service", "ActiveState": "active", "Result": "oom-kill", "NRestarts": "2"},
             {"Id": "vllm@2.service", "ActiveState": "failed", "Result": "exit-code", "NRestarts": "5",
              "ExecMainStatus": "2"}]
    got = doctor.unit_checks(units)
    assert [c["status"] for c in got] == ["PASS", "WARN", "FAIL"]
    assert "killed for memory (OOM)" in got[1]["fix"] and "(exit status 2)" in got[2]["have"]


def test_free_space_per_volume_once_each():
    lines = ["Mounted on Avail", "/srv 3221225472", "/ 107374182400", "/srv 3221225472"]
    got = doctor.disk_checks(lines, 5)
    assert [(c["item"], c["status"]) for c in got] == [("free space on /srv", "WARN"), ("free space on /", "PASS")]


def test_every_package_the_collection_holds_must_still_be_held_and_listed():
    selections = ["nvidia-driver-535\thold", "libcudnn9.1\thold", "cuda-toolkit-12-1\tinstall", "libcuda1\tinstall"]
    blacklist = ('// Held with dpkg: nvidia-driver-535 libcudnn9.1 cuda-toolkit-12-1 nvidia-kernel-common-535\n'
                 'Unattended-Upgrade::Package-Blacklist {\n    "^(lib)?nvidia-";\n    "^libcudnn9[.]1$";\n'
                 '    "^cuda-toolkit-12-1$";\n    "^libcuda1$";\n};\n')
    got = {c["item"].split()[0]: (c["status"], c["have"])
           for c in doctor.hold_checks(selections, {"/etc/apt/x": blacklist})}
    assert got == {"nvidia-driver-535": ("PASS", "held, kept"), "libcudnn9.1": ("PASS", "held, kept"),
                   "cuda-toolkit-12-1": ("FAIL", "not held, kept"),
                   "nvidia-kernel-common-535": ("FAIL", "not held, kept")}
    edited = blacklist.replace('    "^libcudnn9[.]1$";\n', "")
    assert doctor.hold_checks(selections, {"/etc/apt/x": edited})[1]["have"] == "held, not in the blacklist"
    assert [c["status"] for c in doctor.hold_checks(selections, {})] == ["INFO"]


def test_clock_reasons_that_slow_a_gpu_down(capture):
    gpus = [{"index": 0, "event_reasons": {"active": ["gpu_idle"]}},
            {"index": 1, "event_reasons": {"active": ["sw_power_cap"]}},
            {"index": 2, "event_reasons": {"active": ["sw_power_cap", "hw_thermal_slowdown"]}}]
    assert [c["status"] for c in doctor.clock_checks(gpus)] == ["PASS", "INFO", "FAIL"]


def test_a_link_generation_below_its_maximum_counts_while_busy(capture):
    gen = {"gen_current": 1, "gen_max": 5, "width_current": 16, "width_max": 16}
    topo = [{"index": i, "pcie": dict(gen, gen_current=now)} for i, now in enumerate((5, 1, 1, 1))]
    clocks = [{"index": 0, "pstate": "P0"}, {"index": 1, "pstate": "P8"}, {"index": 2, "pstate": "P0"}]
    got = doctor.pcie_checks(topo, clocks)
    assert [c["status"] for c in got] == ["PASS", "INFO", "WARN", "INFO"]
    assert got[3]["have"] == "gen1 (state unknown)"
    # a lent H200 at rest: P0, but NVML's gpu_idle reason is active (seen on 2026-12-04)
    idle = [{"index": 2, "pstate": "P0", "event_reasons": {"active": ["gpu_idle"]}}]
    assert doctor.pcie_checks(topo[2:3], idle)[0]["status"] == "INFO"


def test_the_whole_report_from_evidence(capture):
    proc = (Path(capture.root) / "proc" / "driver" / "nvidia" / "version").read_text()
    evidence = {"host_checks": [{"area": "os", "item": "x", "want": "", "have": "", "status": "PASS", "fix": ""}],
                "proc_version": proc, "library_version": _library_version(capture), "kernel_log": XIDS[2:],
                "gpus": [], "clock_gpus": [], "plan": PLAN, "min_free_gib": 5,
                "replicas": [{"index": 0, "unit": "Id=vllm@0.service\nActiveState=active\nResult=success\nNRestarts=0\n",
                              "log": (DEVICE / "sandbox-proof" / "serve.log").read_text()}],
                "selections": [], "blacklists": {}, "df": ["/ 107374182400"],
                "gateway": {"url": "https://127.0.0.1:8080/health", "status": 502}}
    got = doctor.build("gpu-1", evidence)
    areas = [(c["area"], c["status"]) for c in got["checks"]]
    assert areas == [("os", "PASS"), ("driver", "PASS"), ("xid", "FAIL"), ("service", "PASS"), ("kv", "PASS"),
                     ("packages", "INFO"), ("disk", "PASS"), ("api", "FAIL")]
    assert got["summary"] == {"PASS": 5, "WARN": 0, "FAIL": 2, "INFO": 1}


def test_the_report_counts_and_renders():
    checks = doctor.disk_checks(["/ 107374182400"], 5) + doctor.driver_checks("", None)
    out = doctor.report("gpu-1", checks)
    assert out["summary"]["FAIL"] == 1 and out["summary"]["PASS"] == 1
    assert out["markdown"].startswith("# llmhost.vllm doctor: gpu-1") and "| FAIL | driver |" in out["markdown"]


# A two-socket host as a user posted `numactl --hardware` (../shared/fixtures/public/numactl): node CPU lists
def _two_socket_nodes(shared):
    text = (shared / "numactl" / "aws-c-s3-403-c5n18xlarge-2socket.txt").read_text()
    nodes = []
    for line in text.splitlines():
        if " cpus: " in line:
            head, cpus = line.split(" cpus: ")
            ids = [int(c) for c in cpus.split()]
            nodes.append({"id": int(head.split()[1]), "cpus": ",".join(str(c) for c in ids)})
    return nodes


STATUS = "Name:\tpython3\nCpus_allowed:\tffff\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0-1\n"
GPUS = [{"index": 0, "numa_node": 0}, {"index": 1, "numa_node": 1}]


def test_a_replica_bound_to_its_gpus_node_passes_and_one_left_loose_is_named(shared):
    nodes = _two_socket_nodes(shared)
    assert [n["id"] for n in nodes] == [0, 1]
    node1 = nodes[1]["cpus"]
    bound = doctor.numa_checks({"name": "1", "gpus": [1], "numa_node": 1}, STATUS % node1, GPUS, nodes)
    assert [(c["status"], c["want"]) for c in bound] == [("PASS", "CPUs of node 1")]
    # the plan chose not to bind (vllm_service_numa=off): every CPU allowed, the GPU on node 1
    loose = doctor.numa_checks({"name": "1", "gpus": [1], "numa_node": None}, STATUS % "0-71", GPUS, nodes)
    assert loose[0]["status"] == "WARN" and "vllm_service_numa" in loose[0]["fix"]
    # the plan bound it, but the process runs elsewhere: the unit's drop-in did not take
    wrong = doctor.numa_checks({"name": "0", "gpus": [0], "numa_node": 0, "unit": "vllm@0.service"},
                               STATUS % node1, GPUS, nodes)
    assert wrong[0]["status"] == "FAIL" and "systemctl cat vllm@0.service" in wrong[0]["fix"]


def test_numa_placement_is_only_information_where_it_cannot_matter(shared):
    one_node = [{"id": 0, "cpus": "0-15"}, {"id": 1, "cpus": None}]
    assert doctor.numa_checks({"name": "0", "gpus": [0]}, STATUS % "0-15", GPUS, one_node)[0]["status"] == "INFO"
    nodes = _two_socket_nodes(shared)
    # GPUs of one replica on two nodes (tensor parallel across sockets), and a stopped replica
    split = doctor.numa_checks({"name": "0", "gpus": [0, 1], "numa_node": None}, STATUS % "0-71", GPUS, nodes)
    stopped = doctor.numa_checks({"name": "0", "gpus": [0], "numa_node": 0}, "", GPUS, nodes)
    assert [c["status"] for c in split + stopped] == ["INFO", "INFO"] and stopped[0]["have"] == "not running"


def test_a_host_not_serving_yet_gets_a_report_that_says_so():
    """Before vllm_service has run there is no model, no plan and no replica: the doctor reports the rest and one
    INFO line, never a failure for want of a service."""
    out = doctor.build("fresh", {"host_checks": [], "plan": {}, "replicas": [], "selections": [], "df": [],
                                 "proc_version": "", "library_version": "", "kernel_log_read": False})
    service = [c for c in out["checks"] if c["area"] == "service"]
    assert len(service) == 1 and service[0]["status"] == "INFO" and "none yet" in service[0]["have"], service
    assert "run site.yml" in service[0]["fix"]
    served = doctor.build("serving", {"plan": {"replicas": [{"name": 0}]}, "replicas": [], "kernel_log_read": False})
    assert not [c for c in served["checks"] if c["area"] == "service"]


RAY_STATUS = (Path(__file__).resolve().parents[3] / "fixtures" / "ray" / "ray-2.60.0-status.txt").read_text()
RAY_UNIT = "Id=llmhost-ray.service\nActiveState=active\nResult=success\nNRestarts=0\n"


def test_a_cluster_head_with_every_member_and_one_version_passes():
    checks = doctor.cluster_checks({"part": "head", "unit": RAY_UNIT, "status": RAY_STATUS,
                                    "versions": {"box1": "ray 2.60.0, vllm 0.33.0"}})
    assert [(c["item"], c["have"], c["status"]) for c in checks] == [
        ("this host's Ray node (head, llmhost-ray.service)", "active (0 restarts)", "PASS"),
        ("the cluster's nodes (ray status on the head)", "1 node(s), 2 GPU(s) (0 in use)", "PASS"),
        ("Ray and vLLM on every member", "box1: ray 2.60.0, vllm 0.33.0", "PASS"),
    ]


def test_a_member_missing_or_on_another_version_fails_with_its_fix():
    checks = doctor.cluster_checks({"part": "head", "unit": RAY_UNIT, "status": RAY_STATUS, "versions": {
        "box1": "ray 2.60.0, vllm 0.33.0", "box2": "ray 2.58.0, vllm 0.33.0", "box3": ""}})
    nodes, versions = checks[1], checks[2]
    assert (nodes["want"], nodes["have"], nodes["status"]) == ("3 node(s)", "1 node(s), 2 GPU(s) (0 in use)", "FAIL")
    assert versions["status"] == "FAIL" and "box3: not read" in versions["have"] and "vllm_install" in versions["fix"]


def test_a_worker_reports_only_its_node_and_a_host_outside_nothing():
    down = doctor.cluster_checks({"part": "worker", "unit": RAY_UNIT.replace("=active", "=failed"), "status": "",
                                  "versions": {}})
    assert [(c["status"], c["have"]) for c in down] == [("FAIL", "failed (0 restarts)")]
    assert doctor.cluster_checks({"part": "none"}) == [] and doctor.cluster_checks(None) == []


@pytest.mark.parametrize("tuning, status, words", [
    ({"state": "adopted", "candidate": "seqs_double", "adopted": "2026-12-01T10:00:00Z"}, "PASS",
     "seqs_double, adopted 6 day(s) ago"),
    ({"state": "adopted", "candidate": "kv_fp8", "adopted": "2026-06-01T10:00:00Z"}, "INFO", "kv_fp8, adopted 189 day(s) ago"),
    ({"state": "adopted", "candidate": "kv_fp8", "adopted": "yesterday"}, "PASS", "kv_fp8, adopted at ?"),
    ({"state": "set_aside", "reason": "it was measured for another model"}, "WARN", "set aside: it was measured"),
    ({"state": "none"}, "INFO", "none: the planner's own choice"),
])
def test_the_adopted_tuning_and_its_age(tuning, status, words):
    (one,) = doctor.tuning_checks(tuning, "2026-12-07T12:00:00Z")
    assert one["status"] == status and words in one["have"], one
    assert doctor.tuning_checks(None, "2026-12-07T12:00:00Z") == []
