#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: canary_probe
short_description: Ask a canary replica and an old one the same prompts, and Prometheus for their SLO figures
version_added: 0.3.0
description:
  - The evidence of a model upgrade's canary stage, gathered on the host where the replicas listen.
  - Sends each prompt of O(prompts) as one completion with greedy decoding (temperature 0) to the canary and to a
    replica of the old model, directly at their own ports, and returns what each answered.
  - Asks Prometheus (O(prometheus_url)) for the requests, the 5xx answers and the P95 time to first token of the canary
    and of the old replicas (O(old_urls), all of them) over the last O(window_s) seconds (C(module_utils/canary.py)'s
    C(slo_queries)). Prometheus knows each replica by its C(host:port), as vllm_service lists it for scraping.
  - Judges nothing; the filter C(canary_verdict) decides from what it returns.
options:
  prompts:
    description: The prompt set, each with C(name), C(prompt), C(max_tokens) and C(checks) (checked before).
    type: list
    elements: dict
    required: true
  canary_url:
    description: The canary replica's base URL, such as C(http://127.0.0.1:8000).
    type: str
    required: true
  old_urls:
    description: The replicas of the old model; the first is asked the prompts.
    type: list
    elements: str
    required: true
  model:
    description: The served model name both answer to.
    type: str
    required: true
  prometheus_url:
    description: Prometheus' base URL; empty asks nothing.
    type: str
    default: ""
  metrics:
    description: The metric names, C(http_requests) (vLLM's HTTP counter) and C(ttft) (its time-to-first-token histogram).
    type: dict
    default: {http_requests: http_requests_total, ttft: "vllm:time_to_first_token_seconds"}
  window_s:
    description: The window, in seconds up to now, Prometheus' figures cover (the soak).
    type: int
    default: 120
extends_documentation_fragment:
  - llmhost.vllm.read_only
  - llmhost.vllm.replica_client
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Gather the canary's evidence
  llmhost.vllm.canary_probe:
    prompts: "{{ lookup('ansible.builtin.file', 'files/canary-prompts.yml') | from_yaml }}"
    canary_url: http://127.0.0.1:8000
    old_urls: [http://127.0.0.1:8001]
    model: qwen
    api_key: "{{ vllm_service_api_key }}"
    prometheus_url: http://127.0.0.1:9090
    window_s: 120
  no_log: true
  register: evidence
"""

RETURN = r"""
answers:
  description: C(canary) and C(old), each prompt name to C(text) and C(finish_reason), or C(error).
  returned: always
  type: dict
  sample: {canary: {zh-capital: {text: "北京。", finish_reason: stop}}, old: {zh-capital: {error: "HTTP 500: ..."}}}
responses:
  description: Query name to Prometheus' JSON answer (C(status), C(data)), or C(status) error with C(error).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmhost.vllm.plugins.module_utils import canary
from ansible_collections.llmhost.vllm.plugins.module_utils.http_fetch import make_fetch


def main():
    module = AnsibleModule(
        argument_spec=dict(
            prompts=dict(type="list", elements="dict", required=True),
            canary_url=dict(type="str", required=True),
            old_urls=dict(type="list", elements="str", required=True),
            model=dict(type="str", required=True),
            api_key=dict(type="str", default="", no_log=True),
            prometheus_url=dict(type="str", default=""),
            metrics=dict(type="dict", default={"http_requests": "http_requests_total",
                                               "ttft": "vllm:time_to_first_token_seconds"}),
            window_s=dict(type="int", default=120),
            request_timeout=dict(type="int", default=120),
        ),
        supports_check_mode=True,
    )
    p = module.params
    errors = canary.prompt_set_errors(p["prompts"], "prompts")
    if errors:
        module.fail_json(msg="; ".join(errors))
    replicas = make_fetch(p["api_key"], p["request_timeout"])
    answers = {"canary": canary.ask_prompts(replicas, p["canary_url"], p["model"], p["prompts"]),
               "old": canary.ask_prompts(replicas, p["old_urls"][0], p["model"], p["prompts"])}
    queries = canary.slo_queries(p["metrics"], p["window_s"], canary.instance(p["canary_url"]),
                                 [canary.instance(u) for u in p["old_urls"]])
    responses = canary.ask_prometheus(make_fetch("", p["request_timeout"]), p["prometheus_url"], queries) \
        if p["prometheus_url"] else {}
    module.exit_json(changed=False, answers=answers, responses=responses)


if __name__ == "__main__":
    main()
