# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A report's files in its run folder (the modules bench_report and tune_report): each written to a temporary name
beside it and renamed, so that nothing half-written is left; the charts drawn into a temporary folder first."""

from __future__ import annotations

import os
import tempfile


def write(module, path, text):
    """``text`` into ``path`` (mode 0644), through a temporary file in the same folder and AnsibleModule's rename."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    module.atomic_move(tmp, path)


def charts(module, run_dir, draw, warnings):
    """``draw(folder)`` (the chart files' names) into a temporary folder of ``run_dir``, then each renamed into it;
    without matplotlib, a warning and no chart."""
    tmp = tempfile.mkdtemp(dir=run_dir, prefix=".charts-")
    try:
        names = draw(tmp)
    except ImportError as exc:
        warnings.append("charts not drawn: %s (the benchmark venv has matplotlib)" % exc)
        names = []
    for name in names:
        module.atomic_move(os.path.join(tmp, name), os.path.join(run_dir, name))
    os.rmdir(tmp)
    return names
