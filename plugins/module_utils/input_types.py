# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A wrong type or choice, said in one line: the variable, what it got and what it needs.

Ansible's own check of a role's argument spec says it too, but its failed result carries the whole spec
(``argument_spec_data``), which the console prints after the useful line. The site's first play runs this
check first, with Ansible's own validator on each option the user set, so the same values pass and fail."""

from __future__ import annotations

import math
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

# What each argument spec type needs, in words.
NEEDS = {
    "str": "a string", "int": "a whole number", "float": "a number", "bool": "true or false",
    "list": "a list", "dict": "a mapping", "path": "a path", "raw": "any value", "bytes": "a size",
    "bits": "a size", "jsonarg": "JSON",
}
_KIND_OF = {"list": list, "dict": dict}
# In this order: a bool is an int too; Ansible hands in its own str, list and dict subclasses.
_KINDS = ((bool, "a boolean"), (int, "a whole number"), (float, "a number"), (str, "a string"), (list, "a list"),
          (dict, "a mapping"), (type(None), "null"))


# What both readings of a boolean agree on: the argument spec's (which strips spaces, and takes y, t, n, f) and the
# roles' `| bool` (which does neither). Anything else would pass the spec and then be read otherwise by the role.
BOOL_WORDS = frozenset(["yes", "on", "true", "1", "no", "off", "false", "0"])
_INT_RE = re.compile(r"-?[0-9]+\Z")


def _strict(option, value):
    """Why a value Ansible's validator took would still be read otherwise by a role; None when it would not. A boolean
    is a real one or a word both readings share; a whole number is a real one or digits (not 8080.0, not " 9090");
    a number is finite (NaN passes every range check) and has no spaces around it."""
    kind = option.get("type", "str")
    if kind == "bool" and not isinstance(value, bool):
        if not (isinstance(value, str) and value.lower() in BOOL_WORDS) and value not in (0, 1):
            return "true or false (a real boolean, or exactly one of yes/no, true/false, on/off, 1/0)"
    if kind == "int" and (isinstance(value, float) or (isinstance(value, str) and not _INT_RE.match(value))):
        return "a whole number (digits only: no spaces, no decimal point)"
    if kind == "float" and isinstance(value, str) and value != value.strip():
        return "a number (no spaces around it)"
    if kind in ("int", "float") and isinstance(value, (str, float)):
        try:
            finite = math.isfinite(float(value))
        except ValueError:
            finite = True  # not a number at all: the validator said so already
        if not finite:
            return "a finite number (not NaN, not infinity)"
    return None


def options_by_name(specs):
    """{variable: [its option spec in each entry point that declares it]} from parsed argument_specs.yml files."""
    out = {}
    for spec in specs:
        for entry in ((spec or {}).get("argument_specs") or {}).values():
            for name, option in ((entry or {}).get("options") or {}).items():
                if (option or {}) not in out.setdefault(name, []):  # entry points that share a role's options
                    out[name].append(option or {})
    return out


def _strip(option):
    """The option as the validator should see it for a value the user gave: no default, not required (its
    sub-options stay as declared)."""
    return {k: v for k, v in option.items() if k not in ("default", "required", "description", "version_added")}


def _needs(option):
    needs = NEEDS.get(option.get("type", "str"), option.get("type"))
    if option.get("type") == "list" and option.get("elements"):
        needs += " of %s" % NEEDS.get(option["elements"], option["elements"]).replace("a ", "", 1) + "s"
    return needs


def _got(value, secret):
    kind = next((word for cls, word in _KINDS if isinstance(value, cls)), type(value).__name__)
    return kind if secret else "%r (%s)" % (value, kind)


def problem(name, value, option):
    """One line when ``value`` does not pass ``option``'s type, elements, choices or sub-options; None when it does.
    A value of the right kind whose parts are wrong (a client without its name) gets Ansible's own sentence."""
    got = _got(value, bool(option.get("no_log")))
    try:
        result = ArgumentSpecValidator({name: _strip(option)}).validate({name: value})
    except (OverflowError, ValueError):  # Ansible's int check raises on infinity instead of refusing it
        return "%s: got %s; needs %s" % (name, got, _strict(option, value) or _needs(option))
    if not result.error_messages:
        strict = _strict(option, value)
        return "%s: got %s; needs %s" % (name, got, strict) if strict else None
    if option.get("choices"):
        return "%s must be one of: %s; got %s" % (name, ", ".join(str(c) for c in option["choices"]), got)
    right_kind = _KIND_OF.get(option.get("type", "str"), object)
    if option.get("options") and isinstance(value, right_kind):
        return "%s: %s" % (name, " ".join(str(result.error_messages[0]).split()))
    return "%s: got %s; needs %s" % (name, got, _needs(option))


def errors(values, options):
    """One line for each variable in ``values`` (name: value, what the user set) that some declared option refuses."""
    out = []
    for name in sorted(values):
        for option in options.get(name, ()):
            line = problem(name, values[name], option)
            if line and line not in out:
                out.append(line)
    return out
