# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the load generator's command line for one benchmark phase."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bench_client_argv
short_description: The command line of vLLM's serving benchmark for one phase
version_added: 0.1.0
description:
  - For C(vllm bench serve) (I(client=vllm)) or a pinned release's C(benchmark_serving.py) (I(client=script)).
  - The random dataset at the phase's lengths, its request count at its concurrency, all sent at once, ignoring EOS,
    with TTFT, TPOT, ITL and end-to-end percentiles 50/95/99 saved as C(<phase name>.json).
  - The two differ only in how C(--random-range-ratio) draws lengths; logic in C(module_utils/bench.py).
options:
  _input:
    description: One phase (an item of I(benchmark_phases)).
    type: dict
    required: true
  client:
    description: C(vllm) or C(script).
    type: str
    required: true
  program:
    description: The command that starts the load generator (C([vllm]) or C([python, benchmark_serving.py])).
    type: list
    elements: str
    required: true
  target:
    description: I(base_url), I(model) (the served name), I(tokenizer) (a path on the host), I(result_dir), I(seed).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Run one phase
  ansible.builtin.command:
    argv: "{{ phase | llmhost.vllm.bench_client_argv('vllm', ['/opt/llmhost/vllm/venv/bin/vllm'], target) }}"
"""

RETURN = r"""
_value:
  description: The command line, one argument per item.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.module_utils import bench


def bench_client_argv(phase, client, program, target):
    try:
        return bench.client_argv(client, program, phase, target)
    except (bench.BenchError, KeyError) as exc:
        raise AnsibleFilterError("bench_client_argv: %s" % exc)


class FilterModule:
    """llmhost.vllm filter bench_client_argv."""

    def filters(self):
        return {"bench_client_argv": bench_client_argv}
