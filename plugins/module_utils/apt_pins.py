# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an apt preferences ``Package:`` line covers: exact names, globs and ``/regex/`` entries, as
apt_preferences(5) reads them (a regex is searched, not anchored; a glob matches the whole name)."""

from __future__ import annotations

import fnmatch
import re


def covers(pattern, name):
    """Whether one ``Package:`` entry applies to package ``name``."""
    if len(pattern) > 2 and pattern.startswith("/") and pattern.endswith("/"):
        return re.search(pattern[1:-1], name) is not None
    return fnmatch.fnmatchcase(name, pattern)


def unpinned(names, patterns):
    """The names no entry of ``patterns`` covers, in their order."""
    return [n for n in names if not any(covers(p, n) for p in patterns)]


def repo_versions(lines):
    """{package: [version, ...]} from ``package version`` lines (the probe of NVIDIA's repository), in their order."""
    out = {}
    for line in lines or []:
        fields = str(line).split()
        if len(fields) == 2:
            out.setdefault(fields[0], []).append(fields[1])
    return out


def repo_offers(packages, versions):
    """What the repository offers of ``packages``, as one phrase: ``pkg 1.2-1, 1.1-1; other nothing;``."""
    return " ".join("%s %s;" % (p, ", ".join(versions.get(p) or ["nothing"])) for p in packages)
