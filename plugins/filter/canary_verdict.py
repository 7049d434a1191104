# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: promote the canary or roll it back, from what canary_probe gathered, with the report."""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import canary

DOCUMENTATION = r"""
name: canary_verdict
short_description: Promote a model upgrade's canary or roll it back, with each rule's reason and the report
version_added: 0.3.0
description:
  - Scores each replica's answers by the prompt set's checks, reads the SLO figures from Prometheus' answers, and
    applies the rules of C(module_utils/canary.py) in order (answers, 5xx error rate, P95 time to first token); any
    rule that fails rolls the canary back. A query Prometheus did not answer rolls it back too.
options:
  _input:
    description: What C(canary_probe) returned (C(answers), C(responses)).
    type: dict
    required: true
  prompts:
    description: The prompt set the probe sent.
    type: list
    elements: dict
    required: true
  limits:
    description: C(score_tolerance), C(max_error_rate_increase), C(max_ttft_ratio).
    type: dict
    required: true
  context:
    description: For the report, C(old_source), C(new_source), C(canary_endpoint), C(old_endpoints), C(percent), C(soak_s).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    verdict: "{{ evidence | llmhost.vllm.canary_verdict(prompts, limits, context) }}"
"""

RETURN = r"""
_value:
  description: C(decision) (promote or rollback), C(why), C(rules) (each C(rule), C(passed), C(reason)), C(scores),
    C(figures), and C(report) (Markdown).
  type: dict
"""


def canary_verdict(evidence, prompts, limits, context):
    verdict = canary.judge(prompts, evidence.get("answers") or {}, evidence.get("responses") or {}, limits)
    return dict(verdict, report=canary.report_markdown(verdict, context))


class FilterModule:
    def filters(self):
        return {"canary_verdict": canary_verdict}
