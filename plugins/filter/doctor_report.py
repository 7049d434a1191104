# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: turn what the doctor read off a running host into its report (checks, summary, Markdown)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: doctor_report
short_description: Build the llmhost.vllm doctor report of a running host
version_added: 0.1.0
description:
  - Sets what the doctor role read off a running host against what it should be, as checks with PASS, WARN, FAIL or
    INFO, the evidence and the fix, after the host report's own checks; plus a Markdown rendering.
  - The driver's kernel module against its library, Xid lines per GPU since boot, each GPU's PCIe generation while
    busy, clock event reasons active now, each replica's unit (restarts and last result), the KV cache vLLM found at
    each replica's start against the serving plan's estimate, the packages the collection holds, free space on the
    model and cache volumes, and the gateway's /health.
options:
  _input:
    description:
      - Dict with C(host) and C(evidence), whose keys are C(host_checks), C(proc_version), C(library_version),
        C(library_error), C(kernel_log), C(kernel_log_read), C(gpus), C(clock_gpus), C(plan), C(replicas) (each
        C(index), C(unit) as C(systemctl show) prints it, C(log)), C(selections), C(blacklists), C(df),
        C(min_free_gib) and C(gateway) (C(url), C(status)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Build the report
  ansible.builtin.set_fact:
    doctor: "{{ {'host': inventory_hostname, 'evidence': {'proc_version': version_text}} | llmhost.vllm.doctor_report }}"
"""

RETURN = r"""
_value:
  description: C(host), C(checks) (list of dicts), C(summary) (counts per status) and C(markdown) (str).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.module_utils.doctor import build


def doctor_report(data):
    if not isinstance(data, dict) or not isinstance(data.get("evidence"), dict):
        raise AnsibleFilterError("doctor_report expects a dict with host and evidence, got %s" % type(data).__name__)
    return build(data.get("host"), data["evidence"])


class FilterModule:
    """llmhost.vllm doctor report filter."""

    def filters(self):
        return {"doctor_report": doctor_report}
