#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remove what a role put on the host: its own files and folders whole, shared folders once empty."""

from __future__ import annotations

DOCUMENTATION = r"""
module: remove_paths
short_description: Remove a role's files and folders, and the folders it made once they are empty
version_added: 0.2.0
description:
  - Removes each of O(paths) whole (a folder with what it holds; a link itself, never what it points to), then
    each of O(folders) that is empty once O(paths) are gone, deepest first. A folder that still holds something
    stays, and RV(kept) says what it still holds; so a home the user also keeps things in is never emptied by an
    uninstall.
  - Refuses, before removing anything, a path that is not plain and absolute or that is a system folder
    (C(/), C(/etc), C(/var/lib)...; the rule of C(module_utils/paths.py)).
  - Logic in C(module_utils/uninstall.py).
options:
  paths:
    description: Files and folders to remove whole.
    type: list
    elements: path
    default: []
  folders:
    description: Folders to remove only when empty (after O(paths) are gone).
    type: list
    elements: path
    default: []
attributes:
  check_mode:
    support: full
    description: Says what would be removed, counting what O(paths) would take out of each folder.
  diff_mode:
    support: none
    description: Lists the removed paths in RV(removed) instead.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Remove the venv and the stamp, then the home if nothing else is in it
  llmhost.vllm.remove_paths:
    paths: [/opt/llmhost/vllm/venv, /opt/llmhost/vllm/install-stamp.json]
    folders: [/opt/llmhost/vllm, /opt/llmhost]
"""

RETURN = r"""
removed:
  description: The paths removed (in check mode, that would be), in the order they went.
  returned: always
  type: list
  elements: str
  sample: [/opt/llmhost/vllm/venv, /opt/llmhost/vllm]
kept:
  description: A sentence for each folder of O(folders) that stays, saying why.
  returned: always
  type: list
  elements: str
  sample: ["/opt/llmhost still holds notes.txt"]
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmhost.vllm.plugins.module_utils.uninstall import remove_all, unsafe_paths


class HostFiles:
    """The host's file system, as module_utils/uninstall.remove_all uses it."""
    lexists = staticmethod(os.path.lexists)
    listdir = staticmethod(os.listdir)
    rmtree = staticmethod(shutil.rmtree)
    unlink = staticmethod(os.unlink)
    rmdir = staticmethod(os.rmdir)

    @staticmethod
    def isdir(path):
        return os.path.isdir(path) and not os.path.islink(path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="path", default=[]),
            folders=dict(type="list", elements="path", default=[]),
        ),
        supports_check_mode=True,
    )
    unsafe = unsafe_paths(module.params["paths"] + module.params["folders"])
    if unsafe:
        module.fail_json(msg="; ".join("%s %s: an uninstall removes no such path" % item for item in unsafe))
    try:
        removed, kept = remove_all(module.params["paths"], module.params["folders"], module.check_mode, HostFiles)
    except OSError as err:
        module.fail_json(msg="could not remove %s: %s" % (err.filename, err.strerror))
    module.exit_json(changed=bool(removed), removed=removed, kept=kept)


if __name__ == "__main__":
    main()
