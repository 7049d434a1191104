# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs a user may have mistyped, which Ansible itself lets through: a variable that no role declares or sets and
that carries a role's prefix (``vllm_service_max_model_length``), mistypes one (``vllm_serivce_port``) or is near a
declared name (``llmhost_stak``), and a tag that no task carries (``--tags vllm_serivce``). Each is named with the
declared name meant (a whole word left out counts as near: ``vllm_service_port`` is ``vllm_service_base_port``).

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
# Play-wide variables a user sets that no role declares: where the reports land on the controller, and the switch of
# this check itself.
PLAY_VARS = ("llmhost_reports_dir", "llmhost_allow_unknown_vars")


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
    found = {"vars": set(PLAY_VARS), "tags": set(SPECIAL_TAGS)}
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


def hint(word, choices):
    near = closest(word, choices)
    return " (did you mean %s?)" % near if near else ""


# How near a word must be to another to count as its typo (difflib's ratio): "serivce" to "service" is 0.86,
# "gatway" to "gateway" 0.92, "test" to "stack" 0.44.
WORD_NEAR = 0.75
# How near a whole name with no role's prefix must be to a declared one to count as its typo ("llmhost_stak" to
# "llmhost_stack" is 0.96); a user's own names (vault_alice_key) are far from every declared one.
NAME_NEAR = 0.88


def _near(a, b, cutoff):
    return difflib.SequenceMatcher(None, a, b).ratio() >= cutoff


def mistyped_prefix(name, prefixes):
    """The role prefix whose words the name's first words mistype (each near, not all equal), or None."""
    words = name.split("_")
    for prefix in prefixes:
        want = prefix.rstrip("_").split("_")
        head = words[:len(want)]
        if (len(words) > len(want) and head != want
                and all(_near(a, b, WORD_NEAR) for a, b in zip(head, want))):
            return prefix
    return None


def nearest(name, known_vars, prefixes):
    """The declared name a user most likely meant: the prefix's typo mended first; then a declared name of that
    prefix holding every word the user wrote (a whole word left out or swapped: vllm_service_port is
    vllm_service_base_port); else the nearest spelling."""
    prefix = mistyped_prefix(name, prefixes)
    if prefix:
        name = prefix + "_".join(name.split("_")[len(prefix.rstrip("_").split("_")):])
    if name in known_vars:
        return name
    owner = next((p for p in sorted(prefixes, key=len, reverse=True) if name.startswith(p)), None)
    if owner:
        wrote = set(name[len(owner):].split("_"))
        holding = sorted((k for k in known_vars if k.startswith(owner) and wrote <= set(k[len(owner):].split("_"))),
                         key=lambda k: (len(k), k))
        if holding:
            return holding[0]
    return closest(name, known_vars)


def _mistyped(name, known_vars, prefixes):
    """Whether a name no role knows is a typo: it carries a role's prefix, or mistypes one, or is near a declared
    name. Anything else is a user's own (a vaulted secret, a variable of their playbooks) and passes."""
    if name in known_vars or name.startswith("ansible_"):
        return False
    return (name.startswith(tuple(prefixes)) or mistyped_prefix(name, prefixes) is not None
            or bool(difflib.get_close_matches(name, sorted(known_vars), n=1, cutoff=NAME_NEAR)))


def var_errors(names, known_vars, prefixes):
    """A sentence for each name that is a typo of a declared one (a role's prefix, mistyped or not, or a name near a
    declared one), with the declared name meant: Ansible would ignore it."""
    out = []
    for name in sorted(set(names)):
        if _mistyped(name, known_vars, prefixes):
            meant = nearest(name, known_vars, prefixes)
            out.append("%s is not a variable of any role of llmhost.vllm%s; Ansible would ignore it. Set "
                       "llmhost_allow_unknown_vars=true to let such names through."
                       % (name, " (did you mean %s?)" % meant if meant else ""))
    return out


def tag_errors(run_tags, skip_tags, known_tags):
    """A sentence for each --tags or --skip-tags word that no task carries: the run would do nothing, or all."""
    out = []
    for option, tags in (("--tags", run_tags), ("--skip-tags", skip_tags)):
        for tag in sorted(set(tags or ()) - set(known_tags)):
            out.append("%s %s: no task of llmhost.vllm carries this tag%s" % (option, tag, hint(tag, known_tags)))
    return out
