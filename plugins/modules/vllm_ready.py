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
from ansible_collections.llmhost.vllm.plugins.module_utils.vllm_ready import check_server


def main():
    module = AnsibleModule(
        argument_spec=dict(
            urls=dict(type="list", elements="str", required=True),
            model=dict(type="str", required=True),
            api_key=dict(type="str", default="", no_log=True),
            timeout=dict(type="int", default=1200),
            request_timeout=dict(type="int", default=120),
        ),
        supports_check_mode=True,
    )
    fetch = make_fetch(module.params["api_key"], module.params["request_timeout"])
    servers = []
    for url in module.params["urls"]:
        problem, facts = check_server(fetch, url.rstrip("/"), module.params["model"], module.params["timeout"])
        servers.append(facts)
        if problem:
            module.fail_json(msg=problem, servers=servers)
    module.exit_json(changed=False, servers=servers)


if __name__ == "__main__":
    main()
