# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: playbooks/tune.yml's settings, refused by name, and the phases each candidate is measured with."""

from __future__ import annotations

DOCUMENTATION = r"""
name: tune_settings
short_description: The tuning's settings checked by name, and the phases each candidate is measured with
version_added: 0.4.0
description:
  - Refuses, naming the variable and what it may be - a C(tune_slo_p95_ttft_ms) that is not a finite positive
    number, an unknown C(tune_goal), a C(tune_max_candidates) outside 1-32, a C(tune_workload) that is not whole
    C(input_len), C(output_len) and C(concurrency), C(tune_candidates) unnamed, named twice or named C(plan), one
    passing an option the plan owns (it would contradict the plan's own - give it as a wish) or an argument a unit
    cannot carry, and one replica without C(tune_allow_downtime).
  - The phases - C(tune_workload) as one phase of four requests per concurrent one, or the benchmark role's
    phases - and the phase the choice reads (the most concurrent).
  - Logic in C(module_utils/tune.py).
options:
  _input:
    description: The C(tune_*) settings, name to value.
    type: dict
    required: true
  replicas:
    description: How many replicas the host serves.
    type: int
    required: true
  bench_phases:
    description: The benchmark role's phases (C(benchmark_phases)).
    type: list
    elements: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Check the tuning's settings
  ansible.builtin.set_fact:
    __tune: "{{ {'tune_goal': 'throughput', 'tune_slo_p95_ttft_ms': 2000} | llmhost.vllm.tune_settings(2, benchmark_phases) }}"
"""

RETURN = r"""
_value:
  description: C(errors) (sentences naming the variable); without errors also C(phases) and C(judged) (a phase's name).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import tune


def tune_settings(settings, replicas, bench_phases):
    return tune.settings(dict(settings), int(replicas), list(bench_phases))


class FilterModule:
    def filters(self):
        return {"tune_settings": tune_settings}
