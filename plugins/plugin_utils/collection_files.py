# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the first play's checks read on the controller: the collection's own YAML files, and the host's values of
the variables they know, each read alone (a value that does not template is left to its role, which says why)."""

from __future__ import annotations

import copy
import glob
import os
from collections.abc import Mapping

import yaml

# The C parser where PyYAML has it: the argument specs are read on every run of every playbook.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Parsed files by path, with the (mtime, size) they were parsed at: a process (a task's worker, a test run) parses each
# file once, however many checks ask for it (a copy each time: a caller may change what it gets).
_PARSED = {}


def _parsed(path):
    stat = os.stat(path)
    key = (stat.st_mtime_ns, stat.st_size)
    if _PARSED.get(path, (None,))[0] != key:
        with open(path, encoding="utf-8") as handle:
            _PARSED[path] = (key, yaml.load(handle, Loader=_LOADER))  # a safe loader (C or Python)
    return copy.deepcopy(_PARSED[path][1])


def load_yaml(*patterns):
    """Each matching file's parsed YAML, in name order; a file that does not parse is left out (ansible-lint guards
    them)."""
    out = []
    for pattern in patterns:
        for path in sorted(glob.glob(str(pattern))):
            try:
                out.append(_parsed(path))
            except (OSError, yaml.YAMLError):
                continue
    return out


def first_play_files(collection_dir):
    """The glob patterns of every file the first play's checks read, by what typo_errors takes from them: the roles'
    argument specs ("specs"), their defaults and vars ("values"), and their tasks and handlers and the playbooks
    ("steps", for the tags)."""
    root = str(collection_dir)
    return {"specs": [role_files(root, "meta", "argument_specs.yml")],
            "values": [role_files(root, "defaults", "*.yml"), role_files(root, "vars", "*.yml")],
            "steps": [role_files(root, "tasks", "*.yml"), role_files(root, "handlers", "*.yml"),
                      os.path.join(root, "playbooks", "*.yml"), os.path.join(root, "playbooks", "tasks", "*.yml")]}


def warm(collection_dir):
    """Parse every file of first_play_files once, in this process: a process that forks (the controller, through
    the preload callback) hands its workers the parsed files, where each worker would parse them all again (about
    0.2 s a check on CI's machine). Returns how many files are held parsed."""
    load_yaml(*[pattern for patterns in first_play_files(collection_dir).values() for pattern in patterns])
    return len(_PARSED)


def role_files(collection_dir, *parts):
    """The glob pattern of one file kind in every role: role_files(root, "defaults", "*.yml")."""
    return os.path.join(str(collection_dir), "roles", "*", *parts)


def plain(value):
    """The value as plain Python: Ansible's lazy lists and dicts templated once, element by element. Copying one of
    those as it is (Ansible's validator deep-copies what it checks) costs about 0.4 s each; this costs nothing."""
    if isinstance(value, Mapping):
        return {plain(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def member_values(hostvars, names, keys, facts=()):
    """For each host of ``names``: its ``keys`` (None where unset) and, under ansible_facts, only the ``facts`` it has,
    each as plain Python. What a cluster's filters read of its members, and nothing more."""
    out = {}
    for name in names:
        host = hostvars[name] if name in hostvars else {}
        gathered = host.get("ansible_facts", {})
        out[name] = {key: plain(host.get(key)) for key in keys}
        out[name]["ansible_facts"] = {fact: plain(gathered[fact]) for fact in facts if fact and gathered.get(fact)}
    return out


def host_values(host_vars, names):
    """{name: value} for each of names the host sets, as plain Python; Ansible templates each on access, so one that
    fails is skipped rather than failing the others."""
    out = {}
    for name in names:
        try:
            if name in host_vars:
                out[name] = plain(host_vars[name])
        except Exception:  # pylint: disable=broad-except  # an undefined or broken value: its role's check says why
            continue
    return out


def role_values(collection_dir, host_vars, names=None, roles="*"):
    """The roles' defaults (every role's, or those of ``roles``) with the host's values over them, as plain Python;
    only ``names`` when given. One reading of "what a variable is on this host" for the first play's filters."""
    patterns = [os.path.join(str(collection_dir), "roles", role, "defaults", "main.yml") for role in
                ([roles] if isinstance(roles, str) else roles)]
    merged = {}
    for defaults in load_yaml(*patterns):
        merged.update({k: v for k, v in (defaults or {}).items() if names is None or k in names})
    merged.update(host_values(host_vars, sorted(names if names is not None else merged)))
    return merged
