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
