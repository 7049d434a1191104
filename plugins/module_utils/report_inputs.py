# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the host report and the doctor read, from the results their tasks registered (a read that did not run
arrives as an empty string).

Each role registers its reads (a command's result, a slurped file, a module's answer) and hands them here by name in
one call; what each answer means (a return code, a first line, a base64 body) is decided here, with tests, rather
than in a 20-line Jinja value."""

from __future__ import annotations

import base64

# The variables each report reads, in the order the role's tasks register them.
DOCTOR_NAMES = ["inventory_hostname", "ansible_facts", "host_report_result", "doctor_min_free_gib", "gateway_url",
                "__doctor_module", "__doctor_smi", "__doctor_xids", "__doctor_kernel_log_ours", "__doctor_clocks",
                "__doctor_plan", "__doctor_units", "__doctor_kv", "__doctor_processes", "__doctor_selections",
                "__doctor_blacklists", "__doctor_df", "__doctor_gateway", "__doctor_bandwidth_run",
                "__doctor_burnin_result", "__doctor_cluster", "vllm_service_tuning", "__doctor_now"]
HOST_REPORT_NAMES = ["inventory_hostname", "ansible_facts", "__host_report_reads", "system_tuning_wanted_sysctl",
                     "system_tuning_wanted_cmdline", "system_tuning_thp", "system_tuning_cpu_governor",
                     "system_tuning_platform_profile", "llmhost_stack_profile", "llmhost_stack_python"]


def _text(b64):
    return base64.b64decode(b64 or "").decode("utf-8", "replace")


def _lines(result):
    return list((result or {}).get("stdout_lines") or [])


def _results(result):
    return list((result or {}).get("results") or [])


def _replicas(plan, units, kv, processes):
    out = []
    for i, replica in enumerate((plan or {}).get("replicas") or []):
        pick = [(units[i] if i < len(units) else {}), (kv[i] if i < len(kv) else {}),
                (processes[i] if i < len(processes) else {})]
        out.append({"index": replica.get("name"), "unit": pick[0].get("stdout", ""), "log": pick[1].get("stdout", ""),
                    "process": _text(pick[2].get("content"))})
    return out


def _library(smi):
    smi = smi or {}
    version = (_lines(smi) or [""])[0] if smi.get("rc", 1) == 0 else ""
    return version, smi.get("stderr") or smi.get("msg") or ""


def _gateway(url, answer):
    if not url:
        return None
    answer = answer or {}
    return {"url": url + "/health", "status": answer.get("status"), "error": answer.get("msg", "")}


def doctor(v):
    """{'host', 'evidence'} for module_utils/doctor.build, from the doctor's registered reads (DOCTOR_NAMES)."""
    facts = v.get("ansible_facts") or {}
    topo = facts.get("gpu_topology") or {}
    plan = v.get("__doctor_plan") or {}
    version, error = _library(v.get("__doctor_smi"))
    xids = v.get("__doctor_xids") or {}
    blacklists = _results(v.get("__doctor_blacklists"))
    return {"host": v.get("inventory_hostname"), "evidence": {
        "host_checks": (v.get("host_report_result") or {}).get("checks", []),
        "proc_version": _text((v.get("__doctor_module") or {}).get("content")),
        "library_version": version, "library_error": error,
        "kernel_log": _lines(xids), "kernel_log_read": xids.get("rc", 2) in (0, 1) and bool(v.get("__doctor_kernel_log_ours")),
        "gpus": topo.get("gpus") or [], "numa_nodes": (facts.get("numa") or {}).get("nodes") or [],
        "clock_gpus": (v.get("__doctor_clocks") or {}).get("gpus"),
        "plan": plan if plan.get("replicas") else {},
        "replicas": _replicas(plan, _results(v.get("__doctor_units")), _results(v.get("__doctor_kv")),
                              _results(v.get("__doctor_processes"))),
        "selections": _lines(v.get("__doctor_selections")),
        "blacklists": {r.get("source"): _text(r.get("content")) for r in blacklists},
        "df": _lines(v.get("__doctor_df")), "min_free_gib": v.get("doctor_min_free_gib"),
        "gateway": _gateway(v.get("gateway_url") or "", v.get("__doctor_gateway")),
        "links": topo.get("links") or {}, "bandwidth": v.get("__doctor_bandwidth_run") or None,
        "burnin": v.get("__doctor_burnin_result") or None, "cluster": v.get("__doctor_cluster") or None,
        "tuning": v.get("vllm_service_tuning") or None, "now": v.get("__doctor_now") or ""}}


def host_report(v):
    """The input of module_utils/report's host report, from host_report's registered reads (HOST_REPORT_NAMES)."""
    facts = v.get("ansible_facts") or {}
    reads = v.get("__host_report_reads") or {}
    return {
        "host": v.get("inventory_hostname"),
        "system": {"distribution": facts.get("distribution"), "distribution_version": facts.get("distribution_version"),
                   "distribution_major_version": facts.get("distribution_major_version"),
                   "kernel": facts.get("kernel"), "virtualization": facts.get("virtualization_type") or "unknown",
                   "pythons": list(reads.get("pythons") or [])},
        "gpu_topology": facts.get("gpu_topology"), "numa": facts.get("numa"),
        "sysctl": dict(reads.get("sysctl") or {}),
        "wanted_sysctl": v.get("system_tuning_wanted_sysctl"),
        "cmdline": reads.get("cmdline") or "",
        "wanted_cmdline": v.get("system_tuning_wanted_cmdline"),
        "wanted_cpu": {"thp": v.get("system_tuning_thp"), "governor": v.get("system_tuning_cpu_governor"),
                       "platform_profile": v.get("system_tuning_platform_profile")},
        "profile": v.get("llmhost_stack_profile"), "python": v.get("llmhost_stack_python")}
