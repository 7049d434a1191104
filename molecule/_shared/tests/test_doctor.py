"""playbooks/doctor.yml on the converged container host, in --check: it changes nothing, and its report reads the
running host. The replicas are the labelled vLLM stand-in (no GPU here), which prints vLLM's KV cache line with a
number of its own; one held package is unheld for the run and must be reported. Container scenario only."""
import json
import os
import re
import tempfile
from pathlib import Path

import pytest

KV_TOKENS = 65536  # what the stand-in prints unless VLLM_STANDIN_KV_TOKENS says otherwise
# the opt-in bandwidth test and burn-in, small and short, on the labelled stand-in device (doctor_load_device=cpu:
# gloo between two CPU processes, CPU tensors, no NVML), with stress-ng on the container's memory
LOAD = ["-e", "doctor_load_device=cpu", "-e", "doctor_bandwidth=true", "-e", "doctor_bandwidth_size_mib=16",
        "-e", "doctor_burnin=true", "-e", "doctor_burnin_minutes=0.1", "-e", "doctor_burnin_host_workers=1",
        "-e", "doctor_burnin_host_memory_percent=5"]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the doctor is tested in the container scenario")


@pytest.fixture(scope="module")
def doctor(host, playbook, apt_command):
    """The doctor's report, with one package the collection holds unheld during the run."""
    # a module's fixture is made before the function-scoped skip above: it skips itself
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("the doctor is tested in the container scenario")
    blacklists = host.run_test("grep -l 'llmhost.vllm' /etc/apt/apt.conf.d/* | xargs cat").stdout
    held = set(host.run_test("apt-mark showhold").stdout.split())
    recorded = [n for line in re.findall(r"^// Held with dpkg:(.*)$", blacklists, re.M) for n in line.split()]
    assert recorded and set(recorded) <= held, (recorded, held)
    unheld = sorted(recorded)[0]
    out_dir = Path(tempfile.mkdtemp(prefix="llmhost-doctor-"))
    # whatever ran before: under --check it is not installed (apt_command: the source-build test's apt may run beside)
    assert apt_command(host, "apt-get purge -y -q stress-ng").rc == 0
    assert apt_command(host, "apt-mark unhold %s" % unheld).rc == 0
    try:
        changed, failed, out = playbook("--check", "-e", "doctor_dir=%s" % out_dir, *LOAD, path="playbooks/doctor.yml")
    finally:
        assert apt_command(host, "apt-mark hold %s" % unheld).rc == 0
    # what changed is the report written on the controller (delegated), nothing on the host
    assert not failed and changed <= 2, out[-4000:]
    assert "changed: [llmhost-ctr]" not in out and "changed: [llmhost-ctr -> localhost]" in out, out[-4000:]
    report = json.loads((out_dir / "doctor-llmhost-ctr.json").read_text())
    assert (out_dir / "doctor-llmhost-ctr.md").read_text().startswith("# llmhost.vllm doctor: llmhost-ctr")
    return report, unheld


def _by(report, area):
    return {c["item"]: c for c in report["checks"] if c["area"] == area}


def test_the_doctor_reads_the_replicas_units_and_their_kv_cache(doctor):
    report, _unheld = doctor
    units = _by(report, "service")
    assert set(units) == {"vllm@0.service", "vllm@1.service"}, units
    assert all(c["status"] == "PASS" and c["have"].startswith("active, 0 restart(s)") for c in units.values()), units
    kv = _by(report, "kv")
    assert set(kv) == {"replica 0 KV cache", "replica 1 KV cache"}
    for check in kv.values():
        assert check["have"].startswith("%d tokens" % KV_TOKENS), check
        estimate = int(re.match(r">= (\d+) tokens", check["want"]).group(1))
        assert check["status"] == ("PASS" if KV_TOKENS >= 0.9 * estimate else "WARN"), check


def test_the_doctor_reports_the_ray_cluster_s_node_members_and_versions(doctor):
    """The test host is a one-node Ray cluster (ray_cluster), its two GPUs declared to Ray."""
    report, _unheld = doctor
    ray = _by(report, "ray")
    assert [(c["status"], c["have"]) for c in ray.values()] == [
        ("PASS", "active (0 restarts)"), ("PASS", "1 node(s), 2 GPU(s) (0 in use)"),
        ("PASS", "llmhost-ctr: ray 2.60.0, vllm 0.33.0")], ray


def test_the_doctor_names_a_package_no_longer_held(doctor):
    report, unheld = doctor
    packages = _by(report, "packages")
    failed = [c for c in packages.values() if c["status"] == "FAIL"]
    assert [c["item"].split()[0] for c in failed] == [unheld], packages
    assert any(c["status"] == "PASS" for c in packages.values()), packages


def test_the_doctor_checks_the_gateway_disk_and_driver(doctor):
    report, _unheld = doctor
    assert [c["status"] for c in _by(report, "api").values()] == ["PASS"]
    disks = _by(report, "disk")
    assert disks and all(c["status"] in ("PASS", "WARN") for c in disks.values()), disks
    driver = _by(report, "driver")
    assert [(c["item"], c["status"], c["have"]) for c in driver.values()] == [("kernel module", "FAIL", "not loaded")]
    # the container's journal is not the kernel's: the Xid check says it could not read it
    assert [c["status"] for c in _by(report, "xid").values()] == ["INFO"]
    assert report["checks"][0]["area"] != "driver"  # the host report's checks come first
    # each replica's process was read (its MainPID's status); no GPU here, so its node cannot be judged
    numa = _by(report, "numa")
    assert set(numa) == {"replica 0 process", "replica 1 process"}, numa
    assert all(c["status"] == "INFO" and c["have"] != "not running" for c in numa.values()), numa


def test_the_doctor_reports_the_adopted_tuning_and_its_age(host, doctor):
    """test_tune.py runs first and leaves its winner adopted (alone, this check finds none)."""
    report, _unheld = doctor
    (check,) = _by(report, "tuning").values()
    tuned = host.file("/etc/llmhost/vllm/tuned.json")
    if tuned.exists:
        candidate = json.loads(tuned.content_string)["candidate"]
        assert (check["status"], check["have"]) == ("PASS", "%s, adopted 0 day(s) ago" % candidate), check
    else:
        assert (check["status"], check["have"]) == ("INFO", "none: the planner's own choice"), check


@pytest.fixture(scope="module")
def doctor_under_load(host, playbook, doctor):
    """The doctor with both opt-in tests, without --check, after the --check run above: it installs stress-ng."""
    out_dir = Path(tempfile.mkdtemp(prefix="llmhost-doctor-load-"))
    changed, failed, out = playbook("-e", "doctor_dir=%s" % out_dir, "-e", "doctor_print=false", *LOAD,
                                    path="playbooks/doctor.yml")
    assert not failed, out[-4000:]
    return changed, out, json.loads((out_dir / "doctor-llmhost-ctr.json").read_text())


def test_under_check_the_opt_in_tests_run_and_install_nothing(host, doctor):
    report, _unheld = doctor
    assert not host.package("stress-ng").is_installed
    assert _by(report, "burnin")["host memory burn-in"]["status"] == "WARN"
    assert "stress-ng is not installed" in _by(report, "burnin")["host memory burn-in"]["have"]
    assert _by(report, "bandwidth")["all-reduce between the GPUs (stand-in: gloo on CPU)"]["status"] == "INFO"


def test_without_check_the_burnin_installs_stress_ng_and_changes_nothing_else(host, doctor_under_load):
    changed, out, _report = doctor_under_load
    assert host.package("stress-ng").is_installed
    installed = re.search(r"TASK \[llmhost\.vllm\.doctor : Install stress-ng[^\n]*\n[^\n]*\n([^\n]*)", out)
    assert installed and installed.group(1).startswith("changed: [llmhost-ctr]"), out[-4000:]
    # the install is the one change on the host; the others are the report written on the controller
    assert len(re.findall(r"^changed: \[llmhost-ctr\]", out, re.M)) == 1 and changed >= 1, out[-4000:]
    # stress-ng ran as an async job: its job file (command line and output) is not left behind
    assert host.run("grep -ls stress-ng /root/.ansible_async/*").stdout == ""


def test_the_bandwidth_stand_in_all_reduces_through_torch_distributed(doctor_under_load):
    report = doctor_under_load[2]
    bandwidth = _by(report, "bandwidth")
    assert list(bandwidth) == ["all-reduce between the GPUs (stand-in: gloo on CPU)"], bandwidth
    check = bandwidth["all-reduce between the GPUs (stand-in: gloo on CPU)"]
    assert check["status"] == "INFO" and "stand-in" in check["fix"], check
    # the real torch of the vLLM venv moved 16 MiB between two processes and got the right sum
    assert re.match(r"bus [\d.]+ GB/s \(algorithm [\d.]+ GB/s\), 2 ranks", check["have"]), check


def test_the_burnin_stand_in_loads_memory_and_stress_ng_passes(doctor_under_load):
    report = doctor_under_load[2]
    burnin = _by(report, "burnin")
    gpu = burnin["GPU cpu burn-in (stand-in: CPU)"]
    assert gpu["status"] == "INFO" and re.search(r"GiB x [1-9]\d* passes", gpu["have"]), gpu
    host_check = burnin["host memory burn-in"]
    assert host_check["status"] == "PASS" and "successful run" in host_check["have"], host_check
    # the container's journal is not the kernel's: no Xid verdict either way
    assert burnin["Xid lines during the burn-in"]["status"] == "INFO"
