# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: mistyped variables and tags, named with the closest known spelling."""

from __future__ import annotations

DOCUMENTATION = r"""
name: typo_errors
short_description: Refuse variables with a role's prefix that no role knows, and tags that no task carries
version_added: 0.1.0
description:
  - Ansible ignores a variable nobody reads and a tag nobody carries, so C(-e vllm_service_max_model_length=8192)
    or C(--tags vllm_serivce) run with rc 0 and do nothing. This filter names each, with the closest known spelling.
  - A variable no role knows is refused when it starts with a role's name and an underscore (C(vllm_service_),
    C(model_), ...), mistypes such a prefix (C(vllm_serivce_port)), or is near a declared name (C(llmhost_stak));
    others (a user's own, far from every declared name) pass. It is known when a role declares it
    (C(meta/argument_specs.yml)), defines it (C(defaults/), C(vars/)), sets it (C(set_fact)) or registers it, or
    is a play-wide switch (C(llmhost_reports_dir), C(llmhost_allow_unknown_vars)). The name meant counts a word
    left out as near (C(vllm_service_port) is C(vllm_service_base_port)). A tag is known when a task file or
    playbook of the collection carries it.
  - Reads the collection's own files on the controller, in the copy this filter belongs to.
  - Returns one sentence per typo; an empty list when there is none.
options:
  _input:
    description: The names of the host's variables (C(hostvars[inventory_hostname].keys())).
    type: list
    elements: str
    required: true
  run_tags:
    description: C(ansible_run_tags).
    type: list
    elements: str
    default: []
  skip_tags:
    description: C(ansible_skip_tags).
    type: list
    elements: str
    default: []
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse mistyped variables and tags
  ansible.builtin.assert:
    that: __typos | length == 0
    fail_msg: "{{ __typos | join('; ') }}"
  vars:
    __typos: >-
      {{ hostvars[inventory_hostname].keys() | list
         | llmhost.vllm.typo_errors(ansible_run_tags, ansible_skip_tags) }}
"""

RETURN = r"""
_value:
  description: Sentences such as C(vllm_service_max_model_length is not a variable of any role of llmhost.vllm
    (did you mean vllm_service_max_model_len?)).
  type: list
  elements: str
"""

import glob
import os

from ansible_collections.llmhost.vllm.plugins.module_utils import typos
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import first_play_files, load_yaml

# This collection's root: plugins/filter/ is two levels below it, in a checkout as in an installed copy.
COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def typo_errors(names, run_tags=None, skip_tags=None, collection_dir=COLLECTION_DIR):
    root = str(collection_dir)
    files = first_play_files(root)
    known = typos.known_names(load_yaml(*files["specs"]), load_yaml(*files["values"]), load_yaml(*files["steps"]))
    prefixes = typos.role_prefixes(os.path.basename(p) for p in glob.glob(os.path.join(root, "roles", "*")))
    return (typos.var_errors([str(n) for n in names or ()], known["vars"], prefixes)
            + typos.tag_errors(run_tags, skip_tags, known["tags"]))


class FilterModule:
    """llmhost.vllm typo filters."""

    def filters(self):
        return {"typo_errors": typo_errors}
