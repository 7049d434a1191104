"""One ansible-playbook run for many input cases (tests/integration/test_role_inputs.py, test_site_first_play.py): each case is
an inventory host of its own, so Ansible's own evaluation is tested for each at the cost of one process."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Ansible ends a whole run after a play in which every host failed: a host that leaves each play at once
# ("sentinel", never failed) lets the next play run.
SENTINEL_PLAY = """
- hosts: %s:sentinel
  gather_facts: false
  pre_tasks:
    - ansible.builtin.meta: end_host
      when: inventory_hostname == 'sentinel'
  roles:
    - role: llmhost.vllm.%s
"""


def run_batch(tmp, inventory, playbook, *args):
    """One ansible-playbook run for many cases: each case is an inventory host of its own (local connection, its
    inputs as host variables, as a user's inventory gives them), so Ansible's own evaluation is tested for each,
    at the cost of one process. Returns (return code, whole output, {host: {"failed": [messages], "plays": [names
    of the plays it ran tasks in], "changed": n}}), read from the ansible.posix.json callback's report."""
    (tmp / "hosts.yml").write_text(json.dumps(inventory))
    (tmp / "play.yml").write_text(playbook)
    # One fork: `make test` runs these tables beside the container scenario, and a batch run's forks (each host's
    # task in a process of its own) slowed that scenario's playbook runs 3-5 times whatever the niceness, where one
    # fork left them as fast as alone (docs/measurements.md).
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_FORKS="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp / "hosts.yml"),
                           str(tmp / "play.yml"), "-e", "llmhost_reports_dir=%s" % (tmp / "reports"), *args],
                          capture_output=True, text=True, env=env, timeout=900, check=False)
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    hosts = {h: {"failed": [], "plays": [], "changed": s.get("changed", 0)} for h, s in report["stats"].items()}
    for play in report["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                if play["play"]["name"] not in hosts[host]["plays"]:
                    hosts[host]["plays"].append(play["play"]["name"])
                if result.get("failed") or result.get("unreachable"):
                    hosts[host]["failed"] += messages(result)
    return proc.returncode, proc.stdout + proc.stderr, hosts


def messages(result):
    """What a failed result says: its message and argument errors, and those of its failed loop items; each as
    text and JSON-quoted (a value holding a newline may be shown either way)."""
    said = [result.get("msg", "")] + list(result.get("argument_errors", []))
    for item in result.get("results", []):
        if isinstance(item, dict) and item.get("failed"):
            said += [item.get("msg", "")] + list(item.get("argument_errors", []))
    return [str(m) for m in said] + [json.dumps(m) for m in said]


def said_in(words, messages):
    """Are these words in one of the messages (whitespace as one space)?"""
    return any(words in " ".join(m.split()) for m in messages)


def merged_vars(values):
    """The inventory values of cases that share a host: lists one after the other, mappings together, anything else
    the same in each (the table is wrong otherwise)."""
    out = {}
    for extra in values:
        for name, value in extra.items():
            if name not in out or out[name] == value:
                out[name] = value
            elif isinstance(value, list) and isinstance(out[name], list):
                out[name] = out[name] + value
            else:
                assert isinstance(value, dict) and isinstance(out[name], dict) and not set(value) & set(out[name]), name
                out[name] = {**out[name], **value}
    return out
