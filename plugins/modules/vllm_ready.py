#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_ready
short_description: Wait until vLLM servers serve - /health, the model in /v1/models, one real completion
version_added: 0.2.0
description:
  - For each URL in turn, polls C(/health) every second until it answers 200 (a replica loads the model and
    captures CUDA graphs before it listens), then checks that C(/v1/models) lists O(model) and that
    C(/v1/completions) returns one completion (8 tokens at temperature 0).
  - All of it in one run on the host, which is where the servers listen (they may listen on loopback only); three
    C(uri) tasks per server cost three round trips, and their retries one more each.
  - Fails, naming the server and what it answered, at the first server that is not ready.
options:
  urls:
    description: The servers' base URLs, such as C(http://127.0.0.1:8000), checked in this order.
    type: list
    elements: str
    required: true
  model:
    description: The served model name (C(--served-model-name)) that C(/v1/models) must list and the completion asks for.
    type: str
    required: true
  timeout:
    description: Seconds each server has to answer C(/health) with 200.
    type: int
    default: 1200
  units:
    description:
      - The systemd unit behind each URL, in the same order (fewer units than URLs - the rest unwatched).
      - While a server does not answer, its unit is watched - when systemd has given up on it (C(failed)) or it
        exited twice or more during the wait, the wait ends at once, naming the unit, instead of lasting O(timeout).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - llmhost.vllm.read_only
  - llmhost.vllm.replica_client
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Wait until both replicas serve
  llmhost.vllm.vllm_ready:
    urls: [http://127.0.0.1:8000, http://127.0.0.1:8001]
    model: qwen
    api_key: "{{ vllm_service_api_key }}"
  no_log: "{{ vllm_service_api_key | length > 0 }}"
"""

RETURN = r"""
servers:
  description: What each server answered, in order (up to the first that was not ready).
  returned: always
  type: list
  elements: dict
  contains:
    url:
      description: The server's base URL.
      type: str
    health_seconds:
      description: How long C(/health) took to answer 200.
      type: float
    models:
      description: The ids C(/v1/models) listed.
      type: list
      elements: str
    completion:
      description: The completion's text.
      type: str
  sample: [{url: "http://127.0.0.1:8000", health_seconds: 0.0, models: [qwen], completion: " Yes"}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmhost.vllm.plugins.module_utils.http_fetch import make_fetch
from ansible_collections.llmhost.vllm.plugins.module_utils.vllm_ready import check_server, unit_gone


def _unit_state(module, unit):
    rc, out, _err = module.run_command(["systemctl", "show", "-p", "ActiveState,Result,NRestarts", unit])
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line) if rc == 0 else {}


def _gone(module, unit):
    """The unit's watch for wait_healthy (None without a unit, or where systemctl cannot say)."""
    if not unit:
        return None
    first = _unit_state(module, unit)
    return lambda: unit_gone(first, _unit_state(module, unit), unit) if first else None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            urls=dict(type="list", elements="str", required=True),
            model=dict(type="str", required=True),
            api_key=dict(type="str", default="", no_log=True),
            timeout=dict(type="int", default=1200),
            request_timeout=dict(type="int", default=120),
            units=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    fetch = make_fetch(module.params["api_key"], module.params["request_timeout"])
    servers = []
    units = module.params["units"] + [None] * len(module.params["urls"])
    for url, unit in zip(module.params["urls"], units):
        problem, facts = check_server(fetch, url.rstrip("/"), module.params["model"], module.params["timeout"],
                                      gone=_gone(module, unit))
        servers.append(facts)
        if problem:
            module.fail_json(msg=problem, servers=servers)
    module.exit_json(changed=False, servers=servers)


if __name__ == "__main__":
    main()
