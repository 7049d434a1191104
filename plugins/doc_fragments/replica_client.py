# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation shared by the modules that ask vLLM's servers on the host (vllm_ready, canary_probe)."""

from __future__ import annotations


class ModuleDocFragment:
    """The options of module_utils/http_fetch.py's client."""

    DOCUMENTATION = r"""
options:
  api_key:
    description: Sent as a bearer token (C(Authorization) header) to the servers' C(/v1/) endpoints when they want one.
    type: str
    default: ""
  request_timeout:
    description: Seconds one HTTP request may take (a first completion compiles kernels).
    type: int
    default: 120
"""
