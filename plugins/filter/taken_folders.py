# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the folders the roles would take on a host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: taken_folders
short_description: The folders the roles would create, chown or chmod on a host, by variable
version_added: 0.1.0
description:
  - The roles' defaults, read from the collection's own files, with the host's values over them.
  - Only plain absolute paths; a value the first play refuses, or one built from another variable, is left out.
  - Logic in C(module_utils/input_classes.py) (C(TAKEN_FOLDERS)).
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Look at the folders the roles would take
  llmhost.vllm.path_info:
    paths: "{{ (hostvars[inventory_hostname] | llmhost.vllm.taken_folders).values() | list }}"
"""

RETURN = r"""
_value:
  description: Variable name to folder.
  type: dict
"""

import os

from ansible_collections.llmhost.vllm.plugins.module_utils.input_classes import TAKEN_FOLDERS, taken_paths
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import role_values

COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def taken_folders(host_vars, collection_dir=COLLECTION_DIR):
    return taken_paths(role_values(collection_dir, host_vars, TAKEN_FOLDERS))


class FilterModule:
    """llmhost.vllm folder filters."""

    def filters(self):
        return {"taken_folders": taken_folders}
