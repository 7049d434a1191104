# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI addresses as every source spells them (NVML's busId, nvidia-smi's pci.bus_id, sysfs, kernel logs)."""

from __future__ import annotations

import re

_LONG_RE = re.compile(r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])")
_SHORT_RE = re.compile(r"\b([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])\b")


def bus_id(value):
    """Normalise a PCI address to ``dddd:bb:dd.f``, lowercase, 4-digit domain; None if unreadable."""
    if not value:
        return None
    m = _LONG_RE.search(str(value))
    if m:
        dom, bus, dev, fn = m.groups()
        return "%04x:%s:%s.%s" % (int(dom, 16) & 0xFFFF, bus.lower(), dev.lower(), fn)
    m = _SHORT_RE.search(str(value))
    if m:
        bus, dev, fn = m.groups()
        return "0000:%s:%s.%s" % (bus.lower(), dev.lower(), fn)
    return None
