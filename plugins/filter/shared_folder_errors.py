# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: folders the roles would take that are shared, or links, on the host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: shared_folder_errors
short_description: Refuse a folder the roles would take that is a link, not a folder, or shared on the host
version_added: 0.1.0
description:
  - A folder anyone may write in, or with its sticky bit set (as C(/tmp)), or a symbolic link, is refused by variable.
  - So is a folder that is already there as someone else's, its owner, group or mode not what its role makes it
    (C(MADE_AS) in C(module_utils/input_classes.py)); the run would re-own or re-mode it, or write in it as root.
  - Logic in C(module_utils/input_classes.py).
options:
  _input:
    description: The C(paths) of C(llmhost.vllm.path_info)'s answer for the folders.
    type: dict
    required: true
  taken:
    description: Variable name to folder (filter C(taken_folders)).
    type: dict
    required: true
  host_vars:
    description:
      - The host's variables, for the service user's name (C(vllm_service_user), else C(vllm_install_user), with the
        roles' defaults under them). A folder the role hands to that user must already be that user's.
    type: dict
    default: {}
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse shared folders
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ __found.paths | llmhost.vllm.shared_folder_errors(__taken, hostvars[inventory_hostname]) }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused folder, naming its variable.
  type: list
  elements: str
"""

import os

from ansible_collections.llmhost.vllm.plugins.module_utils import input_classes
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import role_values

COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shared_folder_errors(found, taken, host_vars=None, collection_dir=COLLECTION_DIR):
    user = input_classes.service_user(role_values(collection_dir, host_vars or {}, input_classes.SERVICE_USER_VARS))
    return input_classes.shared_folder_errors(found, taken, user)


class FilterModule:
    """llmhost.vllm folder filters."""

    def filters(self):
        return {"shared_folder_errors": shared_folder_errors}
