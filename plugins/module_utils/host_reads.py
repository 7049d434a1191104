# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host report's plain reads under a root: live sysctl values, the kernel command line, the system's Pythons;
and `sysctl KEY...` output read the same way (filter sysctl_output).

Each degrades to an empty answer and a note when a file is missing or unreadable; none raises for the host's sake."""

from __future__ import annotations

import os
import re

# each name part starts with a letter, a digit or _, so that no part becomes "." or ".." on the way to a path
SYSCTL_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_][A-Za-z0-9_/:-]*)*")
PYTHON_NAME = re.compile(r"python(3\.[0-9]{1,2})")


def _under(root, path):
    return os.path.join(root or "/", path.lstrip("/"))


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def spaced(value):
    """A sysctl value as `sysctl` prints it: whitespace made single spaces, none at the ends."""
    return " ".join(str(value).split())


def parse_sysctl(lines):
    """``sysctl KEY...`` output (``key = value`` lines) as {key: value}, values spaced as spaced() does."""
    out = {}
    for line in lines:
        key, sep, value = str(line).partition(" = ")
        if sep and key.strip():
            out[key.strip()] = spaced(value)
    return out


def sysctl_path(key):
    """/proc/sys path of a dotted sysctl key (a `/` inside one name part stands for a dot, as sysctl writes it)."""
    return "/proc/sys/" + "/".join(part.replace("/", ".") for part in key.split("."))


def sysctl_values(root, keys, notes):
    """{key: value} for each key the kernel has, whitespace made single spaces (as `sysctl KEY` prints it)."""
    out = {}
    for key in keys:
        if not SYSCTL_KEY.fullmatch(key or ""):
            notes.append("%r is not a sysctl key; not read" % key)
            continue
        try:
            out[key] = spaced(_read(_under(root, sysctl_path(key))))
        except FileNotFoundError:
            continue  # the kernel has no such key: the report says so
        except OSError as e:
            notes.append("sysctl %s could not be read: %s" % (key, e.strerror or e))
    return out


def cmdline(root, notes):
    """The running kernel's command line, as /proc/cmdline holds it ('' when unreadable)."""
    try:
        return _read(_under(root, "/proc/cmdline"))
    except OSError as e:
        notes.append("/proc/cmdline could not be read: %s" % (e.strerror or e))
        return ""


def pythons(root, dirs):
    """Versions of the python3.N interpreters in the given folders (links count), sorted by version."""
    found = set()
    for folder in dirs:
        try:
            names = os.listdir(_under(root, folder))
        except OSError:
            continue
        found.update(m.group(1)[len("3."):] for m in map(PYTHON_NAME.fullmatch, names) if m)
    return ["3." + minor for minor in sorted(found, key=int)]
