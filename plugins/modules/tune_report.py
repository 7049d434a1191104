#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: tune_report
short_description: Write a tuning run's report - every candidate in the benchmark's columns, the decision, charts
version_added: 0.4.0
description:
  - Writes into I(run_dir) C(summary.json), C(report.md) (one row per candidate with the benchmark's figures for the
    judged phase, its verdict - winner, ranked, or out with the reason - what it is and the options it served with,
    the candidates left out and why, and what was adopted) and C(throughput.png), C(ttft.png) and C(itl.png), one
    panel per candidate, drawn as the benchmark draws its phases (matplotlib; run it with the benchmark venv's
    Python).
  - Every file is written to a temporary name and renamed.
  - Logic in C(module_utils/tune.py) and C(module_utils/bench.py).
options:
  run_dir:
    description: The tuning run's folder on the host.
    type: path
    required: true
  info:
    description: What the report says of the run (C(host), C(started), C(goal), C(slo_ms), C(floor), C(for), C(client_label), C(tuned_file)).
    type: dict
    default: {}
  candidates:
    description: The candidates measured, each C(name), C(reason) and its C(plan).
    type: list
    elements: dict
    required: true
  dropped:
    description: The candidates left out, name to why.
    type: dict
    default: {}
  results:
    description: Each candidate's result JSON of the judged phase, or C(error) where it has none.
    type: dict
    required: true
  phase:
    description: The judged phase (C(name), C(input_len), C(output_len), C(concurrency), C(requests)).
    type: dict
    required: true
  choice:
    description: The decision (C(winner), C(why), C(ranked), C(out), C(record)), as the filter C(tune_decide) makes it.
    type: dict
    required: true
attributes:
  check_mode:
    support: full
    description: Returns the report; writes nothing.
  diff_mode:
    support: none
    description: The report is returned instead.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Write the tuning report
  llmhost.vllm.tune_report:
    run_dir: /var/lib/llmhost/tune/20261207T120000Z
    info: {host: "{{ inventory_hostname }}", started: 20261207T120000Z, goal: throughput, slo_ms: 2000}
    candidates: "{{ vllm_service_tuning.candidates }}"
    results: "{{ __results }}"
    phase: {name: tune, input_len: 512, output_len: 128, concurrency: 32, requests: 128}
    choice: "{{ __choice }}"
  vars:
    ansible_python_interpreter: /opt/llmhost/bench/venv/bin/python
"""

RETURN = r"""
summary:
  description: The run's summary (I(info), one row per candidate, the candidates left out, the winner and why).
  returned: always
  type: dict
markdown:
  description: The report's text (C(report.md)).
  returned: always
  type: str
files:
  description: The files written into I(run_dir).
  returned: always
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import bench, run_files, tune


def main():
    module = AnsibleModule(
        argument_spec=dict(
            run_dir=dict(type="path", required=True),
            info=dict(type="dict", default={}),
            candidates=dict(type="list", elements="dict", required=True),
            dropped=dict(type="dict", default={}),
            results=dict(type="dict", required=True),
            phase=dict(type="dict", required=True),
            choice=dict(type="dict", required=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    summary, text = tune.report(p["info"], p["candidates"], p["dropped"], p["results"], p["phase"], p["choice"])
    result = dict(changed=not module.check_mode, summary=summary, markdown=text, files=[])
    if module.check_mode:
        module.exit_json(**result)
    warnings = []
    os.makedirs(p["run_dir"], mode=0o755, exist_ok=True)
    for name, content in (("summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n"), ("report.md", text)):
        run_files.write(module, os.path.join(p["run_dir"], name), content)
        result["files"].append(name)
    result["files"] += run_files.charts(module, p["run_dir"], lambda d: bench.charts(summary, d), warnings)
    module.exit_json(warnings=warnings, **result)


if __name__ == "__main__":
    main()
