# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA GPUs as sysfs and procfs show them, with no driver tool at all.

Every function takes ``root`` (the filesystem root, "/" on a live host) so the same code
reads a mounted image or a captured tree in tests. Missing or unreadable files give None.
"""

from __future__ import annotations

import os
import re

from ansible_collections.llmhost.vllm.plugins.module_utils.cpus import format_cpulist, hexmask_to_cpus, is_cpulist, parse_cpulist

NVIDIA_VENDOR = "0x10de"
# PCI class 0x0300xx (VGA controller) and 0x0302xx (3D controller): the GPU functions.
GPU_CLASSES = ("0x0300", "0x0302")
_BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
# PCIe link speed per lane -> generation.
_SPEED_GEN = {"2.5": 1, "5.0": 2, "5": 2, "8.0": 3, "8": 3, "16.0": 4, "16": 4, "32.0": 5, "32": 5, "64.0": 6, "64": 6}


def path(root, *parts):
    return os.path.join(root or "/", *[p.lstrip("/") for p in parts])


def read(root, *parts):
    """Stripped content of a file under root, or None when it is missing or unreadable."""
    try:
        with open(path(root, *parts), "r", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except (OSError, IOError):
        return None


def read_int(root, *parts):
    value = read(root, *parts)
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def link_gen(speed):
    """``"32.0 GT/s PCIe"`` -> 5; unknown -> None."""
    if not speed:
        return None
    m = re.match(r"^\s*([0-9.]+)\s*GT/s", speed)
    return _SPEED_GEN.get(m.group(1)) if m else None


def pci_devices(root):
    """Map BDF -> sysfs directory (relative to root) of every PCI function.

    /sys/bus/pci/devices lists them as links; a captured tree may hold only the
    /sys/devices/pci* hierarchy, which is walked instead.
    """
    found = {}
    bus = path(root, "/sys/bus/pci/devices")
    if os.path.isdir(bus):
        for name in os.listdir(bus):
            if _BDF_RE.match(name):
                real = os.path.realpath(os.path.join(bus, name))
                found[name] = real
    if found:
        return found
    devices = path(root, "/sys/devices")
    if not os.path.isdir(devices):
        return found
    for top in os.listdir(devices):
        if not top.startswith("pci"):
            continue
        for dirpath, dirnames, dummy in os.walk(os.path.join(devices, top)):
            for d in list(dirnames):
                if _BDF_RE.match(d):
                    found[d] = os.path.join(dirpath, d)
            # do not descend into non-PCI subtrees (drm, hwmon, ...)
            dirnames[:] = [d for d in dirnames if _BDF_RE.match(d)]
    return found


def _attr(devdir, name):
    try:
        with open(os.path.join(devdir, name), "r", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except (OSError, IOError):
        return None


def nvidia_gpus(root="/"):
    """NVIDIA display/3D PCI functions, sorted by bus address, with what sysfs tells of each."""
    gpus = []
    for bdf, devdir in sorted(pci_devices(root).items()):
        if (_attr(devdir, "vendor") or "").lower() != NVIDIA_VENDOR:
            continue
        cls = (_attr(devdir, "class") or "").lower()
        if not cls.startswith(GPU_CLASSES):
            continue
        numa = _attr(devdir, "numa_node")
        try:
            numa = int(numa) if numa is not None else None
        except ValueError:
            numa = None
        cpulist = _attr(devdir, "local_cpulist")
        if not is_cpulist(cpulist):
            cpulist = format_cpulist(hexmask_to_cpus(_attr(devdir, "local_cpus")))
        widths = []
        for name in ("current_link_width", "max_link_width"):
            try:
                widths.append(int(_attr(devdir, name)))
            except (TypeError, ValueError):
                widths.append(None)
        gpus.append({
            "pci_bus_id": bdf,
            "device_id": _attr(devdir, "device"),
            "numa_node": numa if numa is not None and numa >= 0 else None,
            "cpu_affinity": cpulist,
            "pcie": {
                "gen_current": link_gen(_attr(devdir, "current_link_speed")),
                "gen_max": link_gen(_attr(devdir, "max_link_speed")),
                "width_current": widths[0],
                "width_max": widths[1],
            },
        })
    return gpus


def driver_info(root="/"):
    """What /proc/driver/nvidia says: module version and, per GPU, model and UUID."""
    version_text = read(root, "/proc/driver/nvidia/version")
    info = {"loaded": version_text is not None, "version": None, "open_kernel_module": None, "gpus": {}}
    if version_text:
        m = re.search(r"Kernel Module(?: for [^ ]+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)", version_text)
        if m:
            info["version"] = m.group(1)
        info["open_kernel_module"] = "Open Kernel Module" in version_text
    gdir = path(root, "/proc/driver/nvidia/gpus")
    if os.path.isdir(gdir):
        for bdf in sorted(os.listdir(gdir)):
            text = read(root, "/proc/driver/nvidia/gpus", bdf, "information") or ""
            fields = dict((k.strip(), v.strip()) for k, dummy, v in (ln.partition(":") for ln in text.splitlines()) if k)
            info["gpus"][bdf.lower()] = {"name": fields.get("Model"), "uuid": fields.get("GPU UUID"),
                                         "minor": fields.get("Device Minor")}
    return info


def cpus_of(text):
    return parse_cpulist(text)
