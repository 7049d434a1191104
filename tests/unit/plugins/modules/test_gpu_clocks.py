"""gpu_clocks against the NVML stand-in (fake_pynvml: answers from the H200 capture and enforces
NVML's rules: root, supported ranges, power constraints). Proves validation before change,
idempotence through the state file, check mode, reset, and reapplying after a reboot."""
import json

import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import clocks
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.modules import gpu_clocks
from fake_pynvml import FakePynvml


@pytest.fixture
def nvml(h200x2, monkeypatch):
    fake = FakePynvml(h200x2.nvml(), constraints=(200000, 700000))
    monkeypatch.setattr(nv, "import_pynvml", lambda: (fake, None))
    monkeypatch.setattr(gpu_clocks, "_boot_id", lambda: "boot-1")
    return fake


@pytest.fixture
def run(run_main):
    def run_gpu_clocks(args, check=False):
        return run_main(gpu_clocks.main, dict(args, _ansible_check_mode=True) if check else args)
    return run_gpu_clocks


def test_lock_is_idempotent_through_the_state_file(run, nvml, tmp_path):
    state = tmp_path / "gpu_clocks.json"
    args = {"graphics_clocks": "1500", "state_file": str(state)}
    first = run(args)
    assert first["changed"] is True and first["rc"] == 0
    assert nvml.calls == [("lock_graphics", 0, 1500, 1500), ("lock_graphics", 1, 1500, 1500)]
    second = run(args)
    assert second["changed"] is False and len(nvml.calls) == 2
    recorded = json.loads(state.read_text())
    assert set(recorded) == {d["nvmlDeviceGetUUID"]["ok"] for d in nvml.dump["devices"]}


def test_reboot_clears_locks_so_they_are_applied_again(run, nvml, tmp_path, monkeypatch):
    args = {"graphics_clocks": "1500", "gpus": ["0"], "state_file": str(tmp_path / "s.json")}
    run(args)
    monkeypatch.setattr(gpu_clocks, "_boot_id", lambda: "boot-2")
    again = run(args)
    assert again["changed"] is True and nvml.calls.count(("lock_graphics", 0, 1500, 1500)) == 2


def test_check_mode_changes_nothing(run, nvml, tmp_path):
    state = tmp_path / "s.json"
    out = run({"graphics_clocks": "1500", "power_limit": 500, "state_file": str(state)}, check=True)
    assert out["changed"] is True and nvml.calls == [] and not state.exists()
    assert out["gpus"][0]["actions"] == [["lock_graphics", 1500, 1500], ["power", 500.0]]
    assert "1500" in out["diff"]["after"]


def test_out_of_range_values_fail_before_any_change(run, nvml, tmp_path):
    for args, words in (({"graphics_clocks": 2100}, "outside GPU 0 (NVIDIA H200)'s supported range 345-1980 MHz"),
                        ({"memory_clocks": "1000,3201"}, "outside GPU 0 (NVIDIA H200)'s supported memory clocks"),
                        ({"power_limit": 900}, "power_limit=900.0 W is outside"),
                        ({"graphics_clocks": "2000,100"}, "0 < min <= max"),
                        ({"gpus": ["7"], "graphics_clocks": 1500}, "gpus: 7 not found")):
        out = run(dict(args, state_file=str(tmp_path / "s.json")))
        assert out["rc"] == 1 and words in out["msg"], out["msg"]
    assert nvml.calls == [] and not (tmp_path / "s.json").exists()


def test_no_permission_is_reported_with_a_hint(run, nvml, tmp_path):
    nvml.is_root = False
    out = run({"graphics_clocks": 1500, "state_file": str(tmp_path / "s.json")})
    assert out["rc"] == 1 and "NVMLError_NoPermission" in out["msg"] and "run as root" in out["msg"]


def test_power_limit_is_read_back_and_reset_restores_defaults(run, nvml, tmp_path):
    state = str(tmp_path / "s.json")
    assert run({"power_limit": 500, "state_file": state})["changed"] is True
    assert run({"power_limit": 500, "state_file": state})["changed"] is False
    out = run({"state": "reset", "state_file": state})
    assert out["changed"] is True and ("power", 0, 700000) in nvml.calls
    assert json.loads((tmp_path / "s.json").read_text()) == {}
    assert run({"state": "reset", "state_file": state})["changed"] is False


def test_plan_reads_only_records_from_this_boot():
    gpu = {"power": {"limit_w": 700.0, "default_limit_w": 700.0}}
    actions, new = clocks.plan(gpu, {"boot_id": "a", "graphics": [1500, 1500]}, "a", (1500, 1500), None, None, False)
    assert actions == [] and new == {"boot_id": "a", "graphics": [1500, 1500]}
    actions = clocks.plan(gpu, {"boot_id": "a", "graphics": [1500, 1500]}, "b", (1500, 1500), None, None, False)[0]
    assert actions == [("lock_graphics", 1500, 1500)]


@pytest.mark.parametrize("value,want", [("2100", (2100, 2100)), (2100, (2100, 2100)), ("210,2100", (210, 2100)),
                                        ([210, 2100], (210, 2100)), (None, None)])
def test_parse_range(value, want):
    assert clocks.parse_range(value, "graphics_clocks") == want


def test_clock_info_geforce_deprecated_app_clocks(shared):
    from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
    rows = smi.parse_query_csv((shared / "smi-query/nvge-4080super-595-idle-query-gpu-allfields-csv.txt").read_text(),
                               keep_placeholders=True)
    info = clocks.info_from_smi(rows)[0]
    assert info["applications_clocks"]["status"] == "deprecated"
    assert info["event_reasons"]["active"] == ["gpu_idle"]
    assert info["power"]["max_limit_w"] == 400.0 and info["clocks_mhz"]["graphics"]["max"] == 3165


def test_clock_info_from_nvml_capture(h200x2):
    info = clocks.info_from_nvml(h200x2.nvml())
    assert [g["clocks_mhz"]["sm"] for g in info] == [{"current": 345, "max": 1980}] * 2
    assert info[0]["supported_clocks"]["graphics_min_mhz"] == 345 and info[0]["supported_clocks"]["memory_mhz"] == [3201, 2201]
    assert info[0]["event_reasons"]["active"] == ["gpu_idle"]


def test_event_reason_decoding():
    assert nv.decode_event_reasons("0x0000000000000044") == ["sw_power_cap", "hw_thermal_slowdown"]
    assert nv.decode_event_reasons(0x1000) == ["unknown_0x1000"]


def test_nvidia_smi_failure_on_the_second_gpu_records_the_first(run, h200x2_device, tmp_path, monkeypatch):
    """Without NVML bindings the module runs nvidia-smi; when GPU 1 refuses, GPU 0's change is in the state file."""
    calls = []
    answer = h200x2_device.runner(calls)

    def run_command(module, argv, check_rc=False, **kwargs):
        if "--power-limit=650.0" in argv:
            calls.append(argv)
            rc, out, err = (4, "", "Insufficient Permissions") if argv[2] == "1" else (0, "Power limit set.", "")
        else:
            rc, out, err = answer(argv)
        if check_rc and rc:
            module.fail_json(msg=err, rc=rc)       # what AnsibleModule.run_command does
        return rc, out, err
    monkeypatch.setattr(nv, "import_pynvml", lambda: (None, "ModuleNotFoundError"))
    monkeypatch.setattr(gpu_clocks.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(gpu_clocks.AnsibleModule, "get_bin_path", lambda module, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(gpu_clocks, "_boot_id", lambda: "boot-1")
    state = tmp_path / "gpu_clocks.json"
    out = run({"power_limit": 650, "state_file": str(state)})
    assert out["failed"] and out["msg"].startswith("GPU 1: [['power', 650.0]] failed: RuntimeError: -i 1 --power-limit=650.0 "
                                                   "exited 4: Insufficient Permissions (run as root)")
    recorded = json.loads(state.read_text())
    uuids = [g["uuid"] for g in out["gpus"]]
    assert set(recorded) == {uuids[0]} and recorded[uuids[0]]["power_w"] == 650.0
    assert oct(state.stat().st_mode & 0o777) == "0o644"
    assert [a[1:] for a in calls if "--power-limit=650.0" in a] == [["-i", "0", "--power-limit=650.0"],
                                                                    ["-i", "1", "--power-limit=650.0"]]


def test_an_nvidia_smi_path_that_is_not_executable_is_named(run, tmp_path, monkeypatch):
    monkeypatch.setattr(nv, "import_pynvml", lambda: (None, "ModuleNotFoundError"))
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\n")
    out = run({"power_limit": 650, "nvidia_smi": str(fake), "state_file": str(tmp_path / "s.json")})
    assert out["failed"] and "nvidia_smi=%s is not an executable file" % fake in out["msg"]
