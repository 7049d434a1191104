#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: file_content
short_description: Write a file's whole content and attributes in one round trip
version_added: 0.2.0
description:
  - Makes O(path) hold exactly O(content), with the wanted owner, group and mode, for content rendered on the
    controller (a C(template) lookup) or given inline.
  - C(ansible.builtin.template) and C(ansible.builtin.copy) reach a host twice even when nothing changes (a stat,
    then the file module for the attributes). This module compares and settles both in one run of the module,
    which is most of what a re-run of an unchanged host costs.
  - A new content is written to a temporary file in the same folder, given its owner, group and mode, checked with
    O(validate) when given, and only then renamed over O(path). Nothing half-written and no file with looser
    permissions than asked is ever visible at O(path).
  - O(content) is never logged on the host, nor shown in the task's output (it may hold a secret). Use C(no_log)
    on the task as well when the diff would show one.
options:
  path:
    description: The file to write. Its folder must exist.
    type: path
    required: true
    aliases: [dest]
  content:
    description: The whole content, as text (written as UTF-8).
    type: str
    required: true
  validate:
    description: A command run on the new content before it replaces O(path); C(%s) is the temporary file's path.
    type: str
extends_documentation_fragment:
  - ansible.builtin.files
attributes:
  check_mode:
    support: full
    description: Reports what would change without writing.
  diff_mode:
    support: full
    description: Shows the old and new content, and the attributes that change.
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Write the sysctl drop-in from a role template, in one round trip
  llmhost.vllm.file_content:
    path: /etc/sysctl.d/90-llmhost.conf
    content: "{{ lookup('ansible.builtin.template', 'sysctl.conf.j2') }}"
    owner: root
    group: root
    mode: "0644"

- name: Write Prometheus's rules, checked by promtool before they replace the old ones
  llmhost.vllm.file_content:
    path: /etc/prometheus/rules/llmhost.yml
    content: "{{ lookup('ansible.builtin.template', 'rules.yml.j2') }}"
    mode: "0644"
    validate: promtool check rules %s
"""

RETURN = r"""
path:
  description: The file written.
  returned: always
  type: str
  sample: /etc/sysctl.d/90-llmhost.conf
content_changed:
  description: Whether the content differed (or the file was missing).
  returned: always
  type: bool
checksum:
  description: SHA-1 of the new content, as C(ansible.builtin.copy) returns it.
  returned: always
  type: str
"""

import errno
import hashlib
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes


def read_current(path):
    """The file's bytes, or None when it does not exist; refuses a folder."""
    if os.path.isdir(path):
        raise ValueError("%s is a folder" % path)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def file_args_for(module, path):
    """The owner/group/mode/SELinux arguments, aimed at another path (the temporary file)."""
    args = module.load_file_common_arguments(module.params)
    args["path"] = path
    return args


def validate(module, tmp_path):
    """Run the validate command on the temporary file; fail (leaving the old file) when it refuses."""
    command = module.params["validate"]
    if "%s" not in command:
        module.fail_json(msg="validate must contain %%s: %s" % command)
    rc, out, err = module.run_command(command % tmp_path)
    if rc != 0:
        module.fail_json(msg="validate refused the new content (rc %d): %s" % (rc, err or out), stdout=out, stderr=err)


def replace(module, tmp_path, path, data):
    """Rename the temporary file over path; where a rename cannot work (a file bind-mounted into a
    container: EBUSY) and unsafe_writes allows it, write in place instead, as Ansible's file modules do."""
    try:
        os.replace(tmp_path, path)
    except OSError as err:
        if err.errno not in (errno.EBUSY, errno.EXDEV) or not module.params["unsafe_writes"]:
            module.fail_json(msg="could not rename the new content over %s: %s" % (path, err))
        with open(path, "wb") as out:
            out.write(data)
        module.set_fs_attributes_if_different(file_args_for(module, path), False)


def write_new(module, path, data):
    """Temporary file in the same folder, its attributes set, validated, then renamed over path."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        module.fail_json(msg="the folder of %s does not exist" % path)
    handle, tmp_path = tempfile.mkstemp(dir=folder, prefix=".%s." % os.path.basename(path))
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        module.set_fs_attributes_if_different(file_args_for(module, tmp_path), False)
        if module.params["validate"]:
            validate(module, tmp_path)
        replace(module, tmp_path, path, data)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)


def run(module):
    # no_log on content keeps it out of the host's log (written when the module starts); past that
    # point Ansible would also blank it out of every message and of the diff.
    module.no_log_values.discard(module.params["content"])
    path = module.params["path"]
    data = to_bytes(module.params["content"], errors="surrogate_or_strict")
    try:
        current = read_current(path)
    except ValueError as err:
        module.fail_json(msg=str(err))
    result = {"path": path, "checksum": hashlib.sha1(data).hexdigest(), "content_changed": current != data}
    diff = {"before_header": path, "after_header": path}
    if result["content_changed"]:
        diff.update(before=(current or b"").decode("utf-8", "replace"), after=data.decode("utf-8", "replace"))
        if not module.check_mode:
            write_new(module, path, data)
        changed = True
    else:
        changed = module.set_fs_attributes_if_different(file_args_for(module, path), False, diff)
    if module._diff:
        result["diff"] = diff
    module.exit_json(changed=changed, invocation={"module_args": shown_args(module, data)}, **result)


def shown_args(module, data):
    """The arguments as the task's output shows them: the content by its size and checksum only (the
    diff may show it; a task holding a secret sets no_log itself)."""
    return dict(module.params, content="(%d bytes, sha1 %s)" % (len(data), hashlib.sha1(data).hexdigest()))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True, aliases=["dest"]),
            content=dict(type="str", required=True, no_log=True),
            validate=dict(type="str"),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    run(module)


if __name__ == "__main__":
    main()
