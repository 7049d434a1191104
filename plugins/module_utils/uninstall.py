# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an uninstall removes, from what each role says it put on the host (its footprint).

A role names its footprint by kind; the user's choices (keep the models, the reports, the holds, the
distribution packages) decide which kinds go. Paths go in three ways:
- ``paths``: files the role writes under names of its own, and folders it recorded making (a model), removed whole;
- ``owned_dirs`` and ``reports``: folders a variable places (a home, a cache, a configuration folder), removed
  whole only when the path says it is the collection's (a part named llmhost... or vllm...), so a variable pointed at
  a folder of the user's (``~/.cache/huggingface``) never gets it emptied; such a folder is kept and named;
- ``folders``: parents (``/opt/llmhost``, ``/etc/llmhost``), removed once empty, deepest first; system folders never."""

from __future__ import annotations

import re

from ansible_collections.llmhost.vllm.plugins.module_utils.paths import path_problem

# kind of footprint -> the flag that must be true for it to go (None: it always goes)
KINDS = {
    "units": None,
    "masked": None,
    "paths": None,
    "owned_dirs": None,
    "folders": None,
    "users": None,
    "groups": None,
    "models": "models",
    "model_users": "models",
    "model_groups": "models",
    "reports": "reports",
    "hold_records": "holds",
    "hold_files": "holds",
    "packages": "packages",
    "package_files": "packages",
}
OWNED_NAME = re.compile(r"(llmhost|vllm)", re.IGNORECASE)
FLAGS = ("models", "reports", "holds", "packages")


def footprint_errors(footprint):
    """Why the footprint a role handed in is malformed; empty when it is well formed."""
    if not isinstance(footprint, dict):
        return ["the footprint is not a mapping"]
    errors = ["unknown kind %r (known: %s)" % (kind, ", ".join(sorted(KINDS))) for kind in footprint if kind not in KINDS]
    for kind, items in footprint.items():
        if not isinstance(items, list) or not all(isinstance(item, str) and item for item in items):
            errors.append("%s is not a list of non-empty strings" % kind)
    return errors


def plan(footprint, flags):
    """What goes, given the flags (a dict of booleans): "units" to stop and disable, "unmask", "paths" to remove
    whole, "folders" to remove once empty, what is "kept" (and why), "users", "groups", "hold_records" (files naming the packages held, read before
    they go: held_packages) and packages to "purge"."""
    wanted = {kind: list(items) for kind, items in footprint.items() if KINDS[kind] is None or flags.get(KINDS[kind])}

    def take(*kinds):
        return _unique(item for kind in kinds for item in wanted.get(kind, []))

    whole = take("owned_dirs", "reports")
    return {
        "units": take("units"),
        "unmask": take("masked"),
        "paths": take("paths", "models", "hold_records", "hold_files", "package_files") + [d for d in whole if collection_named(d)],
        "kept": ["%s (not named as the collection's: remove it yourself if it is)" % d for d in whole if not collection_named(d)],
        "folders": deepest_first(f for f in take("folders") if not path_problem(f)),
        "users": take("users", "model_users"),
        "groups": take("groups", "model_groups"),
        "hold_records": take("hold_records"),
        "purge": take("packages"),
    }


def collection_named(path):
    """Whether a folder's path says it is the collection's: some part below the top starts with llmhost or vllm."""
    return any(OWNED_NAME.match(part) for part in path.strip("/").split("/")[1:])


def held_packages(records):
    """The packages named on the "Held with dpkg:" line of each record (a role's unattended-upgrades file, which
    _common's hold.yml writes with that line), in order, once each."""
    names = []
    for text in records:
        for line in (text or "").splitlines():
            if line.startswith("// Held with dpkg:"):
                names.extend(line.split(":", 1)[1].split())
    return _unique(names)


def deepest_first(folders):
    """Folders ordered so that each comes before any folder that holds it."""
    return sorted(_unique(f.rstrip("/") or "/" for f in folders), key=lambda f: (-f.count("/"), f))


def loaded_units(show_text, active_state=""):
    """Names of the units ``systemctl show -p Id -p LoadState -p ActiveState -p UnitFileState`` says exist: loaded,
    active or with an enablement state; a name systemd does not know (not-found, inactive, no file) is left out.
    With ``active_state``, only those in that state (``failed``: what systemd keeps listed until reset-failed)."""
    units = []
    for block in show_text.split("\n\n"):
        fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        name = fields.get("Id")
        present = fields.get("LoadState") not in (None, "", "not-found") or fields.get("ActiveState") not in (None, "", "inactive")
        if name and present and active_state in ("", fields.get("ActiveState")):
            units.append(name)
    return _unique(units)


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def unsafe_paths(paths):
    """[(path, why)] for paths an uninstall must never remove: not plain, or a system folder (paths.path_problem)."""
    return [(path, path_problem(path)) for path in paths if path_problem(path)]


def remove_all(paths, folders, check_mode, fs):
    """Remove each path whole, then each folder that is (or, in check mode, would be) empty; deepest folders first.
    fs: an object with lexists(path), isdir(path) (a link is not a folder), listdir(path), rmtree(path), unlink(path)
    and rmdir(path). Returns (removed, kept): the paths removed (or that would be), and a sentence for each folder
    that stays."""
    removed, kept = [], []
    for path in _unique(p.rstrip("/") for p in paths):
        if fs.lexists(path):
            if not check_mode:
                (fs.rmtree if fs.isdir(path) else fs.unlink)(path)
            removed.append(path)
    for folder in deepest_first(folders):
        if not fs.lexists(folder) or folder in removed:
            continue
        if not fs.isdir(folder):
            kept.append("%s is not a folder" % folder)
            continue
        left = [name for name in fs.listdir(folder) if "%s/%s" % (folder, name) not in removed]
        if left:
            kept.append("%s still holds %s" % (folder, ", ".join(sorted(left)[:5])))
            continue
        if not check_mode:
            fs.rmdir(folder)
        removed.append(folder)
    return removed, kept
