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


def nvidia_repo(repo, host):
    """NVIDIA's repository for a host (``repo``: what llmhost_stack publishes as llmhost_stack_nvidia_repo; ``host``:
    distribution, distribution_version, distribution_major_version): the profile's flavour for the distribution
    release, the URL (the user's mirror, else NVIDIA's for that flavour) ending in one /, the key's URL (given, else
    the repository's key file), and the errors apt would meet: no flavour and no mirror, or a URL apt cannot use."""
    dists = (repo.get("dists") or {}).get(host["distribution"]) or {}
    dist = dists.get(host["distribution_version"]) or dists.get(host["distribution_major_version"]) or ""
    if not repo.get("url") and not dist:
        return {"dist": "", "url": "", "key_source": "", "errors": [
            "stack profile %s has no NVIDIA repository for %s %s (its nvidia_driver.repo_dist lists %s); choose another "
            "llmhost_stack or set llmhost_stack_nvidia_repo_url to a mirror of the right flavour."
            % (repo.get("profile"), host["distribution"], host["distribution_version"], ", ".join(repo.get("dists") or {}))]}
    url = (repo.get("url") or repo["default_url"].replace("{dist}", dist)).rstrip("/") + "/"
    key_source = repo.get("key_url") or url + repo["key_name"]
    errors = []
    if not re.match(r"(https?|file)://", url) or not re.match(r"(https?|file)://", key_source):
        errors.append("llmhost_stack_nvidia_repo_url=%s / llmhost_stack_nvidia_repo_key_url=%s: both must be http://, "
                      "https:// or file:// URLs." % (url, key_source))
    return {"dist": dist, "url": url, "key_source": key_source, "errors": errors}
