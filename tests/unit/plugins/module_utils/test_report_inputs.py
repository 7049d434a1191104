"""The host report's and the doctor's reads into their inputs (module_utils/report_inputs.py)."""
import base64

from ansible_collections.llmhost.vllm.plugins.module_utils import report_inputs as ri


def b64(text):
    return base64.b64encode(text.encode()).decode()


PLAN = {"replicas": [{"name": "0"}, {"name": "1"}], "model_path": "/srv/llmhost/models/q"}


def doctor_reads(**change):
    reads = {name: "" for name in ri.DOCTOR_NAMES}  # what the vars lookup gives for a read that did not run
    reads.update({
        "inventory_hostname": "gpu1",
        "ansible_facts": {"gpu_topology": {"gpus": [{"index": 0}], "links": {"0,1": "NS"}}, "numa": {"nodes": [{"node": 0}]}},
        "host_report_result": {"checks": [{"item": "OS release"}]}, "doctor_min_free_gib": 50, "gateway_url": "",
        "__doctor_module": {"content": b64("NVRM version: 580.159.04\n")},
        "__doctor_smi": {"rc": 0, "stdout_lines": ["580.159.04", "ignored"], "stderr": ""},
        "__doctor_xids": {"rc": 1, "stdout_lines": []}, "__doctor_kernel_log_ours": True,
        "__doctor_clocks": {"gpus": [{"index": 0}]}, "__doctor_plan": PLAN,
        "__doctor_units": {"results": [{"stdout": "active"}, {"stdout": "failed"}]},
        "__doctor_kv": {"results": [{"stdout": "KV cache 2.1 GiB"}, {}]},
        "__doctor_processes": {"results": [{"content": b64("1234 python")}, {}]},
        "__doctor_selections": {"stdout_lines": ["nvidia-driver-cuda hold"]},
        "__doctor_blacklists": {"results": [{"source": "/etc/apt/apt.conf.d/51x", "content": b64("nvidia")}]},
        "__doctor_df": {"stdout_lines": ["/srv 100G"]}})
    reads.update(change)
    return reads


def test_the_doctor_reads_each_answer_as_its_task_registered_it():
    got = ri.doctor(doctor_reads())
    ev = got["evidence"]
    assert got["host"] == "gpu1"
    assert ev["proc_version"] == "NVRM version: 580.159.04\n" and ev["library_version"] == "580.159.04"
    assert ev["kernel_log_read"] is True and ev["kernel_log"] == []
    assert ev["replicas"] == [{"index": "0", "unit": "active", "log": "KV cache 2.1 GiB", "process": "1234 python"},
                              {"index": "1", "unit": "failed", "log": "", "process": ""}]
    assert ev["blacklists"] == {"/etc/apt/apt.conf.d/51x": "nvidia"} and ev["plan"] == PLAN
    assert ev["gateway"] is None and ev["bandwidth"] is None and ev["burnin"] is None
    assert ev["gpus"] == [{"index": 0}] and ev["links"] == {"0,1": "NS"} and ev["min_free_gib"] == 50


def test_a_library_that_fails_gives_its_error_and_no_version():
    ev = ri.doctor(doctor_reads(__doctor_smi={"rc": 9, "stdout_lines": [], "stderr": "", "msg": "no nvidia-smi"}))
    assert ev["evidence"]["library_version"] == "" and ev["evidence"]["library_error"] == "no nvidia-smi"


def test_a_kernel_log_the_doctor_could_not_read_is_said_so():
    assert ri.doctor(doctor_reads(__doctor_xids={"rc": 2}))["evidence"]["kernel_log_read"] is False
    assert ri.doctor(doctor_reads(__doctor_kernel_log_ours=False))["evidence"]["kernel_log_read"] is False


def test_a_host_that_serves_nothing_has_no_plan_and_no_replicas():
    ev = ri.doctor(doctor_reads(__doctor_plan={"replicas": [], "model_path": ""}, __doctor_units="",
                                __doctor_kv="", __doctor_processes=""))["evidence"]
    assert ev["plan"] == {} and ev["replicas"] == []


def test_the_gateway_is_asked_for_its_health_where_there_is_one():
    ev = ri.doctor(doctor_reads(gateway_url="https://127.0.0.1:8443", __doctor_gateway={"status": 200, "msg": "OK"}))
    assert ev["evidence"]["gateway"] == {"url": "https://127.0.0.1:8443/health", "status": 200, "error": "OK"}


def test_the_host_report_reads_its_answers():
    reads = {name: "" for name in ri.HOST_REPORT_NAMES}
    reads.update({"inventory_hostname": "gpu1",
                  "ansible_facts": {"distribution": "Ubuntu", "distribution_version": "22.04",
                                    "distribution_major_version": "22", "kernel": "6.5.0-41-generic",
                                    "gpu_topology": {"gpus": []}, "numa": {"nodes": []}},
                  "__host_report_reads": {"pythons": ["3.10", "3.11"], "cmdline": "BOOT_IMAGE=/vmlinuz quiet\n",
                                          "sysctl": {"vm.swappiness": "10", "kernel.numa_balancing": "0"}},
                  "system_tuning_wanted_sysctl": {"vm.swappiness": 10}, "system_tuning_thp": "never"})
    got = ri.host_report(reads)
    assert got["system"]["pythons"] == ["3.10", "3.11"] and got["system"]["virtualization"] == "unknown"
    assert got["sysctl"] == {"vm.swappiness": "10", "kernel.numa_balancing": "0"}
    assert got["cmdline"] == "BOOT_IMAGE=/vmlinuz quiet\n" and got["wanted_cpu"]["thp"] == "never"
