#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: path_info
short_description: Look at several paths, and read the small files among them, in one round trip
version_added: 0.2.0
description:
  - Says for each path whether it exists, what it is (C(file), C(directory), C(link), C(other)), its size and
    mode; for the paths in O(read) also their text. A C(stat) and a C(slurp) reach the host once each; a role
    that needs five such reads before it decides anything spends most of a re-run's time on them.
  - Read-only. A path that cannot be looked at or read is described with an C(error), never a failure, so the
    role decides what a missing or unreadable file means.
options:
  paths:
    description: Paths to look at (not read). They are used as given (no C(~) or variable expansion), and so are the keys of RV(paths).
    type: list
    elements: str
    default: []
  read:
    description: Paths to look at and, when they are regular files (links followed), read as UTF-8 text (bytes that are not UTF-8 become U+FFFD).
    type: list
    elements: str
    default: []
  read_max:
    description: The largest file read, in bytes; a larger one gets an C(error) instead of its content.
    type: int
    default: 1048576
attributes:
  check_mode:
    support: full
    description: Only reads, in check mode as in a real run.
  diff_mode:
    support: none
    description: Changes nothing.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Read the stamps of the output in place and of the one kept from before, and look at the output folder
  llmhost.vllm.path_info:
    paths: [/srv/llmhost/models/Qwen2.5-3B-Instruct-awq]
    read:
      - /srv/llmhost/models/Qwen2.5-3B-Instruct-awq/llmhost-quantize.json
      - /srv/llmhost/models/Qwen2.5-3B-Instruct-awq.previous/llmhost-quantize.json
  register: __found

- name: Use a stamp when there is one
  ansible.builtin.debug:
    msg: "{{ __found.paths['/srv/llmhost/models/Qwen2.5-3B-Instruct-awq/llmhost-quantize.json'].content | default('{}') | from_json }}"
"""

RETURN = r"""
paths:
  description: Each path given, as given, with what was found there.
  returned: always
  type: dict
  contains:
    exists:
      description: Whether the path exists (a dangling link exists).
      type: bool
    type:
      description: C(file), C(directory), C(link) or C(other), of the path itself (not followed); absent when it does not exist.
      type: str
    size:
      description: Its size in bytes (lstat); absent when it does not exist.
      type: int
    mode:
      description: Its permission bits, as four octal digits; absent when it does not exist.
      type: str
    owner:
      description: The name of the user owning it (its number where the host has no name for it); absent when it does not exist.
      type: str
    group:
      description: The name of its group (its number where the host has no name for it); absent when it does not exist.
      type: str
    content:
      description: The text of a path in O(read) that is a regular file no larger than O(read_max).
      type: str
    error:
      description: Why the path could not be looked at or read.
      type: str
  sample:
    /srv/llmhost/models/m/config.json: {exists: true, type: file, size: 729, mode: "0644", owner: root, group: root, content: "{...}"}
    /srv/llmhost/models/m.previous: {exists: false}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmhost.vllm.plugins.module_utils.path_state import look_all


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="str", default=[]),
            read=dict(type="list", elements="str", default=[]),
            read_max=dict(type="int", default=1 << 20),
        ),
        supports_check_mode=True,
    )
    found = look_all(module.params["paths"], module.params["read"], module.params["read_max"])
    module.exit_json(changed=False, paths=found)


if __name__ == "__main__":
    main()
