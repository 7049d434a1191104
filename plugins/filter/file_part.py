# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a name made safe as one file name."""

from __future__ import annotations

DOCUMENTATION = r"""
name: file_part
short_description: An inventory host name (or any name) as one safe file name
version_added: 0.1.0
description:
  - A name of letters, digits and C(. _ -) that does not start with a dot is returned as it is.
  - Any other (C(../x), C(a/b), a space, a leading dot) has each other character replaced by C(_), leading dots
    dropped, and a short hash of the name added, so that two names never share a file. Logic in
    C(module_utils/paths.py).
options:
  _input:
    description: The name.
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: A report per host
  ansible.builtin.debug:
    msg: "reports/doctor-{{ inventory_hostname | llmhost.vllm.file_part }}.md"
"""

RETURN = r"""
_value:
  description: The file name.
  type: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.paths import file_part as _file_part


def file_part(name):
    return _file_part(name)


class FilterModule:
    """llmhost.vllm file name filters."""

    def filters(self):
        return {"file_part": file_part}
