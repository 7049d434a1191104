# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which replicas a rolling restart reaches now, and which wait: a canary restarts one replica onto the new model and
leaves the others serving the old one, though their files already name the new one.

A replica is stale when what it runs differs from its files now: its environment file's content (by SHA-1) differs
from the one it was started with, or the unit, the secrets or its NUMA drop-in changed. Stale replicas restart now,
or only those named (``only``); the others are recorded as pending, each with the SHA-1 of the environment it still
runs, so that a later run restarts them even when it writes nothing, and leaves them alone when the files come back
to what they run (a canary rolled back)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# What a pending replica runs when a change beyond its environment file left it stale: matches no file's SHA-1.
UNKNOWN = "unknown"


def runs(name, env, pending):
    """SHA-1 of the environment replica ``name`` runs: as recorded when it was left pending, else the file's content
    before this run wrote it (``env``: files_and_folders' result for the file)."""
    if name in pending:
        return pending[name]
    return env.get("previous_checksum") if env.get("changed") else env.get("checksum")


def restart_plan(names, envs, pending, only=None, changed_all=False, changed=None):
    """{"now": names to restart in this run, "pending": {name: SHA-1 it runs} of stale ones left waiting}.

    ``names``: the plan's replicas; ``envs``: {name: files_and_folders' result for its environment file};
    ``pending``: what an earlier run recorded; ``only``: the names a restart may reach now (empty: all);
    ``changed_all``: the unit or the secrets changed; ``changed``: names whose NUMA drop-in changed."""
    stale, ran = [], {}
    for name in names:
        env = envs.get(name) or {}
        ran[name] = runs(name, env, pending)
        if changed_all or name in (changed or ()):
            ran[name] = UNKNOWN
            stale.append(name)
        elif ran[name] != env.get("checksum"):
            stale.append(name)
    now = [name for name in stale if not only or name in only]
    return {"now": now, "pending": dict((name, ran[name]) for name in stale if name not in now)}
