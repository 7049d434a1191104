# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kernel a host gets (filter kernel_choice): the role's own packages and release where given, else the stack
profile's for the host's distribution (and its release, where the profile names packages per release); refused when
neither has one, when a package is not a kernel's, or when the release is another distribution's flavour."""

from __future__ import annotations

import re

FLAVOURS = {"Ubuntu": re.compile(r"[0-9.]+-[0-9]+-(generic|lowlatency|aws|gcp|azure)\Z"),
            "Debian": re.compile(r"[0-9.]+-[0-9]+-(amd64|cloud-amd64|rt-amd64|arm64)\Z")}
EXAMPLES = "Ubuntu: like 6.5.0-41-generic; Debian: like 6.1.0-41-amd64"


def choice(kernels, host, own, profile_name):
    """``kernels``: llmhost_stack_profile.kernel; ``host``: os_family, distribution, distribution_version; ``own``:
    kernel_packages, kernel_release. Returns packages, release and errors."""
    spec = kernels.get(host["distribution"]) or {}
    packages, release = own["kernel_packages"], own["kernel_release"]
    if not packages:
        packages = (spec.get("packages_by_version") or {}).get(host["distribution_version"], spec.get("packages", []))
        release = release or spec.get("release") or ""
    errors = []
    if host["os_family"] != "Debian" or not packages or any(not str(p).startswith("linux-") for p in packages):
        errors.append("stack profile %s has no kernel for %s (llmhost_stack_profile.kernel lists %s); set "
                      "kernel_packages (packages named linux-*) or choose another llmhost_stack. kernel_packages=%s."
                      % (profile_name, host["distribution"], ", ".join(kernels), own["kernel_packages"]))
    elif release and not (host["distribution"] in FLAVOURS and FLAVOURS[host["distribution"]].match(release)):
        errors.append("kernel_release / profile kernel release %s is not a %s kernel (%s)."
                      % (release, host["distribution"], EXAMPLES))
    return {"packages": packages, "release": release, "errors": errors}
