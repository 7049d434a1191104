# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs a user may have mistyped, which Ansible itself lets through: a variable that carries a role's
prefix but that no role declares or sets (``vllm_service_max_model_length``), and a tag that no task
carries (``--tags vllm_serivce``). Each is named with the closest known spelling.

What is known comes from the collection's own files, parsed YAML handed in by the caller: every option
of every entry point in ``meta/argument_specs.yml``, every variable a role's ``defaults/`` or ``vars/``
defines, every fact it sets (``set_fact``) or result it registers; every tag written in a task file or a
playbook."""

from __future__ import annotations

import difflib

# Ansible's own tag words, accepted by --tags and --skip-tags whatever the tasks carry; and those Molecule always
# skips (its convention for tasks a test run, or its idempotence run, leaves out).
SPECIAL_TAGS = frozenset(["all", "always", "never", "tagged", "untagged",
                          "molecule-notest", "notest", "molecule-idempotence-notest"])
SET_FACT = ("ansible.builtin.set_fact", "set_fact")


# Play-wide switches that belong to no role but are read by the internal one (playbooks/uninstall.yml's): a typo in
# llmhost_uninstall_packages=false would purge what the user meant to keep.
PLAY_PREFIXES = ("llmhost_uninstall_",)


def role_prefixes(roles):
    """The public prefixes: each role's name and an underscore (internal roles, such as _common, have none), and
    the play-wide switches' (PLAY_PREFIXES)."""
    return sorted([role + "_" for role in roles if role and not role.startswith("_")] + list(PLAY_PREFIXES))


def spec_options(spec):
    """Option names of every entry point of one parsed argument_specs.yml."""
    names = set()
    for entry in ((spec or {}).get("argument_specs") or {}).values():
        names.update(((entry or {}).get("options") or {}).keys())
    return names


def _walk(node, found):
    """Collect, anywhere in parsed task or playbook YAML: tags, set_fact keys and register names."""
    if isinstance(node, list):
        for item in node:
            _walk(item, found)
        return
    if not isinstance(node, dict):
        return
    tags = node.get("tags")
    found["tags"].update([tags] if isinstance(tags, str) else [t for t in tags or [] if isinstance(t, str)])
    for key in SET_FACT:
        if isinstance(node.get(key), dict):
            found["vars"].update(k for k in node[key] if k != "cacheable")
    if isinstance(node.get("register"), str):
        found["vars"].add(node["register"])
    for value in node.values():
        _walk(value, found)


def known_names(specs, var_files, task_files):
    """{"vars": names a role declares, defines or sets, "tags": tags some task or play carries}."""
    found = {"vars": set(), "tags": set(SPECIAL_TAGS)}
    for spec in specs:
        found["vars"].update(spec_options(spec))
    for variables in var_files:
        found["vars"].update(variables if isinstance(variables, dict) else {})
    for tasks in task_files:
        _walk(tasks, found)
    return found


def closest(word, choices):
    """The known spelling nearest to word, or None when none is near."""
    match = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.75)
    return match[0] if match else None


def _hint(word, choices):
    near = closest(word, choices)
    return " (did you mean %s?)" % near if near else ""


def var_errors(names, known_vars, prefixes):
    """A sentence for each name that carries a role's prefix but is not known: a typo Ansible ignores."""
    prefixes = tuple(prefixes)
    return ["%s is not a variable of any role of llmhost.vllm%s; Ansible would ignore it. Set "
            "llmhost_allow_unknown_vars=true to let such names through." % (name, _hint(name, known_vars))
            for name in sorted(set(names)) if name.startswith(prefixes) and name not in known_vars]


def tag_errors(run_tags, skip_tags, known_tags):
    """A sentence for each --tags or --skip-tags word that no task carries: the run would do nothing, or all."""
    out = []
    for option, tags in (("--tags", run_tags), ("--skip-tags", skip_tags)):
        for tag in sorted(set(tags or ()) - set(known_tags)):
            out.append("%s %s: no task of llmhost.vllm carries this tag%s" % (option, tag, _hint(tag, known_tags)))
    return out
