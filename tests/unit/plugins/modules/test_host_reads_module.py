"""host_reads, the module as Ansible runs it: one answer with the GPU topology fact, the sysctl values, the command
line and the Pythons, on the real H200 capture and on a host with none of it."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.modules import host_reads


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            host_reads.main()
    assert exc.value.code == 0
    return json.loads(capsys.readouterr().out)


def test_the_capture_gives_its_gpus_and_sysctl_values_in_one_answer(h200x2, capsys):
    out = _run({"root": h200x2.root, "nvidia_smi": "/nonexistent/nvidia-smi",
                "sysctl": ["vm.swappiness", "vm.no_such_key"]}, capsys)
    topology = out["ansible_facts"]["gpu_topology"]
    assert out["changed"] is False
    assert topology["source"] == "sysfs" and [g["pci_bus_id"] for g in topology["gpus"]] == ["0000:00:06.0", "0000:00:07.0"]
    assert list(out["sysctl"]) == ["vm.swappiness"] and out["sysctl"]["vm.swappiness"].isdigit()


def test_a_bare_host_answers_empty_and_says_what_it_could_not_read(tmp_path, capsys):
    out = _run({"root": str(tmp_path), "use_nvml": False, "sysctl": ["vm.swappiness"]}, capsys)
    assert out["ansible_facts"]["gpu_topology"]["source"] == "none"
    assert out["sysctl"] == {} and out["cmdline"] == "" and out["pythons"] == []
    assert any("/proc/cmdline could not be read" in n for n in out["notes"])
