#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: files_and_folders
short_description: Write files whole, with their attributes and the folders they go in, in one round trip
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
  - O(files) settles several files in the same single run on the host, one after the other in the order given
    (a later file's O(files[].validate) sees the earlier ones in place). Each file is replaced atomically on its
    own; the first one that fails stops the run, and the files before it stay written.
  - O(directories) makes the folders the files go in, in the same run and before any file, so that a re-run of an
    unchanged host reaches it once for folders and files together.
options:
  path:
    description: The file to write. Its folder must exist or be one of O(directories). Give O(path) and O(content), or O(files).
    type: path
    aliases: [dest]
  content:
    description: The whole content, as text (written as UTF-8).
    type: str
  validate:
    description: A command run on the new content before it replaces O(path); C(%s) is the temporary file's path.
    type: str
  files:
    description:
      - Several files, each with its own O(files[].path) and O(files[].content). O(owner), O(group) and O(mode)
        given to the task are every file's; a file may give its own O(files[].mode).
    type: list
    elements: dict
    suboptions:
      path:
        description: The file to write. Its folder must exist or be one of O(directories).
        type: path
        required: true
      content:
        description: The whole content, as text (written as UTF-8).
        type: str
        required: true
      validate:
        description: As O(validate), for this file.
        type: str
      mode:
        description: As O(mode), for this file.
        type: raw
  directories:
    description:
      - Folders made before any file is written, in the order given, each with its missing parents (which get
        the same attributes, as C(ansible.builtin.file) gives them). A folder in place is given the attributes
        when they differ. A path that exists and is no folder fails the run before any file is written.
      - A new folder is made owner-only (C(0700)) and given its attributes before its mode opens it.
    type: list
    elements: dict
    suboptions:
      path:
        description: The folder.
        type: path
        required: true
      mode:
        description: The folder's mode (a folder never takes the files' O(mode)).
        type: raw
        required: true
      owner:
        description: The folder's owner; the task's O(owner) when not given.
        type: str
      group:
        description: The folder's group; the task's O(group) when not given.
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
  llmhost.vllm.files_and_folders:
    path: /etc/sysctl.d/90-llmhost.conf
    content: "{{ lookup('ansible.builtin.template', 'sysctl.conf.j2') }}"
    owner: root
    group: root
    mode: "0644"

- name: Write pip's sources (0600) and the lock beside a venv, in one round trip
  llmhost.vllm.files_and_folders:
    files:
      - {path: /opt/llmhost/vllm/pip.conf, content: "{{ lookup('ansible.builtin.template', 'pip.conf.j2') }}", mode: "0600"}
      - {path: /opt/llmhost/vllm/requirements.lock, content: "{{ lock }}"}
    owner: root
    group: root
    mode: "0644"
  no_log: true

- name: Make the folder (and its parents) and write a root-only token in it, in one round trip
  llmhost.vllm.files_and_folders:
    directories:
      - {path: /etc/llmhost, mode: "0755"}
    path: /etc/llmhost/hf-token
    content: "{{ hf_token }}\n"
    owner: root
    group: root
    mode: "0600"
  no_log: true

- name: Write Prometheus's rules, checked by promtool before they replace the old ones
  llmhost.vllm.files_and_folders:
    path: /etc/prometheus/rules/llmhost.yml
    content: "{{ lookup('ansible.builtin.template', 'rules.yml.j2') }}"
    mode: "0644"
    validate: promtool check rules %s
"""

RETURN = r"""
path:
  description: The file written.
  returned: with O(path)
  type: str
  sample: /etc/sysctl.d/90-llmhost.conf
content_changed:
  description: Whether the content differed (or the file was missing).
  returned: with O(path)
  type: bool
checksum:
  description: SHA-1 of the new content, as C(ansible.builtin.copy) returns it.
  returned: with O(path)
  type: str
previous_checksum:
  description: SHA-1 of the content the file held before (null when it did not exist).
  returned: with O(path)
  type: str
files:
  description: With O(files), each file's RV(path), RV(content_changed), RV(checksum), RV(previous_checksum) and C(changed), in order.
  returned: with O(files)
  type: list
  elements: dict
directories:
  description: With O(directories), each folder's C(path), C(created) (it or a parent was missing) and C(changed).
  returned: with O(directories)
  type: list
  elements: dict
  sample: [{path: /etc/llmhost, created: false, changed: false}]
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


def file_args_for(module, params, path):
    """The owner/group/mode/SELinux arguments of ``params``, aimed at ``path`` (the file or its temporary file)."""
    return module.load_file_common_arguments(params, path=path)


def validate(module, command, tmp_path):
    """Run the validate command on the temporary file; fail (leaving the old file) when it refuses."""
    if "%s" not in command:
        module.fail_json(msg="validate must contain %%s: %s" % command)
    rc, out, err = module.run_command(command % tmp_path)
    if rc != 0:
        module.fail_json(msg="validate refused the new content (rc %d): %s" % (rc, err or out), stdout=out, stderr=err)


def replace(module, params, tmp_path, data):
    """Rename the temporary file over the path; where a rename cannot work (a file bind-mounted into a
    container: EBUSY) and unsafe_writes allows it, write in place instead, as Ansible's file modules do."""
    path = params["path"]
    try:
        os.replace(tmp_path, path)
    except OSError as err:
        if err.errno not in (errno.EBUSY, errno.EXDEV) or not module.params["unsafe_writes"]:
            module.fail_json(msg="could not rename the new content over %s: %s" % (path, err))
        with open(path, "wb") as out:
            out.write(data)
        module.set_fs_attributes_if_different(file_args_for(module, params, path), False)


def write_new(module, params, data):
    """Temporary file in the same folder, its attributes set, validated, then renamed over the path."""
    path = params["path"]
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        module.fail_json(msg="the folder of %s does not exist" % path)
    handle, tmp_path = tempfile.mkstemp(dir=folder, prefix=".%s." % os.path.basename(path))
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        module.set_fs_attributes_if_different(file_args_for(module, params, tmp_path), False)
        if params["validate"]:
            validate(module, params["validate"], tmp_path)
        replace(module, params, tmp_path, data)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)


def settle(module, params):
    """Make params["path"] hold params["content"] with params' attributes. Returns (changed, result, diff)."""
    path = params["path"]
    data = to_bytes(params["content"], errors="surrogate_or_strict")
    try:
        current = read_current(path)
    except ValueError as err:
        module.fail_json(msg=str(err))
    result = {"path": path, "checksum": hashlib.sha1(data).hexdigest(), "content_changed": current != data,
              "previous_checksum": hashlib.sha1(current).hexdigest() if current is not None else None}
    diff = {"before_header": path, "after_header": path}
    if result["content_changed"]:
        diff.update(before=(current or b"").decode("utf-8", "replace"), after=data.decode("utf-8", "replace"))
        if not module.check_mode:
            write_new(module, params, data)
        return True, result, diff
    return module.set_fs_attributes_if_different(file_args_for(module, params, path), False, diff), result, diff


def dir_params(module, entry, path):
    """The attribute arguments of one O(directories) entry (its owner and group, else the task's), aimed at
    ``path``: the folder or one of the parents made for it."""
    params = dict(module.params, mode=entry["mode"])
    params.update((key, entry[key]) for key in ("owner", "group") if entry[key] is not None)
    return file_args_for(module, params, path)


def missing_parts(path):
    """The folders of ``path`` that do not exist, outermost first; refuses a part that exists as no folder."""
    missing = []
    while not os.path.isdir(path):
        if os.path.lexists(path):
            raise ValueError("%s exists and is no folder" % path)
        missing.insert(0, path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def settle_dir(module, entry):
    """Make one O(directories) entry's folder (and its missing parents), each given the entry's attributes.
    Returns (changed, result, diff)."""
    path = entry["path"].rstrip("/") or "/"
    try:
        missing = missing_parts(path)
    except ValueError as err:
        module.fail_json(msg=str(err))
    diff = {"before_header": path, "after_header": path}
    if missing:
        diff.update(before={"path": path, "state": "absent"}, after={"path": path, "state": "directory"})
    for part in missing if not module.check_mode else []:
        os.mkdir(part, 0o700)
        module.set_fs_attributes_if_different(dir_params(module, entry, part), False)
    changed = bool(missing) or module.set_fs_attributes_if_different(dir_params(module, entry, path), False, diff)
    return changed, {"path": path, "created": bool(missing), "changed": changed}, diff


def each_file(module):
    """The parameters of every file to settle: the task's own, or one set per O(files) entry (its mode,
    else the task's)."""
    if not module.params["files"]:
        return [module.params]
    specs = []
    for entry in module.params["files"]:
        params = dict(module.params, validate=None, files=None)
        params.update((key, value) for key, value in entry.items() if value is not None)
        specs.append(params)
    return specs


def run(module):
    # no_log on content keeps it out of the host's log (written when the module starts); past that
    # point Ansible would also blank it out of every message and of the diff.
    specs = each_file(module)
    for params in specs:
        module.no_log_values.discard(params["content"])
    folders = [settle_dir(module, entry) for entry in module.params["directories"] or []]
    settled = [settle(module, params) for params in specs]
    changed = any(item[0] for item in folders + settled)
    if module.params["files"]:
        result = {"files": [dict(item[1], changed=item[0]) for item in settled]}
        diff = [item[2] for item in settled]
    else:
        result, diff = settled[0][1], settled[0][2]
    if module.params["directories"]:
        result["directories"] = [item[1] for item in folders]
        diff = [item[2] for item in folders] + (diff if isinstance(diff, list) else [diff])
    if module._diff:
        result["diff"] = diff
    module.exit_json(changed=changed, invocation={"module_args": shown_args(module)}, **result)


def hidden(content):
    """A content as the task's output shows it: its size and checksum only."""
    data = to_bytes(content, errors="surrogate_or_strict")
    return "(%d bytes, sha1 %s)" % (len(data), hashlib.sha1(data).hexdigest())


def shown_args(module):
    """The arguments as the task's output shows them: every content by its size and checksum only (the
    diff may show it; a task holding a secret sets no_log itself)."""
    if module.params["files"]:
        return dict(module.params, files=[dict(entry, content=hidden(entry["content"])) for entry in module.params["files"]])
    return dict(module.params, content=hidden(module.params["content"]))


FILE_OPTIONS = dict(
    path=dict(type="path", required=True),
    content=dict(type="str", required=True, no_log=True),
    validate=dict(type="str"),
    mode=dict(type="raw"),
)

DIR_OPTIONS = dict(
    path=dict(type="path", required=True),
    mode=dict(type="raw", required=True),
    owner=dict(type="str"),
    group=dict(type="str"),
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", aliases=["dest"]),
            content=dict(type="str", no_log=True),
            validate=dict(type="str"),
            files=dict(type="list", elements="dict", options=FILE_OPTIONS),
            directories=dict(type="list", elements="dict", options=DIR_OPTIONS),
        ),
        add_file_common_args=True,
        required_one_of=[("path", "files")],
        mutually_exclusive=[("path", "files"), ("content", "files"), ("validate", "files")],
        required_together=[("path", "content")],
        supports_check_mode=True,
    )
    run(module)


if __name__ == "__main__":
    main()
