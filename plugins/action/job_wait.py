# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action: wait for an asynchronous job and say, once a poll, how far it is (the module's documentation is in
plugins/modules/job_wait.py)."""

from __future__ import annotations

import time

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.llmhost.vllm.plugins.module_utils import progress

display = Display()

SPEC = progress.JOB_WAIT_SPEC


class ActionModule(ActionBase):
    """async_status every poll seconds until the job ends; at each look, and once when it has ended, one line: from the
    end of its log, or the size of the folder it writes."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(SPEC)

    def _status(self, jid, task_vars):
        async_dir = self.get_shell_option("async_dir", default="~/.ansible_async")
        return self._execute_module(module_name="ansible.legacy.async_status", task_vars=task_vars,
                                    module_args={"jid": jid, "mode": "status", "_async_dir": async_dir})

    def _tail(self, path, task_vars):
        """The last 4 KiB of the log (empty while there is none): enough for ninja's last step and a line."""
        out = self._execute_module(module_name="ansible.legacy.command", task_vars=task_vars,
                                   module_args={"argv": ["tail", "-c", "4096", path]})
        return out.get("stdout", "") if out.get("rc") == 0 else ""

    def _size(self, path, task_vars):
        """Bytes under path (du -sb), 0 while there is nothing."""
        out = self._execute_module(module_name="ansible.legacy.command", task_vars=task_vars,
                                   module_args={"argv": ["du", "-sb", path]})
        words = out.get("stdout", "").split()
        return int(words[0]) if out.get("rc") == 0 and words and words[0].isdigit() else 0

    def _progress(self, args, elapsed, task_vars):
        if args["size_path"]:
            return progress.size_summary(args["label"], elapsed, self._size(args["size_path"], task_vars), args["size_total"])
        return progress.summary(args["label"], elapsed, self._tail(args["log"], task_vars))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        validated = ArgumentSpecValidator(SPEC).validate(self._task.args)
        if validated.error_messages:
            raise AnsibleActionFail("; ".join(validated.error_messages))
        args = validated.validated_parameters
        if not (args["log"] or args["size_path"]):
            raise AnsibleActionFail("job_wait needs log (a build log to read) or size_path (a folder being written)")
        if args["poll"] < 1 or args["timeout"] < args["poll"]:
            raise AnsibleActionFail("poll=%s, timeout=%s: poll at least 1 s, timeout at least one poll"
                                    % (args["poll"], args["timeout"]))
        host = (task_vars or {}).get("inventory_hostname", "")
        start = time.monotonic()
        while True:
            status = self._status(args["jid"], task_vars)
            elapsed = time.monotonic() - start
            if status.get("finished") or (status.get("failed") and "started" not in status):
                # one line at the end too: a job that ended before the first look still says how long and how far
                display.display("%s | %s" % (host, self._progress(args, elapsed, task_vars)))
                result.update(status)
                result["waited"] = round(elapsed, 1)
                return result
            if elapsed >= args["timeout"]:
                result.update(failed=True, finished=0, waited=round(elapsed, 1),
                              msg="%s still running after %d s (the job goes on)" % (args["label"], elapsed))
                return result
            display.display("%s | %s" % (host, self._progress(args, elapsed, task_vars)))
            time.sleep(args["poll"])
