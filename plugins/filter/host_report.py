# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: turn what host_report read off a host into the report (checks, summary, Markdown)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: host_report
short_description: Build the llmhost.vllm host report from facts
version_added: 0.1.0
description:
  - Sets the facts read off a host (C(gpu_facts), C(numa_facts), live sysctl values, C(/proc/cmdline)) against what
    the collection's roles want, as a list of checks with PASS, WARN, FAIL or INFO and the fix the site playbook
    would apply, plus a Markdown rendering.
options:
  _input:
    description:
      - Dict with C(host), C(system), C(gpu_topology), C(numa), C(sysctl), C(wanted_sysctl), C(cmdline), C(wanted_cmdline)
        and C(profile) (the selected stack profile) and C(wanted_cpu) (C(thp), C(governor), C(platform_profile)).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Build the report
  ansible.builtin.set_fact:
    report: "{{ {'host': inventory_hostname, 'gpu_topology': ansible_facts.gpu_topology} | llmhost.vllm.host_report }}"
"""

RETURN = r"""
_value:
  description:
    - C(checks) (list of dicts), C(blocking) (the failed checks that make site.yml stop) and C(blocking_text) (them,
      one sentence each), C(summary) (counts per status),
      C(markdown) (str) and the inputs.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.module_utils.report import build_report


def host_report(data):
    if not isinstance(data, dict):
        raise AnsibleFilterError("host_report expects a dict, got %s" % type(data).__name__)
    return build_report(data.get("host"), data.get("system") or {}, data.get("gpu_topology") or {}, data.get("numa") or {},
                        data.get("sysctl") or {}, data.get("wanted_sysctl") or {}, data.get("cmdline") or "",
                        data.get("wanted_cmdline") or [], data.get("profile"), data.get("wanted_cpu"),
                        data.get("python"))


class FilterModule:
    """llmhost.vllm host report filter."""

    def filters(self):
        return {"host_report": host_report}
