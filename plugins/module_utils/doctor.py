# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks on a running host: pure functions over what playbooks/doctor.yml read there (command
output and file text), each giving checks in the host report's shape
(``{"area", "item", "want", "have", "status", "fix"}``, plugins/module_utils/report.py)."""

from __future__ import annotations

import re
from datetime import datetime

from ansible_collections.llmhost.vllm.plugins.module_utils.cpus import parse_cpulist
from ansible_collections.llmhost.vllm.plugins.module_utils.doctor_load import bandwidth_checks, burnin_checks, script_result
from ansible_collections.llmhost.vllm.plugins.module_utils.gpu_metrics import count_xids
from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster
from ansible_collections.llmhost.vllm.plugins.module_utils.pci import bus_id
from ansible_collections.llmhost.vllm.plugins.module_utils.report import FAIL, INFO, PASS, WARN, check, check_table, summary

# /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Tue Oct 31 ..."
# (the open modules say "NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build ...")
_KERNEL_MODULE_RE = re.compile(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")
# vLLM's start-up log: "GPU KV cache size: 801,136 tokens" (V1 engine, 0.8 on); "# GPU blocks: 2389, # CPU blocks:
# 512" (V0, such as the seed profile's 0.6.3), blocks of --block-size tokens (16 unless set)
_KV_TOKENS_RE = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_KV_BLOCKS_RE = re.compile(r"# GPU blocks: (\d+)")
# What the doctor can say about a unit that stopped: systemd's Result values other than success.
_UNIT_RESULTS = {"exit-code": "exited with an error", "signal": "killed by a signal", "core-dump": "dumped core",
                 "oom-kill": "killed for memory (OOM)", "timeout": "timed out", "start-limit-hit": "hit its start limit",
                 "watchdog": "missed its watchdog"}


def kernel_module_version(proc_version_text):
    """The loaded kernel module's version from /proc/driver/nvidia/version, else None."""
    match = _KERNEL_MODULE_RE.search(proc_version_text or "")
    return match.group(1) if match else None


def driver_checks(proc_version_text, library_version, library_error=""):
    """The kernel module and the user-space library (NVML, as nvidia-smi reports it) on one version."""
    module = kernel_module_version(proc_version_text)
    if module is None:
        return [check("driver", "kernel module", "loaded", "not loaded", FAIL,
                      "load it (modprobe nvidia) or reinstall the driver (site.yml, tag nvidia_driver), then reboot")]
    if "mismatch" in (library_error or "").lower() or (library_version and library_version != module):
        return [check("driver", "kernel module and library", module, library_version or library_error, FAIL,
                      "the driver was upgraded under a loaded module: reboot (or reload the nvidia modules) so both "
                      "are the same version; site.yml holds the driver packages against this")]
    if not library_version:
        return [check("driver", "kernel module and library", module, library_error or "library not answering", FAIL,
                      "nvidia-smi cannot read the GPUs: see its message")]
    return [check("driver", "kernel module and library", module, library_version, PASS)]


def xid_checks(kernel_log_lines, gpus):
    """Xid lines since boot, per GPU (by PCI bus id), from the kernel log."""
    counts = count_xids(kernel_log_lines or [])
    names = {bus_id(g.get("pci_bus_id")): g.get("index") for g in gpus or []}
    out = []
    for (bus, xid), n in sorted(counts.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        gpu = names.get(bus, bus)
        status = WARN if xid in (13, 31, 43, 45) else FAIL  # application faults vs hardware/driver ones
        out.append(check("xid", "GPU %s Xid %d" % (gpu, xid), "none since boot", "%d line(s)" % n, status,
                         "see NVIDIA's Xid catalogue for Xid %d; 79 (fallen off the bus), 48/63/64/94/95 (memory) and "
                         "119/120 (GSP) need the card or its slot checked" % xid))
    if not out:
        out.append(check("xid", "Xid lines since boot", "none", "none", PASS))
    return out


def kv_cache_checks(replica, startup_log, plan, block_size=16):
    """The KV cache vLLM found at the replica's start against the serving plan's estimate, by which it chose
    max-num-seqs; how many full-length (max-model-len) sequences fit is said beside it."""
    tokens = _kv_tokens(startup_log, block_size)
    estimate = int((plan.get("estimates") or {}).get("kv_tokens_per_replica") or 0)
    full, seqs = int(plan.get("max_model_len") or 1), int(plan.get("max_num_seqs") or 0)
    item, want = "replica %s KV cache" % replica, ">= %d tokens (the plan's estimate, for %d sequences)" % (estimate, seqs)
    if tokens is None:
        return [check("kv", item, want, "not in its log since its start", INFO,
                      "journalctl -u <unit> from its last start holds vLLM's KV cache line")]
    have = "%d tokens (%.1f sequences of the full %d)" % (tokens, tokens / float(full), full)
    if tokens < 0.9 * estimate:
        return [check("kv", item, want, have, WARN,
                      "vLLM found less room than the plan counted on, so fewer of the max-num-seqs sequences fit and "
                      "requests queue or are preempted: lower vllm_service_max_num_seqs, or raise "
                      "vllm_service_gpu_memory_utilization")]
    return [check("kv", item, want, have, PASS)]


def _kv_tokens(startup_log, block_size):
    """The last start's KV cache in tokens (a log may hold several starts), else None."""
    matches = _KV_TOKENS_RE.findall(startup_log or "")
    if matches:
        return int(matches[-1].replace(",", ""))
    blocks = _KV_BLOCKS_RE.findall(startup_log or "")
    return int(blocks[-1]) * int(block_size) if blocks else None


def unit_checks(units):
    """Each replica's unit as `systemctl show -p Id,ActiveState,Result,NRestarts,ExecMainStatus` printed it."""
    out = []
    for props in units:
        restarts = int(props.get("NRestarts") or 0)
        result = props.get("Result") or "success"
        state = props.get("ActiveState")
        status = FAIL if state != "active" else WARN if restarts or result != "success" else PASS
        have = "%s, %d restart(s) by systemd, last result %s%s" % (
            state, restarts, result, (" (exit status %s)" % props["ExecMainStatus"])
            if result == "exit-code" and props.get("ExecMainStatus") else "")
        out.append(check("service", props.get("Id"), "active, 0 restarts", have, status,
                         "" if status == PASS else "journalctl -u %s: the replica %s" % (
                             props.get("Id"), _UNIT_RESULTS.get(result, "restarted"))))
    return out


def _status_field(status_text, name):
    for line in (status_text or "").splitlines():
        key, _sep, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return ""


def numa_checks(replica, status_text, gpus, nodes):
    """A replica's process on its GPU's NUMA node: the CPUs it may run on (/proc/<MainPID>/status
    Cpus_allowed_list) against the node's. replica: the plan's (name, gpus, numa_node); gpus: gpu_facts';
    nodes: numa_facts' (id, cpus)."""
    item = "replica %s process" % replica.get("name")
    by_index = {int(g.get("index", -1)): g for g in gpus or []}
    gpu_nodes = {by_index.get(i, {}).get("numa_node") for i in replica.get("gpus") or []}
    cpu_nodes = [n for n in nodes or [] if n.get("cpus")]
    if len(cpu_nodes) < 2:
        return [check("numa", item, "on its GPU's node", "one NUMA node with CPUs", INFO, "")]
    if len(gpu_nodes) != 1 or None in gpu_nodes or -1 in gpu_nodes:
        return [check("numa", item, "on its GPU's node", "its GPUs' node is not one known node (%s)"
                      % sorted(str(n) for n in gpu_nodes), INFO, "")]
    allowed = _status_field(status_text, "Cpus_allowed_list")
    if not allowed:
        return [check("numa", item, "on its GPU's node", "not running", INFO, "")]
    node = gpu_nodes.pop()
    node_cpus = next((n["cpus"] for n in cpu_nodes if int(n["id"]) == int(node)), "")
    inside = set(parse_cpulist(allowed)) <= set(parse_cpulist(node_cpus))
    have = "may run on CPUs %s; its GPU is on node %s (CPUs %s)" % (allowed, node, node_cpus)
    if inside:
        return [check("numa", item, "CPUs of node %s" % node, have, PASS, "")]
    if replica.get("numa_node") is None:
        return [check("numa", item, "CPUs of node %s" % node, have, WARN,
                      "the serving plan did not bind it (vllm_service_numa, decision numa): with vllm_service_numa=auto "
                      "and GPUs on several nodes, each replica is bound to its GPU's node")]
    return [check("numa", item, "CPUs of node %s" % node, have, FAIL,
                  "the unit's NUMA drop-in did not take effect: systemctl cat %s; then restart the replica"
                  % replica.get("unit", "the replica's unit"))]


def disk_checks(df_lines, min_free_gib):
    """`df -B1 --output=target,avail PATH...` lines: each volume's free space against the floor."""
    out, seen = [], set()
    for line in df_lines or []:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit() or fields[0] in seen:
            continue
        seen.add(fields[0])
        free = int(fields[1]) / 1073741824.0
        out.append(check("disk", "free space on %s" % fields[0], ">= %s GiB" % min_free_gib, "%.1f GiB" % free,
                         PASS if free >= float(min_free_gib) else WARN,
                         "" if free >= float(min_free_gib) else "free space there: a model swap or the compile caches "
                         "need room"))
    return out


def hold_checks(selections, blacklists):
    """The packages each of the collection's unattended-upgrades blacklists ({file: text}) says it holds ("// Held
    with dpkg: ...") must still be held (`dpkg --get-selections` lines), and covered by one of its entries: an
    `apt-mark unhold` or a reinstall undoes a hold, an edit the blacklist."""
    held = {line.split()[0].split(":")[0] for line in (selections or []) if line.split()[-1:] == ["hold"]}
    out = []
    for path, text in sorted((blacklists or {}).items()):
        entries = re.findall(r'^\s*"([^"]+)";', text or "", re.M)
        recorded = re.findall(r"^// Held with dpkg:(.*)$", text or "", re.M)
        for name in recorded[-1].split() if recorded else []:
            ok_hold, ok_list = name in held, any(_covers(e, name) for e in entries)
            out.append(check("packages", "%s (%s)" % (name, path), "held, kept from unattended-upgrades",
                             "%s, %s" % ("held" if ok_hold else "not held", "kept" if ok_list else "not in the blacklist"),
                             PASS if ok_hold and ok_list else FAIL, "" if ok_hold and ok_list else
                             "re-run site.yml with the tag of the role that installs %s: it holds and blacklists it" % name))
    if not out:
        out.append(check("packages", "packages the collection holds", "", "none recorded on this host", INFO))
    return out


def _covers(entry, name):
    """Whether a Package-Blacklist entry covers the package, as unattended-upgrades reads it (a regular expression
    matched at the name's start)."""
    try:
        return re.match(entry, name) is not None
    except re.error:
        return False


# Clock event reasons: what each says about a busy GPU (the rest are settings or idleness).
_REASON_STATUS = {"hw_slowdown": FAIL, "hw_thermal_slowdown": FAIL, "hw_power_brake_slowdown": FAIL,
                  "sw_thermal_slowdown": WARN, "sw_power_cap": INFO}


def clock_checks(clock_gpus):
    """Clock event reasons active now, per GPU (gpu_clock_info's gpus)."""
    out = []
    for g in clock_gpus or []:
        active = ((g.get("event_reasons") or {}).get("active")) or []
        worst = _worst([_REASON_STATUS.get(r, PASS) for r in active] or [PASS])
        out.append(check("clocks", "GPU %s clock event reasons" % g.get("index"), "none that slow it down",
                         ", ".join(active) or "none", worst,
                         "" if worst in (PASS, INFO) else "hardware or thermal slowdown: check cooling, the power "
                         "supply and its cables (nvidia-smi -q -d PERFORMANCE)"))
    return out


def pcie_checks(topo_gpus, clock_gpus):
    """Each GPU's PCIe generation against its maximum while it is busy (performance state P0 and no gpu_idle clock
    event reason: an H200 stays in P0 when idle): idle GPUs lower it to save power. (Fewer lanes than the maximum is
    the host report's check.)"""
    busy = {g.get("index"): g.get("pstate") == "P0"
            and "gpu_idle" not in ((g.get("event_reasons") or {}).get("active") or []) for g in clock_gpus or []}
    out = []
    for g in topo_gpus or []:
        p = g.get("pcie") or {}
        if not p.get("gen_max"):
            continue
        slow, now = (p.get("gen_current") or 0) < p["gen_max"], busy.get(g.get("index"))
        status = PASS if not slow else WARN if now else INFO
        out.append(check("pcie", "GPU %s link generation" % g.get("index"), "gen%s while busy" % p["gen_max"],
                         "gen%s (%s)" % (p.get("gen_current"), "busy" if now else "idle" if now is False else "state unknown"),
                         status, {PASS: "", WARN: "reseat the card, check its slot and riser, and the BIOS's PCIe "
                                  "generation setting", INFO: "idle GPUs lower it; run the doctor again under load"}[status]))
    return out


def gateway_checks(gateway):
    """The API through the gateway on this host ({"url", "status"}), when there is one."""
    if not gateway:
        return []
    ok = gateway.get("status") == 200
    return [check("api", "the gateway's /health (%s)" % gateway.get("url"), "200", gateway.get("status") or
                  gateway.get("error") or "no answer", PASS if ok else FAIL,
                  "" if ok else "no replica behind the gateway answers, or nginx is down: systemctl status nginx, "
                  "and the replicas' units")]


def cluster_checks(cluster):
    """A member of a Ray cluster ({"part", "unit", "status", "versions"}): its node running; on the head, every
    member in `ray status`, and one Ray and one vLLM on every member (nodes of another Ray do not join; ranks of
    another vLLM would not agree)."""
    if not cluster or cluster.get("part") not in ("head", "worker"):
        return []
    unit = unit_properties(cluster.get("unit"))
    up = unit.get("ActiveState") == "active"
    out = [check("ray", "this host's Ray node (%s, %s)" % (cluster["part"], unit.get("Id") or "?"), "active",
                 "%s (%s restarts)" % (unit.get("ActiveState") or "not read", unit.get("NRestarts", "?")),
                 PASS if up else FAIL, "" if up else "systemctl status and journalctl -u the node's unit; a worker "
                 "that cannot reach the head: the interface, and the head's nftables table inet llmhost_ray")]
    if cluster["part"] == "head":
        out += _cluster_members(cluster)
    return out


def _cluster_members(cluster):
    versions = cluster.get("versions") or {}
    status = ray_cluster.parse_status(cluster.get("status") or "")
    whole = status["nodes"] == len(versions)
    seen = set(v for v in versions.values() if v)
    same = len(seen) == 1 and all(versions.values())
    return [
        check("ray", "the cluster's nodes (ray status on the head)", "%d node(s)" % len(versions),
              "%d node(s), %g GPU(s) (%g in use)" % (status["nodes"], status["gpus"], status["gpus_used"]),
              PASS if whole else FAIL, "" if whole else "a member's node is down or has not joined: run the doctor's "
              "node check on each member, then site.yml --tags ray_cluster"),
        check("ray", "Ray and vLLM on every member", "one version of each",
              "; ".join("%s: %s" % (name, versions[name] or "not read") for name in sorted(versions)),
              PASS if same else FAIL, "" if same else "site.yml --tags vllm_install on every member: each gets the "
              "stack profile's lock, with its Ray"),
    ]


def tuning_checks(tuning, now):
    """The serving plan's adopted tuning (vllm_service_tuning: its state, candidate, reason, when adopted) and its
    age at ``now`` (both UTC, ISO 8601)."""
    state = (tuning or {}).get("state")
    if state == "adopted":
        days = _days_between(tuning.get("adopted"), now)
        age = "%s, adopted %s" % (tuning.get("candidate"), "%d day(s) ago" % days if days is not None else "at ?")
        old = days is not None and days > 90
        return [check("tuning", "the adopted tuning (tuned.json)", "measured on this box",
                      age, INFO if old else PASS,
                      "measured over 90 days ago: the workload, the driver or vLLM may have changed since; run "
                      "playbooks/tune.yml again" if old else "")]
    if state == "set_aside":
        return [check("tuning", "the adopted tuning (tuned.json)", "one the plan can use", "set aside: %s"
                      % tuning.get("reason", "?"), WARN, "run playbooks/tune.yml again, or forget it with "
                      "playbooks/tune.yml -e tune_reset=true")]
    if state == "none":
        return [check("tuning", "the adopted tuning (tuned.json)", "optional", "none: the planner's own choice", INFO,
                      "playbooks/tune.yml measures the planner's choice and its neighbours on this box and adopts "
                      "the best under your SLO")]
    return []


def _days_between(start, end):
    try:
        a, b = (datetime.strptime(str(t), "%Y-%m-%dT%H:%M:%SZ") for t in (start, end))
    except ValueError:
        return None
    return max(0, (b - a).days)


def unit_properties(text):
    """`systemctl show -p ...` output as a dict."""
    return dict(line.split("=", 1) for line in (text or "").splitlines() if "=" in line)


def not_serving_yet():
    """The check a host gets before vllm_service has run: no model known, so no plan and no replica to read."""
    return check("service", "vLLM replicas", "the serving plan's", "none yet: no model is known on this host", INFO,
                 "run site.yml (the model role fetches the model; vllm_service plans and starts the replicas, and the "
                 "gateway fronts them), or set vllm_service_model_path; the checks above need no service")


def build(host, evidence):
    """Every check from what the doctor read (see playbooks/doctor.yml), after the host report's own checks."""
    ev, plan = evidence, evidence.get("plan") or {}
    replicas = ev.get("replicas") or []
    checks = list(ev.get("host_checks") or [])
    checks += driver_checks(ev.get("proc_version"), ev.get("library_version"), ev.get("library_error"))
    checks += xid_checks(ev.get("kernel_log"), ev.get("gpus")) if ev.get("kernel_log_read", True) else [
        check("xid", "Xid lines since boot", "none", "the kernel log could not be read", INFO,
              "a container's journal does not hold the kernel's messages: run the doctor on the host itself, as root")]
    checks += pcie_checks(ev.get("gpus"), ev.get("clock_gpus")) + clock_checks(ev.get("clock_gpus"))
    checks += unit_checks([unit_properties(r.get("unit")) for r in replicas]) if plan else [not_serving_yet()]
    for r in replicas:
        checks += kv_cache_checks(r.get("index"), r.get("log"), plan)
    planned = plan.get("replicas") or []
    for k, r in enumerate(replicas):
        if k < len(planned):
            checks += numa_checks(dict(planned[k], unit=unit_properties(r.get("unit")).get("Id")), r.get("process"),
                                  ev.get("gpus"), ev.get("numa_nodes"))
    checks += hold_checks(ev.get("selections"), ev.get("blacklists"))
    checks += disk_checks(ev.get("df"), ev.get("min_free_gib", 10)) + gateway_checks(ev.get("gateway"))
    checks += bandwidth_checks(script_result(ev.get("bandwidth")), ev.get("gpus"), ev.get("links"))
    checks += burnin_checks(ev.get("burnin"), ev.get("gpus")) + cluster_checks(ev.get("cluster"))
    checks += tuning_checks(ev.get("tuning"), ev.get("now")) if plan else []
    return report(host, checks)


def _worst(statuses):
    order = [PASS, INFO, WARN, FAIL]
    return max(statuses, key=order.index)


def report(host, checks):
    """The doctor's report: its checks, their counts, and Markdown."""
    lines = ["# llmhost.vllm doctor: %s" % host, ""] + check_table(checks)
    return {"host": host, "checks": checks, "summary": summary(checks), "markdown": "\n".join(lines) + "\n"}
