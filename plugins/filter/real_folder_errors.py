# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: folders read back into a module are real folders, their files real files."""

from __future__ import annotations

DOCUMENTATION = r"""
name: real_folder_errors
short_description: Refuse a folder (and the file it must hold) that is missing or a symbolic link
version_added: 0.1.0
description:
  - Looks on the machine the filter runs on (the controller). Links are not followed, neither the folder nor the file,
    so what a module reads back is what the variable named.
  - Logic in C(module_utils/paths.py).
options:
  _input:
    description: Variable name to folder.
    type: dict
    required: true
  holds:
    description: A file the folder must hold, as a regular file.
    type: str
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse a comparison with a run that is not there
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'benchmark_compare': benchmark_compare} | llmhost.vllm.real_folder_errors(holds='summary.json') }}"
"""

RETURN = r"""
_value:
  description: Sentences such as C(benchmark_compare=/x holds no summary.json).
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.paths import real_folder_errors as _errors


def real_folder_errors(paths, holds=None):
    return _errors(paths, holds)


class FilterModule:
    """llmhost.vllm folder filters."""

    def filters(self):
        return {"real_folder_errors": real_folder_errors}
