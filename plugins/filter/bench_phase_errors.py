# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what is wrong with the benchmark's phases."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bench_phase_errors
short_description: What is wrong with a list of benchmark phases, one sentence each
version_added: 0.1.0
description:
  - Each phase needs a file-safe I(name) (used once), I(input_len) (a length or C([shortest, longest])), and
    whole numbers of 1 or more for I(output_len), I(concurrency) and I(requests).
  - The benchmark role's input check (logic in C(module_utils/bench.py)).
options:
  _input:
    description: The phases (I(benchmark_phases)).
    type: list
    elements: dict
    required: true
  variable:
    description: The variable's name, for the sentences.
    type: str
    default: benchmark_phases
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse phases that cannot run
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ benchmark_phases | llmhost.vllm.bench_phase_errors }}"
"""

RETURN = r"""
_value:
  description: Sentences naming each bad phase and field; empty when all can run.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import bench


def bench_phase_errors(phases, variable="benchmark_phases"):
    return bench.phase_errors(phases, variable)


class FilterModule:
    """llmhost.vllm input filter bench_phase_errors."""

    def filters(self):
        return {"bench_phase_errors": bench_phase_errors}
