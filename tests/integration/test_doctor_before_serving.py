"""The doctor on a host that serves nothing yet, with the example inventory's variables (a gateway with clients, a key):
the README sends a new user to the doctor first, and it must say "none yet" and run every other check, rc 0."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "inventories" / "example" / "group_vars" / "vllm_hosts.yml"


def example_vars(tmp_path):
    """The example inventory's group variables, each vaulted secret given a literal value of its shape."""
    text = EXAMPLE.read_text()
    for name in ("vault_vllm_key", "vault_alice_key"):
        text = text.replace("{{ %s }}" % name, "sk-%s-0123456789abcdef" % name.replace("_", "-"))
    assert "{{ vault_" not in text, "the example inventory names a secret this test does not replace"
    path = tmp_path / "vars.yml"
    path.write_text(text)
    assert yaml.safe_load(text)["gateway_clients"], "the example inventory no longer has gateway clients"
    return path


def test_the_doctor_before_serving_says_none_yet_and_exits_0(tmp_path):
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all: {children: {vllm_hosts: {hosts: {localhost: {ansible_connection: local, "
                         "ansible_python_interpreter: %s}}}}}\n" % sys.executable)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_DEPRECATION_WARNINGS="0")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory),
                           str(ROOT / "playbooks" / "doctor.yml"), "--check", "-e", "@%s" % example_vars(tmp_path),
                           "-e", "llmhost_reports_dir=%s" % (tmp_path / "reports")],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    report = (tmp_path / "reports" / "doctor-localhost.md").read_text()
    assert "| INFO | service | vLLM replicas | the serving plan's | none yet: no model is known on this host |" in report
    assert "| packages |" in report and "| disk |" in report      # the checks after the service still ran
