# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host report: facts read off a host, set against what the collection wants.

Pure functions (controller side, through the ``host_report`` filter). Each check is
``{"area", "item", "want", "have", "status" (PASS/WARN/FAIL/INFO), "fix"}``.
"""

from __future__ import annotations

PASS, WARN, FAIL, INFO = "PASS", "WARN", "FAIL", "INFO"


def check(area, item, want, have, status, fix=""):
    return {"area": area, "item": item, "want": want, "have": have, "status": status, "fix": fix}


def gpu_checks(topo):
    out = []
    gpus = topo.get("gpus") or []
    drv = topo.get("driver") or {}
    if not gpus:
        out.append(check("gpu", "NVIDIA GPUs", ">= 1", "none found", FAIL,
                         "vLLM needs an NVIDIA GPU; this host can still be tuned, but not serve"))
    else:
        out.append(check("gpu", "NVIDIA GPUs", ">= 1", ", ".join("%s %s" % (g["index"], g.get("name") or "?") for g in gpus),
                         PASS))
        out.append(check("gpu", "driver loaded", "yes", drv.get("version") or "no",
                         PASS if drv.get("loaded") else FAIL, "" if drv.get("loaded") else
                         "install the NVIDIA driver (site.yml, tag nvidia_driver) and reboot"))
        out.append(check("gpu", "facts source", "nvml", topo.get("source"), PASS if topo.get("source") == "nvml" else INFO,
                         "" if topo.get("source") == "nvml" else "install nvidia-ml-py for the target's Python for full facts"))
        for g in gpus:
            p = g.get("pcie") or {}
            if p.get("width_max"):
                out.append(check("pcie", "GPU %s link width" % g["index"], "x%s" % p["width_max"], "x%s" % p.get("width_current"),
                                 WARN if p.get("downgraded") else PASS,
                                 "reseat the card or move it to a full-width slot (check BIOS lane bifurcation)" if p.get("downgraded") else ""))
    for key, status in sorted((topo.get("p2p") or {}).items()):
        i, j = key.split(",")
        out.append(check("p2p", "GPU %s <-> GPU %s peer-to-peer" % (i, j), "OK", status, PASS if status == "OK" else WARN,
                         "" if status == "OK" else "the serving plan sets NCCL_P2P_DISABLE=1 and --disable-custom-all-reduce "
                         "for tensor parallelism, or serves one replica per GPU"))
    for key, code in sorted((topo.get("links") or {}).items()):
        i, j = key.split(",")
        out.append(check("links", "GPU %s <-> GPU %s link" % (i, j), "", code, INFO))
    nodes = sorted(set(g["numa_node"] for g in gpus if g.get("numa_node") is not None))
    if len(nodes) > 1:
        out.append(check("numa", "GPU NUMA nodes", "bind per GPU", ", ".join(str(n) for n in nodes), WARN,
                         "the serving plan binds each vLLM process to its GPU's node"))
    for e in topo.get("errors") or []:
        out.append(check("gpu", "problem", "none", e, FAIL, "see the message; most need a reboot or a driver reinstall"))
    return out


def tuning_checks(numa, live_sysctl, wanted_sysctl, cmdline, wanted_cmdline, wanted_cpu=None):
    out = []
    for key in sorted(wanted_sysctl or {}):
        want = " ".join(str(wanted_sysctl[key]).split())
        have = (live_sysctl or {}).get(key)
        have = " ".join(have.split()) if isinstance(have, str) else have
        out.append(check("sysctl", key, want, have if have is not None else "absent", PASS if have == want else WARN,
                         "" if have == want else "site.yml --tags system_tuning"))
    params = (cmdline or "").split()
    for p in wanted_cmdline or []:
        ok = p in params
        out.append(check("cmdline", p, "on the kernel command line", "present" if ok else "absent", PASS if ok else WARN,
                         "" if ok else "site.yml --tags system_tuning, then reboot (system_tuning_reboot_ok=true lets it reboot)"))
    wanted_cpu = wanted_cpu or {}
    thp = ((numa or {}).get("thp") or {}).get("enabled")
    want_thp = wanted_cpu.get("thp") or next(
        (p.split("=", 1)[1] for p in (wanted_cmdline or []) if p.startswith("transparent_hugepage=")), None)
    if want_thp:
        out.append(check("thp", "transparent huge pages", want_thp, thp or "unknown", PASS if thp == want_thp else WARN,
                         "" if thp == want_thp else "site.yml --tags system_tuning (sets it live, no reboot needed; "
                         "the boot parameter keeps it across reboots)"))
    govs = ((numa or {}).get("cpufreq") or {}).get("governors") or {}
    want_gov = wanted_cpu.get("governor")
    have_gov = ", ".join("%s (%s)" % kv for kv in sorted(govs.items())) or "not exposed (VM or firmware-controlled)"
    if want_gov and govs:
        ok = list(govs) == [want_gov]
        out.append(check("cpu", "frequency governor", want_gov, have_gov, PASS if ok else WARN,
                         "" if ok else "site.yml --tags system_tuning (persisted by llmhost-cpu-policy.service)"))
    else:
        out.append(check("cpu", "frequency governor", want_gov or "left alone", have_gov, INFO))
    want_prof = wanted_cpu.get("platform_profile")
    prof = (numa or {}).get("platform_profile")
    if want_prof:
        if prof is None:
            out.append(check("cpu", "ACPI platform profile", want_prof, "not offered by this firmware", INFO))
        else:
            ok = prof.get("current") == want_prof
            out.append(check("cpu", "ACPI platform profile", want_prof, prof.get("current"), PASS if ok else WARN,
                             "" if ok else "site.yml --tags system_tuning"))
    if (numa or {}).get("node_count", 0) > 1:
        nb = (numa or {}).get("numa_balancing")
        out.append(check("numa", "kernel.numa_balancing", "0", nb, PASS if nb == 0 else WARN,
                         "" if nb == 0 else "site.yml --tags system_tuning"))
    return out


def _ver(text):
    try:
        return tuple(int(x) for x in str(text).split("."))
    except (TypeError, ValueError):
        return None


def _os_supported(profile, system):
    supported = (profile.get("os") or {}).get(system.get("distribution")) or []
    # Ubuntu releases are named 22.04; Debian's point releases (12.15) count as their major (12).
    return system.get("distribution_version") in supported or system.get("distribution_major_version") in supported


def _python_fix(profile, system, python):
    """What to do when the profile's Python is missing: its package where the profile supports this
    OS; otherwise no package name (it may not exist here, like python3.10-venv on Debian 12)."""
    if _os_supported(profile, system):
        return "install %s" % (python.get("package") or "it")
    return "profile %s has no Python for %s %s; use a profile that supports this OS%s" % (
        profile.get("name"), system.get("distribution"), system.get("distribution_version"),
        "" if profile.get("name") == "current" else " (llmhost_stack=current)")


def profile_checks(profile, system, topo, python=None):
    """The host against the selected stack profile. Checks with ``blocking`` set make site.yml stop."""
    if not profile:
        return []
    out = []
    name = profile.get("name")
    dist, version = system.get("distribution"), system.get("distribution_version")
    ok = _os_supported(profile, system)
    out.append(dict(check("profile", "OS release", "; ".join("%s %s" % (d, "/".join(v)) for d, v in (profile.get("os") or {}).items()),
                          "%s %s" % (dist, version), PASS if ok else FAIL,
                          "" if ok else "profile %s does not support this OS: use one it lists%s" % (
                              name, "" if name == "current" else ", or llmhost_stack=current")),
                    blocking=not ok))
    kernel = ((profile.get("kernel") or {}).get(dist) or {}).get("release")
    if kernel:
        ok = system.get("kernel") == kernel
        out.append(check("profile", "running kernel", kernel, system.get("kernel"), PASS if ok else WARN,
                         "" if ok else "site.yml --tags kernel, then reboot (kernel_reboot_ok=true lets it reboot)"))
    drv = profile.get("nvidia_driver") or {}
    have = (topo.get("driver") or {})
    if drv.get("version"):
        if have.get("version"):
            ok = have["version"] == drv["version"]
            out.append(check("profile", "NVIDIA driver", drv["version"], have["version"], PASS if ok else WARN,
                             "" if ok else "site.yml --tags nvidia_driver (nvidia_driver_replace=true to replace an installed one)"))
        else:
            out.append(check("profile", "NVIDIA driver", drv["version"], "not loaded", WARN, "site.yml --tags nvidia_driver"))
    need_cuda = (profile.get("vllm") or {}).get("cuda")
    if need_cuda and have.get("cuda_version"):
        ok = _ver(have["cuda_version"]) >= _ver(need_cuda)
        out.append(dict(check("profile", "driver CUDA version", ">= %s (vLLM %s wheels)" % (need_cuda, profile["vllm"].get("version")),
                              have["cuda_version"], PASS if ok else FAIL,
                              "" if ok else "the loaded driver is too old for this profile's CUDA; install the profile's driver"),
                        blocking=not ok))
    lo, hi = _ver(drv.get("compute_capability_min")), _ver(drv.get("compute_capability_max"))
    for g in topo.get("gpus") or []:
        cc = _ver(g.get("compute_capability"))
        if not cc or not lo or not hi:
            continue
        ok = lo <= cc <= hi
        out.append(dict(check("profile", "GPU %s arch sm_%s" % (g["index"], g["compute_capability"].replace(".", "")),
                              "driver R%s supports %s-%s" % (drv.get("branch"), drv["compute_capability_min"], drv["compute_capability_max"]),
                              g["compute_capability"], PASS if ok else FAIL,
                              "" if ok else "this GPU needs a newer driver branch: llmhost_stack=current"), blocking=not ok))
    # The venvs' Python as the profile role settled it for this distribution (llmhost_stack_python)
    python = python or {"version": (profile.get("python") or {}).get("version"),
                        "package": (profile.get("python") or {}).get("package")}
    py = python.get("version")
    if py:
        ok = py in (system.get("pythons") or [])
        out.append(check("profile", "Python for the venvs", py, ", ".join(system.get("pythons") or []) or "none",
                         PASS if ok else WARN, "" if ok else _python_fix(profile, system, python)))
    for w in profile.get("warnings") or []:
        out.append(check("profile", "profile %s" % name, "", w, WARN, "llmhost_stack=current"))
    return out


def summary(checks):
    counts = dict((s, 0) for s in (PASS, WARN, FAIL, INFO))
    for c in checks:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    return counts


def _cell(v):
    return str(v if v is not None else "").replace("|", "\\|").replace("\n", " ")


def check_table(checks):
    """The counts line and the checks as a Markdown table (the host report's and the doctor's)."""
    counts = summary(checks)
    lines = ["Checks: %d PASS, %d WARN, %d FAIL, %d INFO." % (counts[PASS], counts[WARN], counts[FAIL], counts[INFO]),
             "", "| status | area | item | want | have | fix |", "|---|---|---|---|---|---|"]
    for c in checks:
        lines.append("| %s |" % " | ".join(_cell(c[k]) for k in ("status", "area", "item", "want", "have", "fix")))
    return lines


def markdown(host, system, topo, numa, checks):
    """A readable report (Markdown; also fine as plain text)."""
    lines = ["# llmhost.vllm host report: %s" % host, ""]
    lines.append("Host: %s %s; kernel %s; CPUs %s; %s NUMA node(s)." % (
        system.get("distribution"), system.get("distribution_version"), system.get("kernel"),
        (numa or {}).get("online_cpus"), (numa or {}).get("node_count")))
    drv = topo.get("driver") or {}
    source = topo.get("source")
    read_through = ", GPU facts read through %s" % source if source and source != "none" else ""
    lines.append("Driver: %s (CUDA %s)%s." % (drv.get("version") or "not loaded", drv.get("cuda_version") or "-", read_through))
    lines.append("")
    if topo.get("gpus"):
        lines += ["| GPU | name | bus | CC | memory MiB | NUMA | CPUs | PCIe now/max | power W |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for g in topo["gpus"]:
            p = g.get("pcie") or {}
            lines.append("| %s |" % " | ".join(_cell(x) for x in (
                g["index"], g.get("name"), g.get("pci_bus_id"), g.get("compute_capability"), g.get("memory_total_mib"),
                g.get("numa_node"), g.get("cpu_affinity"),
                "gen%s x%s / gen%s x%s" % (p.get("gen_current"), p.get("width_current"), p.get("gen_max"), p.get("width_max")),
                g.get("power_limit_w"))))
        lines.append("")
    else:
        lines += ["No NVIDIA GPU found on this host.", ""]
    lines += check_table(checks)
    notes = (topo.get("warnings") or []) + (numa or {}).get("warnings", [])
    if notes:
        lines += ["", "Notes:"] + ["- %s" % n for n in notes]
    return "\n".join(lines) + "\n"


def build_report(host, system, topo, numa, live_sysctl, wanted_sysctl, cmdline, wanted_cmdline, profile=None,
                 wanted_cpu=None, python=None):
    checks = profile_checks(profile, system or {}, topo or {}, python) + gpu_checks(topo or {}) + \
        tuning_checks(numa, live_sysctl, wanted_sysctl, cmdline, wanted_cmdline, wanted_cpu)
    blocking = [c for c in checks if c.get("blocking")]
    why = " ".join("%s: want %s, have %s (%s)." % (c["item"], c["want"], c["have"], c["fix"]) for c in blocking)
    return {"host": host, "system": system, "gpu_topology": topo, "numa": numa, "checks": checks,
            "profile": (profile or {}).get("name"), "blocking": blocking, "blocking_text": why,
            "summary": summary(checks), "markdown": markdown(host, system or {}, topo or {}, numa or {}, checks)}
