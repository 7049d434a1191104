"""Count what issue #41 measures, the same way every time: tasks in roles/*/tasks, roles/*/handlers and playbooks/
(blocks unrolled), how many are set_fact/assert/debug/fail, string values holding Jinja that span 5+ lines, and
`tasks_from:` into an entry point the target role's meta/argument_specs.yml does not declare.

usage: .venv/bin/python tools/task_census.py [ROOT]"""
import sys
from pathlib import Path

import yaml

PLAIN = {"set_fact", "assert", "debug", "fail"}
BLOCK_KEYS = ("block", "rescue", "always")
PLAY_KEYS = ("pre_tasks", "tasks", "post_tasks", "handlers")


def unrolled(items):
    """Every task of a task list, the tasks of its blocks in their place (a block itself is not a task)."""
    for item in items or []:
        if not isinstance(item, dict):
            continue
        if any(k in item for k in BLOCK_KEYS):
            for key in BLOCK_KEYS:
                yield from unrolled(item.get(key))
        else:
            yield item


def module_of(task):
    names = [k for k in task if "." in k or k in PLAIN or k.endswith(("_tasks", "_role"))]
    return names[0].rsplit(".", 1)[-1] if names else "?"


def long_jinja(value):
    """Strings under a value holding {{ or {% and spanning five lines or more."""
    if isinstance(value, str):
        return [value] if ("{{" in value or "{%" in value) and value.strip().count("\n") >= 4 else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in long_jinja(v)]
    if isinstance(value, list):
        return [s for v in value for s in long_jinja(v)]
    return []


def tasks(root):
    for path in sorted(root.glob("roles/*/tasks/*.yml")) + sorted(root.glob("roles/*/handlers/*.yml")):
        yield from unrolled(yaml.safe_load(path.read_text()))
    for path in sorted(root.glob("playbooks/*.yml")):
        for play in yaml.safe_load(path.read_text()) or []:
            for key in PLAY_KEYS:
                yield from unrolled(play.get(key))


def undeclared_entries(root, found):
    """include_role/import_role with tasks_from into an entry point its role does not declare."""
    out = []
    for task in found:
        call = task.get("ansible.builtin.include_role") or task.get("ansible.builtin.import_role") or {}
        if not isinstance(call, dict) or "tasks_from" not in call:
            continue
        name = str(call.get("name", ""))
        # a role named by a loop variable ("llmhost.vllm.{{ __llmhost_role }}") is each role of the loop
        roles = task.get("loop") if "{{" in name and isinstance(task.get("loop"), list) else [name]
        for role in (str(r).rsplit(".", 1)[-1] for r in roles):
            spec = root / "roles" / role / "meta" / "argument_specs.yml"
            declared = (yaml.safe_load(spec.read_text()) or {}).get("argument_specs", {}) if spec.exists() else {}
            if str(call["tasks_from"]).replace(".yml", "") not in declared:
                out.append("%s:%s" % (role, call["tasks_from"]))
    return out


def main(argv):
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1])
    found = list(tasks(root))
    plain = [t for t in found if module_of(t) in PLAIN]
    long_values = [s for t in found for s in long_jinja(t)]
    print("tasks: %d" % len(found))
    print("set_fact/assert/debug/fail: %d (%.1f%%)" % (len(plain), 100.0 * len(plain) / max(len(found), 1)))
    print("Jinja values of 5+ lines: %d (longest %d lines)"
          % (len(long_values), max([s.strip().count("\n") + 1 for s in long_values] or [0])))
    print("tasks_from into an undeclared entry point: %d" % len(undeclared_entries(root, found)))


if __name__ == "__main__":
    main(sys.argv)
