#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_report
short_description: Summarize a benchmark run's result files into a table, a comparison and charts
version_added: 0.1.0
description:
  - Reads the result JSON that vLLM's serving benchmark (C(vllm bench serve), or C(benchmark_serving.py) of a pinned
    release) wrote for each phase into I(run_dir), and writes beside them C(summary.json), C(report.md) (output tok/s,
    request/s, TTFT p50/p95/p99, ITL p50/p95, end-to-end p95, errors, the lengths and the peak in flight each phase
    really had), C(plan.json) and C(profile.json).
  - With I(earlier) (an earlier run's C(summary.json)), the report adds ratios per phase and the charts show both runs.
  - Draws C(throughput.png), C(ttft.png) and C(itl.png) with matplotlib when the interpreter has it (the benchmark
    role runs this module with its venv's Python); without it, says so in I(warnings) and writes the rest.
  - Every file is written to a temporary name and renamed.
  - Logic in C(module_utils/bench.py).
options:
  run_dir:
    description: The run's folder on the host, holding C(<phase name>.json) per phase.
    type: path
    required: true
  phases:
    description: The phases that ran (I(benchmark_phases)).
    type: list
    elements: dict
    required: true
  info:
    description:
      - What the report says about the run (host, when, target, client_label, profile, plan_label, label).
      - Without I(plan_label), the options of I(plan)'s first replica (where it listens and its name left out).
    type: dict
    default: {}
  earlier:
    description: An earlier run's summary to compare with; omitted for none.
    type: dict
  plan:
    description: The serving plan the host ran with, written as C(plan.json).
    type: dict
    default: {}
  profile:
    description: The stack profile used, written as C(profile.json).
    type: dict
    default: {}
  charts:
    description: Draw the PNG charts.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reads the results and returns the summary; writes nothing.
  diff_mode:
    support: none
    description: The report is returned instead.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Write the run's report
  llmhost.vllm.bench_report:
    run_dir: /var/lib/llmhost/bench/20261204T052000Z
    phases: "{{ benchmark_phases }}"
    info: {host: "{{ inventory_hostname }}", when: 20261204T052000Z}
  vars:
    ansible_python_interpreter: /opt/llmhost/bench/venv/bin/python
"""

RETURN = r"""
summary:
  description: The run's summary (what I(info) gave, and one row per phase).
  returned: always
  type: dict
markdown:
  description: The report's text (C(report.md)).
  returned: always
  type: str
comparison:
  description: Ratios per phase against I(earlier) (this run / that one).
  returned: when earlier is given
  type: list
  elements: dict
files:
  description: The files written into I(run_dir).
  returned: always
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import bench, run_files


def _load(run_dir, phases):
    """Each phase's result JSON, or None where the load generator left none (or an unreadable one); a phase the
    role stopped past its time (its .rc says timeout) is all errors, saying so."""
    results = {}
    for phase in phases:
        try:
            with open(os.path.join(run_dir, phase["name"] + ".json")) as f:
                results[phase["name"]] = json.load(f)
        except (OSError, ValueError):
            results[phase["name"]] = _stopped(run_dir, phase)
    return results


def _stopped(run_dir, phase):
    try:
        with open(os.path.join(run_dir, phase["name"] + ".rc")) as f:
            timed_out = f.read().strip() == "timeout"
    except OSError:
        timed_out = False
    return {"completed": 0, "errors": ["ran past benchmark_phase_timeout and was stopped"]} if timed_out else None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            run_dir=dict(type="path", required=True),
            phases=dict(type="list", elements="dict", required=True),
            info=dict(type="dict", default={}),
            earlier=dict(type="dict"),
            plan=dict(type="dict", default={}),
            profile=dict(type="dict", default={}),
            charts=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    errors = bench.phase_errors(p["phases"], "phases")
    if errors:
        module.fail_json(msg="; ".join(errors))
    info = dict(p["info"])
    if p["plan"] and not info.get("plan_label"):
        info["plan_label"] = bench.plan_label(p["plan"])
    summary = bench.summarize(p["phases"], _load(p["run_dir"], p["phases"]), info)
    text = bench.markdown(summary, p["earlier"])
    result = dict(changed=not module.check_mode, summary=summary, markdown=text, files=[])
    if p["earlier"] is not None:
        result["comparison"] = bench.compare(summary, p["earlier"])
    if module.check_mode:
        module.exit_json(**result)
    warnings = []
    for name, content in (("summary.json", json.dumps(summary, indent=1, sort_keys=True)), ("report.md", text),
                          ("plan.json", json.dumps(p["plan"], indent=1, sort_keys=True)),
                          ("profile.json", json.dumps(p["profile"], indent=1, sort_keys=True))):
        run_files.write(module, os.path.join(p["run_dir"], name), content + ("\n" if not content.endswith("\n") else ""))
        result["files"].append(name)
    if p["charts"]:
        result["files"] += run_files.charts(module, p["run_dir"], lambda d: bench.charts(summary, d, p["earlier"]), warnings)
    module.exit_json(warnings=warnings, **result)


if __name__ == "__main__":
    main()
