# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""system_tuning's decisions about the kernel command line and what the host offers, as sentences.

The command line lands in a GRUB drop-in that update-grub sources as shell: each parameter is a name or name=value
with no whitespace, quotes, $ or backslashes; a parameter must be one the kernel knows (tuning guides pass around
some that do not exist, each refused with the reason)."""

from __future__ import annotations

import re

PARAM_RE = re.compile(r"[A-Za-z0-9_.-]+(=[^\s\"'$`\\]+)?\Z")


def cmdline_errors(cmdline, known, fake):
    """Phrases for system_tuning_kernel_cmdline (with the opt-in switches): malformed parameters, ones that do not
    exist (``fake``: name to the reason) and ones the kernel does not know (``known``, with the user's extra)."""
    params = [str(p) for p in cmdline]
    out = []
    malformed = [p for p in params if not PARAM_RE.match(p)]
    if malformed:
        out.append("%s: not of the form name or name=value (no spaces, quotes, $ or backslashes)." % ", ".join(malformed))
    names = [p.split("=", 1)[0] for p in params]
    out += ["%s: %s." % (n, " ".join(str(fake[n]).split())) for n in names if n in fake]
    unknown = [n for n in names if n not in known and n not in fake and PARAM_RE.match(n)]
    if unknown:
        out.append("%s: not a known kernel parameter (add it to system_tuning_kernel_cmdline_extra_known if it really "
                   "exists)." % ", ".join(unknown))
    return out


def _thp_boot(cmdline):
    return [str(p).split("=", 1)[1] for p in cmdline if str(p).startswith("transparent_hugepage=")]


def offer_errors(thp, cmdline, governor, profile, numa):
    """Sentences where the wishes disagree with the command line or with what this host offers: the THP mode against
    transparent_hugepage=, the CPU governor against cpufreq's list, the platform profile against the firmware's."""
    out = []
    boot = _thp_boot(cmdline)
    if thp and boot and boot != [thp]:
        out.append("system_tuning_thp=%s contradicts transparent_hugepage=%s in system_tuning_kernel_cmdline."
                   % (thp, ",".join(boot)))
    offered = ((numa or {}).get("cpufreq") or {}).get("available") or []
    if governor and offered and governor not in offered:
        out.append("system_tuning_cpu_governor=%s is not offered by this CPU; choose one of %s."
                   % (governor, ", ".join(offered)))
    firmware = (numa or {}).get("platform_profile")
    if profile and firmware is not None and profile not in firmware.get("choices", []):
        out.append("system_tuning_platform_profile=%s is not one of this firmware's choices %s."
                   % (profile, ", ".join(firmware.get("choices", []))))
    return out


SYSCTL_KEY = re.compile(r"[a-z0-9_]+(\.[A-Za-z0-9_-]+)+\Z")
SYSCTL_VALUE = re.compile(r"-?[0-9]+([ \t]+-?[0-9]+)*\Z")


def sysctl_settings(layers, numa):
    """The sysctl settings asked for: ``layers`` (defaults, the user's, overrides) merged in order, a None value
    dropping the key; kernel.numa_balancing as ``numa`` (numa.balancing's value, reason) decides. Returns the settings
    and each value as the kernel prints it (whitespace runs as one space), for comparison with its own."""
    merged = {}
    for layer in layers:
        merged.update(layer or {})
    settings = {k: v for k, v in merged.items() if v is not None}
    if numa[0] is not None:
        settings["kernel.numa_balancing"] = numa[0]
    want = {k: " ".join(str(v).split()) for k, v in settings.items()}
    return {"sysctl": settings, "want": want, "numa_balancing_reason": numa[1]}


def sysctl_errors(settings, on_host):
    """Keys that are not dotted names, values that are not integers, and keys this kernel does not have (not in
    ``on_host``, the keys found under /proc/sys)."""
    bad = ["%s=%s" % (k, v) for k, v in settings.items()
           if not SYSCTL_KEY.match(str(k)) or not SYSCTL_VALUE.match(str(v))]
    out = []
    if bad:
        out.append("sysctl %s (from system_tuning_sysctl_defaults / system_tuning_sysctl / system_tuning_sysctl_"
                   "overrides): keys are dotted names like vm.swappiness, values are integers or space-separated "
                   "integers." % ", ".join(bad))
    unknown = [k for k in settings if k not in on_host and SYSCTL_KEY.match(str(k))]
    if unknown:
        out.append("unknown sysctl key(s) %s (set in system_tuning_sysctl_defaults, system_tuning_sysctl or "
                   "system_tuning_sysctl_overrides): no such file under /proc/sys on this kernel." % ", ".join(unknown))
    return out


def host_errors(v):
    """Everything system_tuning refuses once it has read the host: the sysctl settings against /proc/sys
    (``sysctl``, ``on_host``), the kernel command line (``cmdline``, ``known``, ``fake``), and the wishes against
    what the host offers (``thp``, ``governor``, ``platform_profile``, ``numa``)."""
    out = sysctl_errors(v["sysctl"], set(v["on_host"]))
    cmdline = cmdline_errors(v["cmdline"], set(v["known"]), v["fake"])
    if cmdline:
        out.append("system_tuning_kernel_cmdline is refused: %s" % " ".join(cmdline))
    return out + offer_errors(v["thp"], v["cmdline"], v["governor"], v["platform_profile"], v["numa"])
