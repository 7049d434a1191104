# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup: the text of one of the collection's own module_utils files, for a role that installs it on a host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: module_utils_source
short_description: The text of the collection's own module_utils files
version_added: 0.1.0
description:
  - Reads C(plugins/module_utils/<name>) of this collection, on the controller, for a role that installs the same code
    on a host (the GPU exporter imports the NVML and PCI readers the fact modules run). A role needs no path into the
    collection (C(role_path)) to reach it.
  - Only a plain file name of that folder is taken; anything else is an error.
options:
  _terms:
    description: File names in C(plugins/module_utils), such as C(nvml.py).
    type: list
    elements: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Install the NVML reader beside the exporter
  ansible.builtin.copy:
    content: "{{ lookup('llmhost.vllm.module_utils_source', 'nvml.py') }}"
    dest: /opt/llmhost/gpu-exporter/lib/ansible_collections/llmhost/vllm/plugins/module_utils/nvml.py
    mode: "0644"
"""

RETURN = r"""
_raw:
  description: The text of each file, as it is (trailing newline kept).
  type: list
  elements: str
"""

import os
import re

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils")
_NAME_RE = re.compile(r"[A-Za-z0-9_]+\.py\Z")


def source(name, folder=MODULE_UTILS):
    """The text of ``name`` in ``folder``; a name that is not a plain .py file there is an error."""
    path = os.path.join(folder, str(name))
    if not _NAME_RE.match(str(name)) or not os.path.isfile(path):
        raise AnsibleLookupError("module_utils_source: %r is not a file of the collection's plugins/module_utils" % name)
    with open(path, encoding="utf-8") as handle:
        return handle.read()


class LookupModule(LookupBase):
    """llmhost.vllm lookup module_utils_source."""

    def run(self, terms, variables=None, **kwargs):
        return [source(term) for term in terms]
