# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One line of progress for a long job, from the end of its log: ninja's ``[n/N]`` step when the log has
one (a CMake build), and the log's last line."""

from __future__ import annotations

import re

_STEP = re.compile(r"\[(\d+)/(\d+)\]")
_WIDTH = 100


def last_step(text):
    """(done, total) of the last ninja step in text, or None."""
    steps = _STEP.findall(text or "")
    return (int(steps[-1][0]), int(steps[-1][1])) if steps else None


def last_line(text):
    """The log's last line that is not empty, stripped and cut to a console line's width."""
    for line in reversed((text or "").splitlines()):
        line = " ".join(line.split())
        if line:
            return line if len(line) <= _WIDTH else line[:_WIDTH - 3] + "..."
    return ""


def summary(label, elapsed, tail):
    """'<label>: 12 min, step 412/1030 (40%): <last line>' (the step part only when the log has one)."""
    minutes = int(elapsed // 60)
    took = "%d min" % minutes if minutes else "%d s" % int(elapsed)
    step = last_step(tail)
    where = ", step %d/%d (%d%%)" % (step[0], step[1], 100 * step[0] // step[1]) if step and step[1] else ""
    line = last_line(tail)
    return "%s: %s%s%s" % (label, took, where, ": " + line if line else "")


def _unit(size):
    """GiB for a size of a GiB or more, MiB below: (divisor, name)."""
    return (1073741824.0, "GiB") if size >= 1073741824 else (1048576.0, "MiB")


def size_summary(label, elapsed, done, total):
    """'<label>: 3 min, 1.2 of 6.2 GiB (19%), 6.8 MiB/s, about 12 min left' from bytes written so far."""
    minutes = int(elapsed // 60)
    took = "%d min" % minutes if minutes else "%d s" % int(elapsed)
    rate = done / elapsed if elapsed > 0 else 0.0
    div, unit = _unit(max(total, done))
    line = "%s: %s, %.1f" % (label, took, done / div)
    if total:
        line += " of %.1f %s (%d%%)" % (total / div, unit, min(100, 100 * done // total))
    else:
        line += " " + unit
    line += ", %.1f MiB/s" % (rate / 1048576.0)
    if total and rate > 0 and done < total:
        left = (total - done) / rate
        line += ", about %s left" % ("%d min" % (left // 60 + 1) if left >= 60 else "%d s" % (left + 1))
    return line


# The job_wait action's arguments (plugins/action/job_wait.py validates with it; plugins/modules/job_wait.py,
# its documentation, declares it).
JOB_WAIT_SPEC = {
    "jid": {"type": "str", "required": True},
    "log": {"type": "path"},
    "size_path": {"type": "path"},
    "size_total": {"type": "int", "default": 0},
    "label": {"type": "str", "default": "job"},
    "poll": {"type": "int", "default": 60},
    "timeout": {"type": "int", "default": 3600},
}
