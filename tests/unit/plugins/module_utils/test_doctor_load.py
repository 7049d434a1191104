"""module_utils/doctor_load.py: the doctor's opt-in bandwidth test and burn-in, judged on what the scripts printed
on a lent H200 (tests/fixtures/hosts/h200x1-device/doctor-proof) and on that output with one thing broken."""
import copy
import json
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import doctor_load as dl

PROOF = Path(__file__).resolve().parents[3] / "fixtures" / "hosts" / "h200x1-device" / "doctor-proof"
H200_GPU = {"index": 0, "pci_bus_id": "00000000:00:06.0", "pcie": {"gen_max": 5, "width_max": 16}}
# two GeForce cards on PCIe without NVLink, the second in a chipset slot of four lanes (the seed's B650E board)
TWO_4090 = [{"index": 0, "pcie": {"gen_max": 4, "width_max": 16}}, {"index": 1, "pcie": {"gen_max": 4, "width_max": 4}}]


@pytest.fixture(name="bandwidth")
def _bandwidth():
    return json.loads((PROOF / "bandwidth.json").read_text())


@pytest.fixture(name="burnin")
def _burnin():
    return json.loads((PROOF / "burnin.json").read_text())


def _statuses(checks):
    return [(c["item"], c["status"]) for c in checks]


def test_the_h200s_copies_pass_against_its_gen5_x16_link(bandwidth):
    checks = dl.bandwidth_checks(bandwidth, [H200_GPU], {})
    assert _statuses(checks) == [("GPU 0 copies over PCIe", "PASS"), ("all-reduce between the GPUs", "INFO")]
    assert checks[0]["want"] == ">= 60% of gen5 x16's 63.0 GB/s" and "54.24 GB/s" in checks[0]["have"]
    assert checks[0]["have"].endswith("(86%)")
    assert checks[1]["have"] == "not run: one GPU: no all-reduce between GPUs"


@pytest.mark.parametrize("rate, status", [(30.0, "WARN"), (12.0, "FAIL")])
def test_copies_far_below_the_link_warn_or_fail(bandwidth, rate, status):
    bandwidth["gpus"][0]["h2d_gbps"] = rate
    assert dl.copy_checks(bandwidth, [H200_GPU])[0]["status"] == status


def test_a_link_of_unknown_width_is_reported_not_judged(bandwidth):
    for key in ("gen_max", "width_max"):
        bandwidth["gpus"][0][key] = None
    check = dl.copy_checks(bandwidth, [{"index": 0, "pcie": {}}])[0]
    assert check["status"] == "INFO" and "54.24" in check["have"]


def _with_all_reduce(bandwidth, busbw, **extra):
    out = copy.deepcopy(bandwidth)
    run = {"ranks": 2, "iterations": 20, "seconds": 1.0, "correct": True, "nccl": "2.21.5", "algbw_gbps": busbw,
           "busbw_gbps": busbw}
    out.update(skipped=None, all_reduce=dict(run, **extra))
    return out


@pytest.mark.parametrize("busbw, status", [(3.2, "PASS"), (2.0, "WARN"), (1.0, "FAIL")])
def test_the_all_reduce_is_judged_against_the_slowest_gpus_link(bandwidth, busbw, status):
    """The seed's 3.2 GB/s on a board whose second card sits in a chipset slot of four gen4 lanes (7.9 GB/s) is
    what that slot gives: the host report's link check names the slot; here it passes."""
    check = dl.all_reduce_checks(_with_all_reduce(bandwidth, busbw), TWO_4090, {"0,1": "PHB"})[0]
    assert check["want"] == ">= 40% of the slowest GPU link's 7.9 GB/s" and check["status"] == status


def test_the_seeds_18_6_gb_s_on_two_x16_cards_passes_and_3_2_fails(bandwidth):
    x16 = [TWO_4090[0], dict(TWO_4090[0], index=1)]
    assert dl.all_reduce_checks(_with_all_reduce(bandwidth, 18.6), x16, {})[0]["status"] == "PASS"
    assert dl.all_reduce_checks(_with_all_reduce(bandwidth, 3.2), x16, {})[0]["status"] == "FAIL"


def test_nvlink_is_reported_and_a_wrong_sum_or_a_timeout_fails(bandwidth):
    nvlinked = dl.all_reduce_checks(_with_all_reduce(bandwidth, 350.0), TWO_4090, {"0,1": "NV18"})[0]
    assert nvlinked["status"] == "INFO" and "NVLink" in nvlinked["want"]
    wrong = dl.all_reduce_checks(_with_all_reduce(bandwidth, 20.0, correct=False), TWO_4090, {})[0]
    assert (wrong["status"], wrong["have"]) == ("FAIL", "the sum was wrong")
    late = dict(bandwidth, all_reduce={"error": "not done within the time allowed"}, skipped=None)
    assert dl.all_reduce_checks(late, TWO_4090, {})[0]["status"] == "FAIL"


def test_a_bandwidth_test_that_broke_or_saw_no_gpu_says_so():
    assert dl.bandwidth_checks(None, [], {}) == []
    assert dl.bandwidth_checks({"error": "ImportError: torch"}, [], {})[0]["status"] == "FAIL"
    assert dl.bandwidth_checks({"gpus": [], "skipped": "torch sees no CUDA device"}, [], {})[0]["status"] == "WARN"


def test_the_stand_ins_all_reduce_is_labelled_and_never_passes():
    result = {"device": "cpu", "gpus": [], "skipped": None,
              "all_reduce": {"ranks": 2, "correct": True, "algbw_gbps": 0.9, "busbw_gbps": 0.9, "nccl": None}}
    check = dl.bandwidth_checks(result, [], {})[0]
    assert check["status"] == "INFO" and "stand-in" in check["item"]


def test_the_h200_burnin_passes_with_the_power_cap_only(burnin):
    checks = dl.gpu_burnin_checks(burnin)
    assert _statuses(checks) == [("GPU 0 burn-in", "PASS")]
    assert "110.38 GiB x 24 passes" in checks[0]["have"] and "reasons sw_power_cap" in checks[0]["have"]


@pytest.mark.parametrize("change, phrase", [
    ({"memory_errors": 3}, "3 memory element(s) read back wrong"),
    ({"reasons_mask": 0x4 | 0x40}, "clocks slowed by hw_thermal_slowdown"),
    ({"counters_after": {"ecc_corrected": 0, "ecc_uncorrected": 0, "pcie_replays": 7, "remapped_rows_pending": False,
                         "remap_failed": False}}, "pcie_replays: +7"),
    ({"counters_after": {"ecc_corrected": 2, "ecc_uncorrected": 0, "pcie_replays": 0, "remapped_rows_pending": True,
                         "remap_failed": False}}, "ecc_corrected: +2; remapped_rows_pending: yes"),
])
def test_a_burnin_with_an_error_fails_naming_it(burnin, change, phrase):
    burnin["gpus"][0].update(change)
    check = dl.gpu_burnin_checks(burnin)[0]
    assert check["status"] == "FAIL" and phrase in check["have"], check


def test_a_geforce_without_ecc_is_judged_on_what_it_counts(burnin):
    none = {"ecc_corrected": None, "ecc_uncorrected": None, "pcie_replays": 0, "remapped_rows_pending": None,
            "remap_failed": None}
    burnin["gpus"][0].update(counters_before=none, counters_after=dict(none))
    assert dl.gpu_burnin_checks(burnin)[0]["status"] == "PASS"


def test_the_host_part_fails_on_stress_ng_or_edac_and_warns_when_it_did_not_run():
    edac = ["/sys/devices/system/edac/mc/mc0/ce_count:0", "/sys/devices/system/edac/mc/mc0/ue_count:0"]
    ok = {"ran": True, "rc": 0, "tail": "stress-ng: info: successful run completed in 60.00s", "edac_before": edac,
          "edac_after": edac}
    assert dl.host_burnin_checks(ok)[0]["status"] == "PASS"
    grown = dict(ok, edac_after=[edac[0].replace(":0", ":2"), edac[1]])
    assert dl.host_burnin_checks(grown)[0]["have"] == "EDAC mc0/ce_count +2"
    failed = dict(ok, rc=2, tail="stress-ng: fail: vm: detected 1 bit errors")
    assert dl.host_burnin_checks(failed)[0]["status"] == "FAIL"
    assert dl.host_burnin_checks({"ran": False, "why": "stress-ng is not installed"})[0]["status"] == "WARN"


def test_an_xid_during_the_burnin_fails_for_its_gpu():
    line = "[ 1234.567890] NVRM: Xid (PCI:0000:00:06): 79, pid=1234, GPU has fallen off the bus."
    checks = dl.xid_burnin_checks([line], True, [H200_GPU])
    assert _statuses(checks) == [("GPU 0 Xid 79 during the burn-in", "FAIL")]
    assert dl.xid_burnin_checks([], True, [H200_GPU])[0]["status"] == "PASS"
    assert dl.xid_burnin_checks([], False, [H200_GPU])[0]["status"] == "INFO"


def test_the_stand_ins_burnin_is_labelled_and_can_still_fail():
    result = {"device": "cpu", "gpus": [{"index": "cpu", "memory_gib": 0.25, "matmuls": 400, "memory_passes": 8,
                                         "memory_errors": 0, "seconds": 5.1, "tflops": 0.01}]}
    assert _statuses(dl.gpu_burnin_checks(result)) == [("GPU cpu burn-in (stand-in: CPU)", "INFO")]
    result["gpus"][0]["memory_errors"] = 1
    assert dl.gpu_burnin_checks(result)[0]["status"] == "FAIL"


def test_the_scripts_output_is_read_from_its_tasks_result(bandwidth):
    run = {"rc": 0, "stdout": json.dumps(bandwidth) + "\n", "stderr": ""}
    assert dl.script_result(run) == bandwidth
    assert dl.script_result({"skipped": True, "changed": False}) is None and dl.script_result(None) is None
    broken = dl.script_result({"rc": 1, "stdout": "", "stderr": "Traceback ...\nModuleNotFoundError: No module named 'torch'"})
    assert broken == {"error": "no result (exit 1): Traceback ...\nModuleNotFoundError: No module named 'torch'"}
    assert dl.bandwidth_checks(broken, [], {})[0]["status"] == "FAIL"
    timed_out = dl.script_result({"rc": -1, "msg": "The module ran past its timeout of 140 seconds"})
    assert timed_out["error"].startswith("no result (exit -1): The module ran past")
