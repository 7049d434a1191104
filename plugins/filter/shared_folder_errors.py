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
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse shared folders
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ __found.paths | llmhost.vllm.shared_folder_errors(__taken) }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused folder, naming its variable.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.input_classes import shared_folder_errors as _errors


def shared_folder_errors(found, taken):
    return _errors(found, taken)


class FilterModule:
    """llmhost.vllm folder filters."""

    def filters(self):
        return {"shared_folder_errors": shared_folder_errors}
