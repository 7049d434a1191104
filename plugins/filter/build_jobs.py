# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: how many parallel compiler jobs a host can run without running out of memory."""

from __future__ import annotations

DOCUMENTATION = r"""
name: build_jobs
short_description: Parallel compile jobs (MAX_JOBS) that fit a host's memory and cores
version_added: 0.1.0
description:
  - vLLM's CUDA kernels take several GiB of memory per nvcc job; as many jobs as cores (the build's
    default) runs a 24 GiB machine out of memory. This gives the number of jobs that fits.
  - "Jobs = min(cores, (memory - reserve) / per_job), at least 1."
options:
  _input:
    description: Total memory in MiB (C(ansible_facts.memtotal_mb)).
    type: int
    required: true
  cores:
    description: CPU cores (C(ansible_facts.processor_vcpus)).
    type: int
    required: true
  per_job_gib:
    description: Memory one job needs, in GiB.
    type: float
    default: 6
  reserve_gib:
    description: Memory kept for the rest of the system, in GiB.
    type: float
    default: 4
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: MAX_JOBS for a vLLM source build
  ansible.builtin.debug:
    msg: "{{ ansible_facts.memtotal_mb | llmhost.vllm.build_jobs(ansible_facts.processor_vcpus) }}"
"""

RETURN = r"""
_value:
  description: The number of jobs, at least 1.
  type: int
"""

from ansible.errors import AnsibleFilterError


def build_jobs(mem_mb, cores, per_job_gib=6, reserve_gib=4):
    """Jobs that fit: min(cores, (mem - reserve) // per_job), at least 1."""
    try:
        mem_gib = float(mem_mb) / 1024
        cores = int(cores)
        per_job_gib = float(per_job_gib)
        reserve_gib = float(reserve_gib)
    except (TypeError, ValueError) as e:
        raise AnsibleFilterError("build_jobs needs numbers: %s" % e)
    if per_job_gib <= 0 or cores < 1:
        raise AnsibleFilterError("build_jobs needs per_job_gib > 0 and cores >= 1")
    return max(1, min(cores, int((mem_gib - reserve_gib) // per_job_gib)))


class FilterModule:
    """llmhost.vllm build filters."""

    def filters(self):
        return {"build_jobs": build_jobs}
