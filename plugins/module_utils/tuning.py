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
