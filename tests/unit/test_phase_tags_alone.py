"""A phase tag alone (`--tags monitoring_configure`, under --check too) runs its role's preflight and that phase, and no
other phase: each private variable (`__<role>_*`) the phase reads must be set by the files that tag runs, come from the
role's defaults or vars, or be read only behind `| default(...)` or an `is defined` guard. One read of a variable that
only another phase sets ends such a run with "'__monitoring_packages_missing' is undefined"."""
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("install", "configure", "service", "verify", "run", "report")
IMPORTS = ("ansible.builtin.import_tasks", "ansible.builtin.include_tasks")
SET_FACT = "ansible.builtin.set_fact"
GUARDED_AFTER = re.compile(r"(\.\w+)*\s*(\|\s*default\b|is\s+(not\s+)?defined\b)")
# (role, file, variable): read under a condition that only holds where the variable is set, which a pattern cannot see
KNOWN = {
    ("system_tuning", "verify.yml", "__system_tuning_sysctl_live"):
        "read only where __system_tuning_sysctl_after is skipped, which happens only after configure.yml set it",
}


def _load(path):
    return yaml.safe_load(path.read_text()) or []


def _tasks(items, guards=()):
    """(task, guards) for every task, blocks opened; guards: the `when` texts of the blocks around it and its own."""
    for task in items or []:
        if not isinstance(task, dict):
            continue
        when = task.get("when", [])
        here = guards + tuple(when if isinstance(when, list) else [when])
        if any(key in task for key in ("block", "rescue", "always")):
            for key in ("block", "rescue", "always"):
                yield from _tasks(task.get(key), here)
        yield task, here


def _files(role_dir, path, seen):
    """The task files `path` runs, itself included (imports and includes named literally)."""
    if path in seen or not path.exists():
        return seen
    seen.add(path)
    for task, _guards in _tasks(_load(path)):
        for key in IMPORTS:
            name = task.get(key)
            name = name.get("file") if isinstance(name, dict) else name
            if isinstance(name, str) and "{{" not in name:
                _files(role_dir, role_dir / "tasks" / name, seen)
    return seen


def _set_by(role_dir, files):
    names = set()
    for extra in ("defaults/main.yml", "vars/main.yml"):
        if (role_dir / extra).exists():
            names |= set(yaml.safe_load((role_dir / extra).read_text()) or {})
    for path in files:
        for task, _guards in _tasks(_load(path)):
            names |= {task["register"]} if "register" in task else set()
            names |= set(task.get(SET_FACT) or {}) | set(task.get("vars") or {})
            names |= {(task.get("loop_control") or {}).get("loop_var")} - {None}
    return names


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("block", "rescue", "always"):
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def phase_files(role, roles=ROOT / "roles"):
    """{phase tag: the task files `--tags <phase tag>` runs} for a role, from its tasks/main.yml."""
    role_dir = roles / role
    main = _load(role_dir / "tasks" / "main.yml")
    wanted = {"%s_%s" % (role, phase) for phase in PHASES}
    out = {}
    for task in main:
        for tag in set(task.get("tags", [])) & wanted:
            name = task.get("ansible.builtin.import_tasks")
            if name:
                out.setdefault(tag, set())
                _files(role_dir, role_dir / "tasks" / name, out[tag])
    return out


def unset_reads(role, roles=ROOT / "roles"):
    """'--tags TAG: FILE reads VAR' for each private variable a phase tag reads unguarded and never sets."""
    role_dir, found = roles / role, []
    pattern = re.compile(r"\b__%s_[a-z0-9_]+" % role)
    for tag, files in sorted(phase_files(role, roles).items()):
        known = _set_by(role_dir, files)
        for path in sorted(files):
            for task, guards in _tasks(_load(path)):
                guarded = {m.group(0) for g in guards for m in pattern.finditer(str(g))
                           if GUARDED_AFTER.match(str(g), m.end())}
                for text in _strings(task):
                    for match in pattern.finditer(text):
                        name = match.group(0)
                        if name in known or name in guarded or GUARDED_AFTER.match(text, match.end()):
                            continue
                        if (role, path.name, name) not in KNOWN:
                            found.append("--tags %s: %s reads %s" % (tag, path.relative_to(roles), name))
    return sorted(set(found))


ROLES = sorted(path.parent.parent.name for path in ROOT.glob("roles/*/tasks/main.yml"))


@pytest.mark.parametrize("role", ROLES)
def test_a_phase_tag_alone_reads_only_what_it_sets_or_guards(role):
    assert unset_reads(role) == []


MAIN = """
- {name: Preflight, ansible.builtin.import_tasks: preflight.yml, tags: [demo, install, demo_install, configure, demo_configure]}
- {name: Install, ansible.builtin.import_tasks: install.yml, tags: [demo, install, demo_install]}
- {name: Configure, ansible.builtin.import_tasks: configure.yml, tags: [demo, configure, demo_configure]}
"""
INSTALL = "- {name: Keep, ansible.builtin.set_fact: {__demo_missing: []}}\n"


@pytest.mark.parametrize("configure,preflight,want", [
    # the bug this test was written for: monitoring's configure phase read what only its install phase set
    ("- {name: Start, ansible.builtin.debug: {}, when: __demo_missing | length > 0}\n", "[]\n",
     ["--tags demo_configure: demo/tasks/configure.yml reads __demo_missing"]),
    ("- {name: Start, ansible.builtin.debug: {}, when: '__demo_missing | default([]) | length > 0'}\n", "[]\n", []),
    ("- {name: Start, ansible.builtin.debug: {msg: '{{ __demo_missing }}'}, when: __demo_missing is defined}\n", "[]\n", []),
    ("- {name: Start, ansible.builtin.debug: {}, when: __demo_missing | length > 0}\n", INSTALL, []),
    ("- block:\n  - {name: Start, ansible.builtin.debug: {msg: '{{ __demo_missing }}'}}\n  when: __demo_missing is defined\n",
     "[]\n", []),
])
def test_the_check_finds_a_read_of_what_only_another_phase_sets(tmp_path, configure, preflight, want):
    tasks = tmp_path / "demo" / "tasks"
    tasks.mkdir(parents=True)
    for name, text in (("main", MAIN), ("preflight", preflight), ("install", INSTALL), ("configure", configure)):
        (tasks / (name + ".yml")).write_text(text)
    assert unset_reads("demo", roles=tmp_path) == want


def test_every_phase_tag_runs_the_preflight():
    for role in ROLES:
        for tag, files in phase_files(role).items():
            preflight = ROOT / "roles" / role / "tasks" / "preflight.yml"
            validate = ROOT / "roles" / role / "tasks" / "validate.yml"
            assert preflight in files or validate in files, "--tags %s runs neither preflight.yml nor validate.yml" % tag
