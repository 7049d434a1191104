# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nvidia_driver role installs on a host, and what on the host it refuses (filters nvidia_driver_settle and
nvidia_driver_errors)."""

from __future__ import annotations

import re

VERSION = re.compile(r"[0-9]{3}\.[0-9]{2,3}(\.[0-9]{2})?\Z")


def _own_or(value, fallback):
    return value if value else fallback


def settle(spec, distribution, v):
    """The driver's version, packages, package version and pinned packages for ``distribution``: the role's own
    variables where given, else the stack profile's (``spec``: llmhost_stack_profile.nvidia_driver). A version of its
    own replaces the profile's in the profile's package version."""
    version = _own_or(v["nvidia_driver_version"], spec["version"])
    profile_pkg_version = spec.get("package_version", {}).get(distribution, "").replace(spec["version"], version)
    packages = _own_or(v["nvidia_driver_packages"], spec.get("packages", {}).get(distribution, []))
    pin = _own_or(v["nvidia_driver_pin_packages"],
                  spec.get("pin_packages", {}).get(distribution, v["nvidia_driver_packages"]))
    return {"version": version, "packages": packages, "pin": pin,
            "package_version": _own_or(v["nvidia_driver_package_version"], profile_pkg_version)}


def settle_errors(settled, spec, os_family, distribution, own_packages):
    """A distribution the profile has packages for, and a version of the form 535.129.03 in the profile's branch (a
    branch of its own needs packages of its own) that the package version starts with."""
    if os_family != "Debian" or not settled["packages"] or not settled["package_version"]:
        return ["stack profile %s has no NVIDIA driver packages for %s (llmhost_stack_profile.nvidia_driver.packages "
                "lists %s); set nvidia_driver_packages and nvidia_driver_package_version, or choose another "
                "llmhost_stack." % (spec.get("name", "?"), distribution, ", ".join(spec.get("packages", {})))]
    version, pkg_version = settled["version"], settled["package_version"]
    if (VERSION.match(version) and pkg_version.startswith(version + "-")
            and (own_packages or version.startswith(spec["branch"] + "."))):
        return []
    return ["nvidia_driver_version=%s (package version %s) does not fit: it must look like 535.129.03, belong to the "
            "profile's driver branch %s (another branch needs its own nvidia_driver_packages), and "
            "nvidia_driver_package_version must start with it." % (version, pkg_version, spec["branch"])]


SECURE_BOOT_HELP = (
    "Either turn Secure Boot off in the firmware, or enrol a Machine Owner Key and let DKMS sign with it: (1) create "
    "or reuse a key pair (Ubuntu's DKMS makes /var/lib/dkms/mok.key and mok.pub); (2) `sudo mokutil --import "
    "/var/lib/dkms/mok.pub`, choose a one-time password; (3) reboot, and in the blue MokManager screen choose \"Enroll "
    "MOK\" with that password; (4) set nvidia_driver_mok_key=/var/lib/dkms/mok.key and "
    "nvidia_driver_mok_cert=/var/lib/dkms/mok.pub and run again.")


def host_errors(v):
    """What on the host stops the install: Secure Boot on (``secure_boot``: the efivar's byte, None when unread)
    without a key pair to sign with; signing keys that are not there (``mok_missing``); NVIDIA's .run installer
    (``runfile``); another driver (``foreign``: "package version" lines) unless ``replace``."""
    out = []
    if v["secure_boot"] == "1" and not (v["mok_key"] and v["mok_cert"]):
        out.append("Secure Boot is on (%s), and the NVIDIA module DKMS builds is unsigned, so it would not load. %s"
                   % (v["efivar"], SECURE_BOOT_HELP))
    if v["mok_missing"]:
        out.append("nvidia_driver_mok_key / nvidia_driver_mok_cert name files that do not exist on the host: %s."
                   % ", ".join(v["mok_missing"]))
    if v["runfile"]:
        out.append("An NVIDIA driver installed by NVIDIA's .run installer is present (/usr/bin/nvidia-uninstall). "
                   "Packages would fight with its files: run `sudo nvidia-uninstall` first, reboot, then run the role "
                   "again.")
    if v["foreign"] and not v["replace"]:
        out.append("Another NVIDIA driver is installed (%s); the role keeps it and stops. Set nvidia_driver_replace=true "
                   "to replace it with %s %s (a reboot follows)."
                   % (", ".join(v["foreign"]), ", ".join(v["packages"]), v["package_version"]))
    return out


def installed(dpkg_lines, packages, package_version):
    """dpkg-query's lines sorted: installed is dpkg's "ii", or "hi" when held, as this role leaves its packages (a
    held driver of another version is another driver all the same). Returns the "package version" lines, those of
    another version (``foreign``), and whether every wanted package is at the wanted version (``at_wanted``)."""
    found = [re.sub(r"^[ih]i +", "", line) for line in dpkg_lines if re.match(r"[ih]i ", line)]
    foreign = [line for line in found if not line.endswith(" " + package_version)]
    at_wanted = all("%s %s" % (p, package_version) in found for p in packages)
    return {"installed": found, "foreign": foreign, "at_wanted": at_wanted}
