# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what is wrong with the paths a role would create, own, write or remove."""

from __future__ import annotations

DOCUMENTATION = r"""
name: path_errors
short_description: Check role path variables for what they become (units, scripts, chown and rm targets)
version_added: 0.1.0
description:
  - Each path must be absolute, made of letters, digits and C(. _ - + @), without C(.), C(..) or empty
    parts, at least two levels below C(/) and not a system folder such as C(/etc) or C(/var/cache).
  - A drop-in file must sit directly in its drop-in folder.
  - Returns one sentence per bad variable, naming it; an empty list when all are fine.
options:
  _input:
    description: Variable name to value.
    type: dict
    required: true
  optional:
    description: Names whose empty value means the role's default.
    type: list
    elements: str
    default: []
  dropins:
    description: Name to the folders its file must sit in.
    type: dict
    default: {}
  read_only:
    description:
      - Names of paths the role only reads (a CUDA toolkit, a source archive); they may lie in system folders such as C(/usr).
    type: list
    elements: str
    default: []
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse paths that cannot be used safely
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'vllm_service_cache_dir': vllm_service_cache_dir} | llmhost.vllm.path_errors }}"
"""

RETURN = r"""
_value:
  description: Sentences such as C(vllm_service_cache_dir='/' is a system folder or too close to one ...).
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.paths import errors


def path_errors(paths, optional=None, dropins=None, read_only=None):
    return errors(paths, optional or (), dropins or {}, read_only or ())


class FilterModule:
    """llmhost.vllm path filters."""

    def filters(self):
        return {"path_errors": path_errors}
