# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA, THP and CPU frequency policy as sysfs/procfs show them (``root`` as in sysfs.py)."""

from __future__ import annotations

import os
import re

from ansible_collections.llmhost.vllm.plugins.module_utils.cpus import format_cpulist, parse_cpulist
from ansible_collections.llmhost.vllm.plugins.module_utils.sysfs import path, read, read_int


def bracketed(text):
    """``"always [madvise] never"`` -> ("madvise", ["always", "madvise", "never"])."""
    if not text:
        return None, []
    choices = [c.strip("[]") for c in text.split()]
    m = re.search(r"\[([^\]]+)\]", text)
    return (m.group(1) if m else None), choices


def _meminfo_mib(text):
    m = re.search(r"MemTotal:\s*(\d+)\s*kB", text or "")
    return int(m.group(1)) // 1024 if m else None


def nodes(root="/"):
    """NUMA nodes: id, cpus (cpulist), memory_mib, distances (list, by node id)."""
    base = path(root, "/sys/devices/system/node")
    out = []
    if not os.path.isdir(base):
        return out
    ids = sorted(int(d[4:]) for d in os.listdir(base) if re.match(r"^node\d+\Z", d))
    for n in ids:
        cpus = read(root, "/sys/devices/system/node/node%d/cpulist" % n)
        dist = read(root, "/sys/devices/system/node/node%d/distance" % n)
        out.append({
            "id": n,
            "cpus": format_cpulist(parse_cpulist(cpus)) if cpus else None,
            "memory_mib": _meminfo_mib(read(root, "/sys/devices/system/node/node%d/meminfo" % n)),
            "distances": [int(x) for x in dist.split()] if dist else [],
        })
    return out


def governors(root="/"):
    """CPU frequency governors in use (name -> cpulist) and the union of those available."""
    base = path(root, "/sys/devices/system/cpu")
    in_use, available, driver = {}, set(), None
    if not os.path.isdir(base):
        return in_use, [], driver
    for d in os.listdir(base):
        m = re.match(r"^cpu(\d+)\Z", d)
        if not m:
            continue
        cur = read(root, "/sys/devices/system/cpu", d, "cpufreq/scaling_governor")
        if cur:
            in_use.setdefault(cur, []).append(int(m.group(1)))
        avail = read(root, "/sys/devices/system/cpu", d, "cpufreq/scaling_available_governors")
        if avail:
            available.update(avail.split())
        driver = driver or read(root, "/sys/devices/system/cpu", d, "cpufreq/scaling_driver")
    return dict((g, format_cpulist(c)) for g, c in in_use.items()), sorted(available), driver


def numa_facts(root="/"):
    """The ``numa`` fact."""
    warnings = []
    node_list = nodes(root)
    if not node_list:
        warnings.append("no /sys/devices/system/node: the kernel has no NUMA support compiled in, or sysfs is not mounted.")
    thp_mode, thp_choices = bracketed(read(root, "/sys/kernel/mm/transparent_hugepage/enabled"))
    defrag, defrag_choices = bracketed(read(root, "/sys/kernel/mm/transparent_hugepage/defrag"))
    in_use, available, driver = governors(root)
    if not in_use:
        warnings.append("no cpufreq governors exposed (a VM, or the firmware controls CPU frequency).")
    profile = read(root, "/sys/firmware/acpi/platform_profile")
    choices = read(root, "/sys/firmware/acpi/platform_profile_choices")
    online = read(root, "/sys/devices/system/cpu/online")
    return {
        "nodes": node_list,
        "node_count": len(node_list),
        "online_cpus": format_cpulist(parse_cpulist(online)) if online else None,
        "thp": {"enabled": thp_mode, "enabled_choices": thp_choices, "defrag": defrag, "defrag_choices": defrag_choices},
        "numa_balancing": read_int(root, "/proc/sys/kernel/numa_balancing"),
        "cpufreq": {"governors": in_use, "available": available, "driver": driver},
        "platform_profile": {"current": profile, "choices": choices.split() if choices else []} if profile is not None else None,
        "warnings": warnings,
    }


def parse_numactl(text):
    """``numactl -H`` -> [{"id", "cpus", "memory_mib", "distances"}] (memoryless and CPU-less nodes kept)."""
    out = {}
    dist_rows = {}
    lines = (text or "").splitlines()
    in_dist = False
    for line in lines:
        m = re.match(r"^\s*node (\d+) cpus:\s*(.*)\Z", line)
        if m:
            cpus = [int(c) for c in m.group(2).split() if c.isdigit()]
            out.setdefault(int(m.group(1)), {})["cpus"] = format_cpulist(cpus)
            continue
        m = re.match(r"^\s*node (\d+) size:\s*(\d+)\s*MB", line)
        if m:
            out.setdefault(int(m.group(1)), {})["memory_mib"] = int(m.group(2))
            continue
        if re.match(r"^\s*node distances:", line):
            in_dist = True
            continue
        if in_dist:
            m = re.match(r"^\s*(\d+):\s*(.*)\Z", line)
            if m:
                dist_rows[int(m.group(1))] = [int(x) for x in m.group(2).split()]
    return [{"id": n, "cpus": out[n].get("cpus"), "memory_mib": out[n].get("memory_mib"), "distances": dist_rows.get(n, [])}
            for n in sorted(out)]


def balancing(wish, node_count):
    """kernel.numa_balancing for this host and why: ``wish`` is system_tuning_numa_balancing (true, false, or auto for
    the host to decide). Returns (value, reason), value None when the kernel's own is left alone."""
    if isinstance(wish, bool):
        return int(wish), "forced %s by system_tuning_numa_balancing" % ("on" if wish else "off")
    if int(node_count) > 1:
        return 0, ("off: %d NUMA nodes, and automatic page migration stalls GPU-feeding threads" % int(node_count))
    return None, "left alone: one NUMA node, so balancing has nothing to move"
