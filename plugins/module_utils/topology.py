# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Assemble ``gpu_topology`` facts from what each source gave (pure: no I/O here).

Sources, best first: an NVML dump (module_utils.nvml), nvidia-smi's machine outputs
(module_utils.nvidia_smi) and sysfs/procfs (module_utils.sysfs). GPUs are matched across
sources by PCI bus address; each field is taken from the first source that has it, so a
field one source lacks (N/A, NotSupported) comes from the next.
"""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import pci, pci_ids
from ansible_collections.llmhost.vllm.plugins.module_utils.cpus import format_cpulist, parse_cpulist, words_to_cpus


# The fields of one GPU, in output order.
GPU_FIELDS = ("index", "name", "uuid", "pci_bus_id", "compute_capability", "memory_total_mib", "numa_node",
              "cpu_affinity", "pcie", "persistence_mode", "power_limit_w", "power_limit_min_w", "power_limit_max_w")
PCIE_FIELDS = ("gen_current", "gen_max", "width_current", "width_max")
# Fields asked of `nvidia-smi --query-gpu`.
SMI_FIELDS = ("index", "name", "uuid", "pci.bus_id", "compute_cap", "memory.total", "pcie.link.gen.current",
              "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max", "persistence_mode",
              "power.limit", "power.min_limit", "power.max_limit", "driver_version")


def _single_node(words):
    nodes = words_to_cpus(words or [])
    return nodes[0] if len(nodes) == 1 else None


def gpus_from_nvml(dump):
    """Per-GPU records from an NVML dump; also returns links, p2p and problems found."""
    gpus, links, p2p, errors = [], {}, {}, []
    devices = dump.get("devices") or []
    for dev in devices:
        if nv.err(dev.get("handle")):
            errors.append("GPU %s: NVML cannot open it (%s: %s)."
                          % (dev.get("index"), nv.err(dev["handle"]), dev["handle"].get("msg")))
            continue
        cc = nv.ok(dev.get("nvmlDeviceGetCudaComputeCapability"))
        mem = nv.ok(dev.get("nvmlDeviceGetMemoryInfo")) or {}
        numa = nv.ok(dev.get("nvmlDeviceGetNumaNodeId"))
        if not isinstance(numa, int) or numa < 0:
            numa = _single_node(nv.ok(dev.get("mem_affinity_node")))
        cpus = words_to_cpus(nv.ok(dev.get("cpu_affinity_64")) or [])
        limit_min, limit_max = nv.power_constraints_w(dev)
        pmode = nv.ok(dev.get("nvmlDeviceGetPersistenceMode"))
        gpus.append(dict(nv.device_identity(dev), **{
            "compute_capability": "%d.%d" % tuple(cc) if isinstance(cc, (list, tuple)) and len(cc) == 2 else None,
            "memory_total_mib": mem.get("total") // (1024 * 1024) if isinstance(mem.get("total"), int) else None,
            "numa_node": numa,
            "cpu_affinity": format_cpulist(cpus),
            "pcie": {
                "gen_current": nv.ok(dev.get("nvmlDeviceGetCurrPcieLinkGeneration")),
                "gen_max": nv.ok(dev.get("nvmlDeviceGetMaxPcieLinkGeneration")),
                "width_current": nv.ok(dev.get("nvmlDeviceGetCurrPcieLinkWidth")),
                "width_max": nv.ok(dev.get("nvmlDeviceGetMaxPcieLinkWidth")),
            },
            "persistence_mode": bool(pmode) if pmode is not None else None,
            "power_limit_w": nv.watts(nv.ok(dev.get("nvmlDeviceGetPowerManagementLimit"))),
            "power_limit_min_w": limit_min,
            "power_limit_max_w": limit_max,
        }))
    by_bus = dict((g["pci_bus_id"], g["index"]) for g in gpus if g["pci_bus_id"])
    nvlinks = dict((d.get("index"), _nvlink_peers(d, by_bus)) for d in devices)
    for dev in devices:
        i = dev.get("index")
        for j_text, entry in sorted((dev.get("topology") or {}).items()):
            j = int(j_text)
            if j <= i:
                continue
            key = "%d,%d" % (i, j)
            count = _nvlink_count(nvlinks.get(i), nvlinks.get(j), j, i)
            if count:
                links[key] = "NV%d" % count
            elif nv.ok(entry) in nv.TOPOLOGY_CODES and not (nvlinks.get(i) or {}).get("unresolved"):
                links[key] = nv.TOPOLOGY_CODES[nv.ok(entry)]
        for j_text, entry in sorted((dev.get("p2p_read") or {}).items()):
            j = int(j_text)
            if j > i and nv.ok(entry) in nv.P2P_CODES:
                p2p["%d,%d" % (i, j)] = nv.P2P_CODES[nv.ok(entry)]
    return gpus, links, p2p, errors


def _nvlink_peers(dev, by_bus):
    """Active NVLinks of one GPU: {"gpus": {peer index: n}, "switch": n, "unresolved": n}."""
    out = {"gpus": {}, "switch": 0, "unresolved": 0}
    entries = dev.get("nvlinks")
    if entries is None:
        # Older capture format: only link 0's state is known.
        if nv.ok(dev.get("nvlink_state_0")):
            out["unresolved"] = 1
        return out
    for link in entries:
        if not nv.ok(link.get("state")):
            continue
        if nv.ok(link.get("remote_type")) == nv.NVLINK_DEVICE_TYPE_SWITCH:
            out["switch"] += 1
            continue
        remote = nv.ok(link.get("remote_pci")) or {}
        peer = by_bus.get(pci.bus_id(remote.get("busId") or remote.get("busIdLegacy")))
        if peer is None:
            out["unresolved"] += 1
        else:
            out["gpus"][peer] = out["gpus"].get(peer, 0) + 1
    return out


def _nvlink_count(a, b, j, i):
    if not a or not b:
        return 0
    direct = a["gpus"].get(j, 0)
    if direct:
        return direct
    if a["switch"] and b["switch"]:
        return min(a["switch"], b["switch"])
    return 0


def gpus_from_smi(rows, topo):
    """Per-GPU records from `--query-gpu` rows (SMI_FIELDS) and a parsed `topo -m`."""
    gpus = []
    affinity = dict((g["index"], g) for g in (topo or {}).get("gpus", []))
    for row in rows or []:
        idx = smi.number(row.get("index"))
        t = affinity.get(idx, {})
        pmode = row.get("persistence_mode")
        gpus.append({
            "index": idx,
            "name": row.get("name"),
            "uuid": row.get("uuid"),
            "pci_bus_id": smi.bus_id(row.get("pci.bus_id")),
            "compute_capability": row.get("compute_cap"),
            "memory_total_mib": smi.number(row.get("memory.total")),
            "numa_node": _int_or_none(t.get("gpu_numa_id")) if t.get("gpu_numa_id") is not None else _int_or_none(t.get("numa_affinity")),
            "cpu_affinity": t.get("cpu_affinity"),
            "pcie": {
                "gen_current": smi.number(row.get("pcie.link.gen.current")),
                "gen_max": smi.number(row.get("pcie.link.gen.max")),
                "width_current": smi.number(row.get("pcie.link.width.current")),
                "width_max": smi.number(row.get("pcie.link.width.max")),
            },
            "persistence_mode": {"Enabled": True, "Disabled": False}.get(pmode),
            "power_limit_w": smi.number(row.get("power.limit")),
            "power_limit_min_w": smi.number(row.get("power.min_limit")),
            "power_limit_max_w": smi.number(row.get("power.max_limit")),
        })
    # `topo -m` alone (no CSV) still names every GPU with its affinity.
    if not gpus:
        for idx, t in sorted(affinity.items()):
            gpus.append({"index": idx, "cpu_affinity": t.get("cpu_affinity"),
                         "numa_node": _int_or_none(t.get("gpu_numa_id")) if t.get("gpu_numa_id") is not None else _int_or_none(t.get("numa_affinity")),
                         "pcie": {}})
    return gpus


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def gpus_from_sysfs(sys_gpus, driver):
    """Per-GPU records from sysfs PCI functions and /proc/driver/nvidia."""
    gpus = []
    for g in sys_gpus or []:
        known = pci_ids.lookup(g.get("vendor_id"), g.get("device_id"))
        proc = (driver or {}).get("gpus", {}).get(g["pci_bus_id"], {})
        gpus.append({
            "index": None,
            "name": proc.get("name") or known[0],
            "uuid": proc.get("uuid"),
            "pci_bus_id": g["pci_bus_id"],
            "compute_capability": known[1],
            "numa_node": g.get("numa_node"),
            "cpu_affinity": g.get("cpu_affinity"),
            "pcie": dict(g.get("pcie") or {}),
        })
    return gpus


def merge(sources):
    """Merge per-source GPU lists (best source first) into one record per GPU."""
    merged = []
    by_bus, by_index = {}, {}
    for gpus in sources:
        for g in gpus:
            target = None
            if g.get("pci_bus_id") and g["pci_bus_id"] in by_bus:
                target = by_bus[g["pci_bus_id"]]
            elif g.get("pci_bus_id") is None and g.get("index") in by_index:
                target = by_index[g["index"]]
            if target is None:
                target = {"pcie": {}}
                merged.append(target)
            for key in GPU_FIELDS:
                if key == "pcie":
                    for pk in PCIE_FIELDS:
                        if target["pcie"].get(pk) is None and (g.get("pcie") or {}).get(pk) is not None:
                            target["pcie"][pk] = g["pcie"][pk]
                elif target.get(key) is None and g.get(key) is not None:
                    target[key] = g[key]
            if target.get("pci_bus_id"):
                by_bus[target["pci_bus_id"]] = target
            if target.get("index") is not None:
                by_index[target["index"]] = target
    # GPUs only sysfs saw get indices after the driver's, in bus order.
    next_index = max([g["index"] for g in merged if g.get("index") is not None] or [-1]) + 1
    for g in sorted(merged, key=lambda x: x.get("pci_bus_id") or ""):
        if g.get("index") is None:
            g["index"] = next_index
            next_index += 1
    out = []
    for g in sorted(merged, key=lambda x: x["index"]):
        rec = dict((k, g.get(k)) for k in GPU_FIELDS)
        pcie = dict((k, (g.get("pcie") or {}).get(k)) for k in PCIE_FIELDS)
        wc, wm = pcie["width_current"], pcie["width_max"]
        pcie["downgraded"] = bool(wc and wm and wc < wm)
        rec["pcie"] = pcie
        out.append(rec)
    return out


def arch_list(gpus):
    """TORCH_CUDA_ARCH_LIST for the GPUs present: unique compute capabilities, ascending."""
    caps = set(g["compute_capability"] for g in gpus if g.get("compute_capability"))
    return ";".join(sorted(caps, key=lambda c: tuple(int(x) for x in c.split(".")))) or None


def arch_source(named, gpus):
    """Where the arch list's compute capabilities came from, best source first ("nvml", "nvidia-smi",
    "pci-id table": sysfs ids looked up in module_utils.pci_ids, before a driver is loaded); None without any."""
    used = []
    for g in gpus:
        if not g.get("compute_capability"):
            continue
        for label, source in named:
            if any(s.get("pci_bus_id") == g["pci_bus_id"] and s.get("compute_capability") for s in source):
                if label not in used:
                    used.append(label)
                break
    return "+".join(used) or None


def analyse(gpus, links, p2p, driver):
    """Warnings about the topology: narrow links, missing P2P, split NUMA, missing GPUs."""
    warnings = []
    for g in gpus:
        p = g["pcie"]
        if p.get("downgraded"):
            warnings.append("GPU %s (%s) PCIe link runs at x%s of its x%s: a riser, a shared slot or a BIOS lane "
                            "split halves host-to-GPU bandwidth." % (g["index"], g["pci_bus_id"], p["width_current"], p["width_max"]))
    for key, status in sorted(p2p.items()):
        if status != "OK":
            i, j = key.split(",")
            warnings.append("GPU %s and GPU %s cannot use peer-to-peer (%s): traffic between them goes through host memory; "
                            "tensor parallelism needs NCCL_P2P_DISABLE=1 and no custom all-reduce." % (i, j, status))
    nodes = set(g["numa_node"] for g in gpus if g.get("numa_node") is not None)
    if len(nodes) > 1:
        warnings.append("GPUs sit on different NUMA nodes (%s): bind each vLLM process to its GPU's node."
                        % ", ".join("GPU%s=node%s" % (g["index"], g["numa_node"]) for g in gpus))
    for g in gpus:
        if g.get("cpu_affinity") and len(parse_cpulist(g["cpu_affinity"])) == 0:
            warnings.append("GPU %s: CPU affinity %r is unreadable." % (g["index"], g["cpu_affinity"]))
    return warnings


def build(nvml_dump=None, smi_rows=None, smi_topo=None, smi_p2p=None, smi_errors=None, sys_gpus=None, driver=None,
          notes=None):
    """The whole ``gpu_topology`` fact from whatever each source gave (any may be None)."""
    warnings = list(notes or [])
    errors = []
    sources, named = [], []
    source = "none"
    links, p2p = {}, {}
    cuda = None
    driver_version = None
    loaded = bool((driver or {}).get("loaded"))
    if nvml_dump and not nv.err(nvml_dump.get("init")) and nvml_dump.get("devices") is not None:
        gpus, nlinks, np2p, nerr = gpus_from_nvml(nvml_dump)
        errors.extend(nerr)
        if gpus:
            sources.append(gpus)
            named.append(("nvml", gpus))
            source = "nvml"
        links.update(nlinks)
        p2p.update(np2p)
        driver_version = nv.ok(nvml_dump.get("driver"))
        cuda_int = nv.ok(nvml_dump.get("cuda_driver"))
        if isinstance(cuda_int, int) and cuda_int > 0:
            cuda = "%d.%d" % (cuda_int // 1000, (cuda_int % 1000) // 10)
        loaded = True
    elif nvml_dump and nv.err(nvml_dump.get("init")):
        init = nvml_dump["init"]
        if init["err"] in ("NVMLError_LibRmVersionMismatch",):
            errors.append("NVIDIA driver/library version mismatch: the loaded kernel module and the NVML library differ "
                          "(a driver upgrade without reboot).")
        else:
            warnings.append("NVML did not initialise (%s: %s)." % (init["err"], init.get("msg")))
    smi_gpus = gpus_from_smi(smi_rows, smi_topo)
    if smi_gpus:
        sources.append(smi_gpus)
        named.append(("nvidia-smi", smi_gpus))
        if source == "none":
            source = "nvidia-smi"
        if smi_rows and not driver_version:
            driver_version = smi_rows[0].get("driver_version")
        loaded = loaded or bool(smi_rows)
    for key, code in ((smi_topo or {}).get("links") or {}).items():
        # `topo -m` is authoritative for links: NVML's common ancestor hides NVLink.
        links[key] = code
    for key, code in (smi_p2p or {}).items():
        p2p.setdefault(key, code)
    for e in smi_errors or []:
        errors.append(e["message"])
    for row in smi_rows or []:
        bad = sorted(k for k, v in row.items() if isinstance(v, str) and v.strip().upper() == "ERR!")
        if bad:
            errors.append("GPU %s (%s) reports ERR! for %s: the GPU is failing or has fallen off the bus; check the "
                          "kernel log (Xid errors) and reboot." % (row.get("index"), row.get("pci.bus_id"), ", ".join(bad)))
    sys_list = gpus_from_sysfs(sys_gpus, driver)
    if sys_list:
        sources.append(sys_list)
        named.append(("pci-id table", sys_list))
        if source == "none":
            source = "sysfs"
    driver_version = driver_version or (driver or {}).get("version")
    gpus = merge(sources)
    # A GPU sysfs sees but the driver does not has failed (fell off the bus, failed init).
    if source in ("nvml", "nvidia-smi"):
        seen = set(g["pci_bus_id"] for s in sources[:-1] for g in s if g.get("pci_bus_id")) if sys_list else set()
        for g in sys_list:
            if seen and g["pci_bus_id"] not in seen:
                errors.append("GPU at %s is on the PCI bus but the driver does not show it: it fell off the bus or "
                              "failed to initialise; see the kernel log." % g["pci_bus_id"])
    if (driver or {}).get("version") and driver_version and (driver or {}).get("version") != driver_version:
        errors.append("NVIDIA kernel module %s is loaded but the user-space driver is %s: reboot (or reload the module) "
                      "after the driver upgrade." % (driver["version"], driver_version))
    if not gpus:
        warnings.append("no NVIDIA GPU found (no NVIDIA display/3D controller on the PCI bus).")
    warnings.extend(analyse(gpus, links, p2p, driver))
    return {
        "source": source,
        "driver": {"version": driver_version, "cuda_version": cuda, "loaded": loaded},
        "gpus": gpus,
        "links": links,
        "p2p": p2p,
        "arch_list": arch_list(gpus),
        "arch_list_source": arch_source(named, gpus),
        "warnings": warnings,
        "errors": errors,
    }
