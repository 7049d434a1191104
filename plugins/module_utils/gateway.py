# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gateway's named clients, checked without ever quoting a key: each answer names the variable and the
client (by name, or by position where the name is missing)."""

from __future__ import annotations

import re

FIELDS = ("name", "key", "rate", "burst")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
# A key reaches nginx only as its SHA-256, but clients send it in a header: printable, no space, long enough.
KEY_RE = re.compile(r"[A-Za-z0-9._~+/=-]{20,}\Z")
LIMITS = {"rate": (1, 100000), "burst": (0, 100000)}


def _label(index, client):
    name = client.get("name")
    return "client %s" % name if isinstance(name, str) and NAME_RE.match(name) else "item %d" % index


def _one(variable, index, client):
    if not isinstance(client, dict):
        return ["%s item %d must be a mapping with name and key" % (variable, index)]
    label = _label(index, client)
    out = ["%s %s: unknown field %s (fields: %s)" % (variable, label, f, ", ".join(FIELDS))
           for f in sorted(set(client) - set(FIELDS), key=str)]
    if not (isinstance(client.get("name"), str) and NAME_RE.match(client["name"])):
        out.append("%s %s: name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
                   % (variable, label))
    if not (isinstance(client.get("key"), str) and KEY_RE.match(client["key"])):
        out.append("%s %s: key must be 20 or more letters, digits or '. _ ~ + / = -' (the key is not shown)"
                   % (variable, label))
    for field, (low, high) in LIMITS.items():
        value = client.get(field)
        if field in client and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
            out.append("%s %s: %s=%s must be a whole number from %d to %d" % (variable, label, field, value, low, high))
    return out


def _repeats(values):
    seen, again = set(), []
    for v in values:
        if v in seen and v not in again:
            again.append(v)
        seen.add(v)
    return again


def client_errors(clients, variable="gateway_clients"):
    """Sentences for every bad client; empty when all are fine."""
    if not isinstance(clients, list):
        return ["%s must be a list of clients ({name, key}), got %s" % (variable, type(clients).__name__)]
    out = [e for i, c in enumerate(clients) for e in _one(variable, i, c)]
    good = [c for c in clients if isinstance(c, dict)]
    out += ["%s: two clients are named %s; names must be unique" % (variable, n)
            for n in _repeats([c.get("name") for c in good if isinstance(c.get("name"), str)])]
    if _repeats([c.get("key") for c in good if isinstance(c.get("key"), str)]):
        out.append("%s: two clients share a key (the keys are not shown); each client needs its own" % variable)
    return out
