#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of the job_wait action (plugins/action/job_wait.py); the work is done on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: job_wait
short_description: Wait for an asynchronous job, printing how far it is once a poll
version_added: 0.1.0
description:
  - Waits for a job started with C(async) and C(poll=0), as C(async_status) in an C(until) loop would, but prints one
    line of progress per poll instead of C(FAILED - RETRYING), with the time so far, ninja's last C([n/N]) step and
    its percentage when the log has one, and the log's last line. One more line when the job has ended, so that a job
    done before the first look still says how long it took and how far it got.
  - Returns the job's own result when it ends (a failed job fails the task); fails when I(timeout) passes first, and
    leaves the job running.
options:
  jid:
    description: The job's id (C(ansible_job_id) of the task that started it).
    type: str
    required: true
  log:
    description:
      - The job's log on the host; its last 4 KiB are read once a poll.
      - One of I(log) and I(size_path) is needed.
    type: path
  size_path:
    description:
      - A folder (or file) the job writes; its size (C(du -sb)) is read once a poll, and the line says bytes done,
        the rate and, with I(size_total), the share and the time left. Takes the place of I(log).
    type: path
  size_total:
    description: Bytes the job will have written when done (0, unknown).
    type: int
    default: 0
  label:
    description: What the job is, at the start of each progress line.
    type: str
    default: job
  poll:
    description: Seconds between two looks (at least 1).
    type: int
    default: 60
  timeout:
    description: Seconds to wait in all (at least one poll).
    type: int
    default: 3600
attributes:
  action:
    support: full
    description: Runs on the controller; it reaches the host only to read the job's status and its log.
  async:
    support: none
    description: It waits for an asynchronous job; it is not one itself.
  check_mode:
    support: none
    description: A job started under check mode does not exist; skip the wait there.
  diff_mode:
    support: none
    description: Changes nothing.
  platform:
    support: full
    platforms: posix
    description: Reads the log with C(tail).
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Build (long)
  ansible.builtin.shell: make all > build.log 2>&1
  async: 21600
  poll: 0
  register: build

- name: Wait for the build
  llmhost.vllm.job_wait:
    jid: "{{ build.ansible_job_id }}"
    log: /var/tmp/build/build.log
    label: vLLM build
    poll: 60
    timeout: 21600

- name: Wait for a download into a folder of known total size
  llmhost.vllm.job_wait:
    jid: "{{ download.ansible_job_id }}"
    size_path: /srv/models/qwen.partial
    size_total: 6170000000
    label: model download
    poll: 30
    timeout: 21600
"""

RETURN = r"""
finished:
  description: 1 when the job ended.
  type: int
  returned: always
waited:
  description: Seconds this task waited.
  type: float
  returned: always
rc:
  description: The job's return code (and its other results, such as stdout and stderr, as the job's module gave them).
  type: int
  returned: when the job ended
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmhost.vllm.plugins.module_utils import progress


def main():
    module = AnsibleModule(argument_spec=progress.JOB_WAIT_SPEC)
    module.fail_json(msg="llmhost.vllm.job_wait is an action: it runs on the controller, never as a module on the host")


if __name__ == "__main__":
    main()
