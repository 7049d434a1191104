# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU list helpers: the kernel's cpulist strings ("0-15,32-47"), hex masks and NVML masks."""

from __future__ import annotations

import re

_CPULIST_RE = re.compile(r"^\s*\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*\s*\Z")


def is_cpulist(text):
    """True for a non-empty kernel cpulist such as ``0-3,8``."""
    return bool(text) and bool(_CPULIST_RE.match(str(text)))


def parse_cpulist(text):
    """``"0-2,5"`` -> ``[0, 1, 2, 5]``; empty or malformed input -> ``[]``."""
    if not is_cpulist(text):
        return []
    cpus = set()
    for part in str(text).replace(" ", "").split(","):
        lo, dummy, hi = part.partition("-")
        lo = int(lo)
        hi = int(hi) if hi else lo
        if hi < lo:
            return []
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


def format_cpulist(cpus):
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``; no CPUs -> ``None``."""
    cpus = sorted(set(int(c) for c in cpus))
    if not cpus:
        return None
    ranges = []
    start = prev = cpus[0]
    for c in cpus[1:]:
        if c == prev + 1:
            prev = c
            continue
        ranges.append((start, prev))
        start = prev = c
    ranges.append((start, prev))
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in ranges)


def words_to_cpus(words, bits=64):
    """NVML affinity arrays (list of unsigned words, least significant first) -> CPU numbers."""
    cpus = []
    for i, word in enumerate(words or []):
        word = int(word)
        base = i * bits
        bit = 0
        while word:
            if word & 1:
                cpus.append(base + bit)
            word >>= 1
            bit += 1
    return cpus


def hexmask_to_cpus(text):
    """sysfs ``local_cpus`` (``"ffffffff,00000000"``, most significant group first) -> CPU numbers."""
    if not text:
        return []
    groups = str(text).strip().split(",")
    try:
        words = [int(g, 16) for g in reversed(groups)]
    except ValueError:
        return []
    return words_to_cpus(words, bits=32)
