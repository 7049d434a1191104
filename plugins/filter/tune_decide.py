# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the tuning's choice over what each candidate measured, and the record to adopt."""

from __future__ import annotations

DOCUMENTATION = r"""
name: tune_decide
short_description: The tuning's winner over the measured candidates, why, and the record to adopt (tuned.json)
version_added: 0.4.0
description:
  - C(throughput) goal - the most output tokens a second among the candidates with P95 TTFT at or under
    C(tune_slo_p95_ttft_ms); C(latency) - the lowest P95 TTFT among those at or over C(tune_throughput_floor).
  - A candidate that errs (did not start, left no result) or loses requests is out, with the reason. With none left,
    there is no winner and nothing is adopted.
  - The winner's record holds its wishes and options, what it measured, why it won and what it holds for (the
    model's shape, vLLM, the GPUs).
  - Logic in C(module_utils/tune.py).
options:
  _input:
    description: Candidate name to its judged phase's result JSON (C(vllm bench serve --save-result)), or C(error).
    type: dict
    required: true
  candidates:
    description: The candidates measured (C(name), C(wishes), C(extra_args)).
    type: list
    elements: dict
    required: true
  settings:
    description: C(tune_goal), C(tune_slo_p95_ttft_ms), C(tune_throughput_floor).
    type: dict
    required: true
  fingerprint:
    description: What the measurement holds for (vllm_service's C(vllm_service_tuning.for)).
    type: dict
    required: true
  when:
    description: When the winner is adopted (UTC, ISO 8601).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    __choice: "{{ __results | llmhost.vllm.tune_decide(__kept, __settings, vllm_service_tuning.for, '2026-12-07T12:00:00Z') }}"
"""

RETURN = r"""
_value:
  description: C(winner) (or None), C(why), C(ranked), C(out) (name to reason), C(figures), C(record) (or None).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import tune


def tune_decide(results, candidates, settings, fingerprint, when):
    return tune.decide(dict(results), list(candidates), dict(settings), dict(fingerprint), str(when))


class FilterModule:
    def filters(self):
        return {"tune_decide": tune_decide}
