# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP client for the modules that ask vLLM's servers and Prometheus on the host (vllm_ready, canary_probe):
Ansible's own (no proxy, no redirects), handed to the pure logic as ``fetch(method, url, body) -> (status, text)``."""

from __future__ import annotations

import json

from ansible.module_utils.urls import open_url
from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError


def make_fetch(api_key, request_timeout):
    """fetch(method, url, body) -> (status, text) over Ansible's HTTP client; status 0 when nothing answered. A body
    is sent as JSON; the API key, when there is one, as a bearer token."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = "Bearer " + api_key

    def fetch(method, url, body):
        data = json.dumps(body) if body is not None else None
        try:
            response = open_url(url, method=method, data=data, headers=headers, timeout=request_timeout,
                                use_proxy=False, follow_redirects="none")
            return response.getcode(), response.read().decode("utf-8", "replace")
        except HTTPError as err:
            return err.code, err.read().decode("utf-8", "replace") if err.fp else ""
        except (URLError, OSError, ValueError) as err:
            return 0, str(err)
    return fetch
