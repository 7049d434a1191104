# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the replicas a rolling restart reaches now, and those left pending (module_utils/restarts.py)."""

from __future__ import annotations

import posixpath

from ansible_collections.llmhost.vllm.plugins.module_utils import restarts

DOCUMENTATION = r"""
name: restart_plan
short_description: Which replicas restart now, and which are left pending with what they still run
version_added: 0.3.0
description:
  - A replica is stale when its environment file's content differs from the one it runs, or the unit, the secrets
    or its NUMA drop-in changed. Stale replicas restart now, or only those named in I(only) (a model upgrade's
    canary); the others are returned as pending, each with the SHA-1 of the environment it still runs.
  - A replica left pending by an earlier run restarts when its file differs from what it runs, and is no longer
    pending, with no restart, when the file is back to what it runs (a canary rolled back).
options:
  _input:
    description: The plan's replica names.
    type: list
    elements: str
    required: true
  files:
    description: The C(files) that C(llmhost.vllm.files_and_folders) returned for the files it wrote; each
      C(<name>.env) is a replica's environment file (the others are left out).
    type: list
    elements: dict
    required: true
  pending:
    description: What an earlier run left pending (name to the SHA-1 it runs).
    type: dict
    required: true
  only:
    description: The names a restart may reach in this run; empty for all.
    type: list
    elements: str
    default: []
  changed_all:
    description: Whether the unit or the secrets changed (every replica is stale).
    type: bool
    default: false
  changed:
    description: Names whose own files beyond the environment (the NUMA drop-in) changed.
    type: list
    elements: str
    default: []
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Name the replicas a restart must reach
  ansible.builtin.set_fact:
    __restart: "{{ ['0', '1'] | llmhost.vllm.restart_plan(written.files, pending, only=['0']) }}"
"""

RETURN = r"""
_value:
  description: C(now) (names to restart in this run) and C(pending) (name to the SHA-1 of the environment it runs).
  type: dict
"""


def restart_plan(names, files, pending, only=None, changed_all=False, changed=None):
    envs = dict((posixpath.basename(f["path"])[:-len(".env")], f) for f in files or [] if f["path"].endswith(".env"))
    return restarts.restart_plan([str(n) for n in names], envs, dict(pending or {}),
                                 [str(n) for n in only or []], bool(changed_all), [str(n) for n in changed or []])


class FilterModule:
    def filters(self):
        return {"restart_plan": restart_plan}
