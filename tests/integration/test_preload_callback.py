"""The preload callback as a user of the checkout gets it: the checkout's ansible.cfg enables it, it loads every plugin
file of the collection and parses the YAML files the first play's checks read, in the controller before the tasks run,
and the tasks' filters still answer."""
import glob
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ["filter", "test", "lookup", "action"]

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: A filter of the collection, in a worker forked after the preload
      ansible.builtin.assert:
        that: (24576 | llmhost.vllm.build_jobs(16)) == 3
"""


def test_the_checkouts_config_preloads_every_plugin_file_and_the_filters_answer(tmp_path):
    files = [path for kind in KINDS for path in (ROOT / "plugins" / kind).glob("*.py") if path.stem != "__init__"]
    (tmp_path / "play.yml").write_text(PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)  # the checkout's ansible.cfg names the collection's path
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=%s" % sys.executable, "-vvv", str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    parsed = len(glob.glob(str(ROOT / "roles" / "*" / "meta" / "argument_specs.yml")))
    said = re.search(r"llmhost\.vllm\.preload: (\d+) plugin files loaded and (\d+) YAML files parsed in the "
                     r"controller", out)
    assert said and int(said.group(1)) == len(files) and int(said.group(2)) > parsed, out[-3000:]
    assert "not loaded" not in out, [line for line in out.splitlines() if "not loaded" in line]
    frozen = re.search(r"llmhost\.vllm\.preload: (\d+) objects of the controller frozen before the play's workers fork",
                       out)
    assert frozen and int(frozen.group(1)) > 0, out[-3000:]
