# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role inputs checked by class, each answer a sentence that names the variable: numbers within their
range, lists that are lists (argument_specs converts a string to a one-item list, but the role
would read the raw string), and names that become a path part or a systemd unit name."""

from __future__ import annotations

import math
import re
import unicodedata

_PART_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*\Z")
# systemd.unit(5): ASCII letters, digits, ":", "-", "_", ".", "\"; "@" separates a template's instance.
_ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_UNIT_PREFIX_RE = re.compile(r"[A-Za-z0-9:_.-]+\Z")
# https://, http:// (mirrors on a trusted network) and file:// (offline) only: another scheme (ftp, ssh, gopher)
# would be handed to pip, git or apt as it is.
_SOURCE_RE = re.compile(r"((?i:https?|file)://|/)[^\s\"'$`\\]+\Z")
_UNIT_RE = re.compile(r"[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]*)?\.(service|timer|target|socket|mount|path)\Z")
# A host name or an IPv4/IPv6 address, as vLLM's --host takes it.
_HOST_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9.-]*|[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)\Z")
# useradd(8)'s portable names.
_USER_RE = re.compile(r"[a-z_][a-z0-9_-]{0,31}\Z")
# Debian policy 5.6.1 and 5.6.12: package names and versions (a kernel release is a version-like name too).
_APT_NAME_RE = re.compile(r"[a-z0-9][a-z0-9+.-]+\Z")
_APT_VERSION_RE = re.compile(r"[0-9][A-Za-z0-9.+~:-]*\Z")
# What an apt pin or the unattended-upgrades blacklist takes: a name, a glob or a /regex/, one token.
_APT_PATTERN_RE = re.compile(r"([a-z0-9*?][a-z0-9+.*?-]*|/[^\s\"'\\`/]+/)\Z")
# One argument of vllm serve: it lands unquoted in VLLM_ARGS, which systemd splits at whitespace.
_ARG_RE = re.compile(r"[^\s\"'\\$`]+\Z")


def _number(value):
    """The number ``value`` is, or None: never a boolean, NaN or an infinity (NaN passes every < and > check)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        number = float(value) if isinstance(value, float) else float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def range_errors(spec):
    """``spec`` maps a name to [value, lowest, highest] (highest None: no upper bound)."""
    out = []
    for name, (value, low, high) in sorted((spec or {}).items()):
        number = _number(value)
        if number is None or number < low or (high is not None and number > high):
            upto = " up" if high is None else " to %s" % high
            out.append("%s=%s must be a number from %s%s" % (name, value, low, upto))
    return out


def list_errors(spec, unique=(), ints=()):
    """``spec`` maps a name to a value that must be a list; ``unique`` names lists without duplicates,
    ``ints`` lists of whole numbers >= 0 (GPU indices), which must not repeat either."""
    out = []
    for name, value in sorted((spec or {}).items()):
        if not isinstance(value, list):
            out.append("%s must be a list, got %s %r" % (name, type(value).__name__, value))
            continue
        if name in ints and not all(_number(v) is not None and float(_number(v)).is_integer() and _number(v) >= 0
                                    for v in value):
            out.append("%s=%s must list GPU indices (whole numbers from 0)" % (name, value))
        elif (name in unique or name in ints) and len(set(str(v) for v in value)) != len(value):
            out.append("%s=%s lists an item twice" % (name, value))
    return out


# Environment variables that make a process load code of their choosing before its own: the dynamic loader's,
# Python's (a path, a start-up file, a warning category is imported, a breakpoint hook), the shells'.
LOADER_ENV = frozenset(["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_BIND_NOW", "PYTHONPATH", "PYTHONHOME",
                        "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PYTHONEXECUTABLE",
                        "PYTHONINSPECT", "PYTHONSAFEPATH", "BASH_ENV", "ENV", "PERL5LIB", "NODE_OPTIONS"])


def is_on(value):
    """A boolean as both readings take it: a real one, or yes/on/true/1 (the words type_errors lets through)."""
    return value is True or str(value).strip().lower() in ("yes", "on", "true", "1")


def is_loopback(text):
    """Whether text is a literal loopback address (127.0.0.0/8, ::1). A name, even localhost, is not: what it
    resolves to is /etc/hosts' or DNS's to say, and a rule that lets a service go without a key must not depend on
    it."""
    import ipaddress  # pylint: disable=import-outside-toplevel
    try:
        return ipaddress.ip_address(str(text).strip("[]")).is_loopback
    except ValueError:
        return False


_NAME_RULES = {
    "path_part": (lambda t: bool(_PART_RE.match(t)),
                  "must be one plain name: letters, digits and . _ - + @, starting with a letter or digit"),
    "unit": (lambda t: bool(_UNIT_RE.match(t)),
             "is not a systemd unit name (letters, digits, : _ . - and a suffix such as .service)"),
    "unit_prefix": (lambda t: bool(_UNIT_PREFIX_RE.match(t)),
                    "is not the start of a systemd unit name (letters, digits, : _ . -)"),
    "source": (lambda t: bool(_SOURCE_RE.match(t)),
               "is not a URL (https://, http:// or file:///...) or an absolute path without whitespace, quotes, $, ` "
               "or backslashes"),
    "not_loader": (lambda t: t.upper() not in LOADER_ENV and not t.upper().startswith("LD_"),
                   "makes the process load code of its choosing before vLLM's (the dynamic loader's or Python's); it "
                   "is refused: put what vLLM needs in its venv"),
    "env_name": (lambda t: bool(_ENV_RE.match(t)),
                 "is not an environment variable name (letters, digits and _, not starting with a digit)"),
    "host": (lambda t: bool(_HOST_RE.match(t)), "is not a host name or an IP address"),
    "loopback": (is_loopback, "is not a literal loopback address (127.0.0.1, ::1; a name such as localhost is not taken)"),
    "user": (lambda t: bool(_USER_RE.match(t)),
             "is not a user or group name (lower-case letters, digits, _ and -, starting with a letter or _; 32 at most)"),
    "apt_name": (lambda t: bool(_APT_NAME_RE.match(t)),
                 "is not a Debian package name (lower-case letters, digits and + . -)"),
    "apt_version": (lambda t: bool(_APT_VERSION_RE.match(t)),
                    "is not a Debian version (a digit, then letters, digits and . + ~ : -)"),
    "apt_pattern": (lambda t: bool(_APT_PATTERN_RE.match(t)),
                    "is not a package name, glob or /regex/ that apt's pin and the blacklist read as one token"),
    "arg": (lambda t: bool(_ARG_RE.match(t)) and not invisible(t),
            "cannot be one argument of the unit (no whitespace, quotes, $, backquotes or backslashes) or holds a "
            "character no one sees (a control, format or zero-width character such as U+200B)"),
}


def invisible(text):
    """Whether ``text`` holds a character a reader does not see: controls, format characters (the zero-width space
    U+200B, joiners, direction marks), separators other than the ASCII space, private-use and unassigned ones. A name
    with one looks like another name in every log and listing."""
    return any(unicodedata.category(char) in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp") or
               (unicodedata.category(char) == "Zs" and char != " ") for char in str(text))


def name_errors(spec, kind="path_part"):
    """``spec`` maps a name to a value (or a list of values) that becomes one path part (``kind="path_part"``:
    never ``/``, ``.`` or ``..``), a systemd unit name (``"unit"``) or the part before a template's ``@``
    (``"unit_prefix"``), an environment name (``"env_name"``), a package source written into a config file
    (``"source"``: a URL or an absolute path that cannot start another line or setting), a host (``"host"``), a user
    or group (``"user"``), a Debian package name, version or pin pattern (``"apt_name"``, ``"apt_version"``,
    ``"apt_pattern"``), or one argument of the unit's command line (``"arg"``)."""
    test, rule = _NAME_RULES[kind]
    out = []
    for name, value in sorted((spec or {}).items()):
        for item in (value if isinstance(value, list) else [value]):
            if not (isinstance(item, str) and test(item)):
                out.append("%s: %r %s" % (name, item, rule))
    return out


def repo_key_errors(spec):
    """``spec`` maps a name to the URL of an apt repository's signing key. apt trusts the repository because of
    that key, so it must be a plain source (``"source"`` above) and never come over plain ``http://``: whoever is
    on the way could hand out their own. https:// or a copy on the host (file:///...) only."""
    out = name_errors(spec, kind="source")
    for name, value in sorted((spec or {}).items()):
        if isinstance(value, str) and value.lower().startswith("http://"):
            out.append("%s=%s: a key over plain http could be swapped on the way; use https:// or a copy on the host "
                       "(file:///...)" % (name, value))
    return out
