# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way the modules find and run nvidia-smi: an executable file, C locale, never raising."""

from __future__ import annotations

import os


# The options of a module that reads the GPUs (doc fragment gpu_sources): where nvidia-smi is, and whether to try NVML.
GPU_SOURCE_ARGS = {"nvidia_smi": {"type": "path"}, "use_nvml": {"type": "bool", "default": True}}


def find(module, path=None):
    """Return (the nvidia-smi to run or None, a note or None): ``path`` when it is an executable file,
    else nvidia-smi from PATH."""
    if not path:
        return module.get_bin_path("nvidia-smi"), None
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path, None
    return None, "nvidia_smi=%s is not an executable file; nvidia-smi was not used." % path


def runner(module):
    """A run(argv) -> (rc, stdout, stderr) in the C locale, so that numbers and messages parse."""
    def run(argv):
        return module.run_command(argv, environ_update={"LC_ALL": "C"})
    return run
