"""The gateway in front of several hosts (gateway_backends_group): which replicas go into its upstream, and the
refusals of a group it cannot front, through the role's own preflight in one ansible-playbook run.

Each case is a small inventory group: a gateway host and the hosts behind it. The serving plans are set as facts
(the plan itself is tested in test_serving_plan.py and the container scenario); where another host reaches the
replicas comes from vllm_service's own variables (vllm_service_network_endpoints' address). The container
scenario runs a real second host behind a real nginx (molecule/_shared/tests/test_gateway.py)."""
import sys
from pathlib import Path

import pytest

from playbook_batch import run_batch, said_in

KEY = "test-key-the-fleet-shares-0123"
CLIENTS = [{"name": "alice", "key": "test-key-of-alice-0123456789"}]

PLAY = """
# unplanned-b is in a group but not in the run (as --limit leaves a host out)
- hosts: all:!unplanned-b
  gather_facts: false
  tasks:
    # vllm_service's variables (its address rules), as its preflight has them
    - ansible.builtin.include_role:
        name: llmhost.vllm.vllm_service
        tasks_from: validate
        public: true
    - name: Publish a plan, as vllm_service's preflight does
      ansible.builtin.set_fact:
        vllm_service_plan: {served_model_name: "{{ test_model }}", max_model_len: "{{ test_max_model_len }}"}
        vllm_service_endpoints: ["127.0.0.1:8000", "127.0.0.1:8001"]
        vllm_service_network_endpoints: >-
          {{ [] if __vllm_service_network_host | length == 0
             else [__vllm_service_network_host ~ ':8000', __vllm_service_network_host ~ ':8001'] }}
    - ansible.builtin.include_role:
        name: llmhost.vllm.gateway
        tasks_from: plan
    - name: Compare with what the case expects
      ansible.builtin.assert:
        that:
          - __gateway_backends == test_backends
          - __gateway_max_tokens | int == test_max_tokens | int
        fail_msg: "UNEXPECTED {{ __gateway_backends }} {{ __gateway_max_tokens }}"
      when: test_backends is defined
"""

# name: (hosts {name: vars}, the words the gateway host's refusal says, or None and the upstream it gets)
CASES = {
    "two_hosts": ({"b": {"vllm_service_host": "10.0.0.2", "test_max_model_len": 2048},
                   "c": {"vllm_service_host": "0.0.0.0", "ansible_host": "10.0.0.3"}},
                  None, ["127.0.0.1:8000", "127.0.0.1:8001", "10.0.0.2:8000", "10.0.0.2:8001",
                         "10.0.0.3:8000", "10.0.0.3:8001"]),
    "advertised": ({"b": {"vllm_service_host": "127.0.0.2", "vllm_service_advertise_address": "127.0.0.2",
                          "vllm_service_advertise_loopback": True}},
                   None, ["127.0.0.1:8000", "127.0.0.1:8001", "127.0.0.2:8000", "127.0.0.2:8001"]),
    "loopback": ({"b": {}}, "host loopback-b's replicas listen on loopback only: set vllm_service_host there", None),
    "models": ({"b": {"vllm_service_host": "10.0.0.2", "test_model": "qwen-other"}},
               "the hosts serve different models (models-gw: qwen, models-b: qwen-other)", None),
    "keys": ({"b": {"vllm_service_host": "10.0.0.2", "vllm_service_api_key": "another-key-of-host-b-0123"}},
             "the hosts hold different vllm_service_api_key values (not shown)", None),
    "unplanned": ({"b": {"vllm_service_host": "10.0.0.2"}},
                  "vllm_service made no serving plan on unplanned-b in this run", None),
}


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory):
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    base = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "llmhost_stack": "current",
            "vllm_service_api_key": KEY, "test_model": "qwen", "test_max_model_len": 4096}
    children = {}
    for case, (others, _words, backends) in CASES.items():
        gateway = dict(base, gateway_clients=CLIENTS, gateway_backends_group=case)
        if backends:
            gateway.update(test_backends=backends, test_max_tokens=min(
                [4096] + [o.get("test_max_model_len", 4096) for o in others.values()]))
        hosts = {"%s-gw" % case: gateway}
        hosts.update({"%s-%s" % (case, name): dict(base, gateway_state="skip", **extra)
                      for name, extra in others.items()})
        children[case] = {"hosts": hosts}
    return run_batch(tmp_path_factory.mktemp("fleet"), {"all": {"children": children}}, PLAY)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fleet_gateway_fronts_its_group_or_says_why_not(fleet_run, case):
    _rc, out, hosts = fleet_run
    _others, words, backends = CASES[case]
    got = hosts["%s-gw" % case]
    if backends:
        assert not got["failed"], got
    else:
        assert said_in("gateway_backends_group=%s" % case, got["failed"]) or said_in("made no serving plan", got["failed"])
        assert said_in(words, got["failed"]), (words, got["failed"])
    assert not any(h["failed"] for name, h in hosts.items() if not name.endswith("-gw")), hosts
    assert "another-key-of-host-b" not in out and KEY not in out
