"""Bad role inputs fail in the role's preflight, before any change, with the variable named.

Each case runs the real role with ansible-playbook against this machine (local connection, check
mode), so what is tested is Ansible's own evaluation of the role's checks."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAY = """
- hosts: all
  gather_facts: false
  roles:
    - role: llmhost.vllm.{role}
"""

CASES = [
    ("system_tuning", {"system_tuning_sysctl": {"vm.no_such_knob": 1}}, "unknown sysctl key(s) vm.no_such_knob"),
    ("system_tuning", {"system_tuning_sysctl": {"vm.swappiness": "low"}}, "sysctl vm.swappiness=low"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["mmu_notifier_invalidate_range=on"]},
     "mmu_notifier_invalidate_range: no such kernel parameter exists"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["quiet splash"]}, "not of the form name or name=value"),
    ("system_tuning", {"system_tuning_thp": "sometimes"}, "system_tuning_thp"),
    ("system_tuning", {"system_tuning_thp": "always"}, "system_tuning_thp=always contradicts transparent_hugepage=never"),
    ("llmhost_stack", {"llmhost_stack": "legacy"}, "llmhost_stack"),
    ("kernel", {"kernel_packages": ["vim"]}, "kernel_packages"),
    ("kernel", {"kernel_release": "6.5.0-41-generic"}, "is not a Debian kernel"),
    ("gpu_tuning", {"gpu_tuning_graphics_clocks": "fast"}, "gpu_tuning_graphics_clocks=fast"),
]


@pytest.mark.parametrize("role,extra,words", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_bad_input_fails_early_naming_the_variable(tmp_path, role, extra, words):
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(role=role))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_DEPRECATION_WARNINGS="0")
    extra = dict(extra, ansible_python_interpreter=sys.executable, llmhost_stack=extra.get("llmhost_stack", "current"))
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local", "--check",
         str(play), "-e", json.dumps(extra)],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert words in " ".join(out.split()), out[-3000:]
    assert "changed=0" in out
