# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: nginx.org's repository and key, as apt will use them."""

from __future__ import annotations

DOCUMENTATION = r"""
name: nginx_repo_errors
short_description: Refuse a repository URL or a signing key URL of nginx.org's that apt cannot use safely
version_added: 0.1.0
description:
  - The repository URL lands in apt's source, so it is a URL or an absolute path that cannot start another line or setting.
  - The key URL decides what apt trusts, so the same holds and it is never plain C(http://) (C(https://) or C(file:///) only).
  - Logic in C(module_utils/gateway.py) and C(module_utils/value_checks.py).
options:
  _input:
    description: I(gateway_nginx_repo_url); empty means nginx.org's own.
    type: str
    required: true
  key_url:
    description: I(gateway_nginx_repo_key_url).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse a repository or key apt cannot use safely
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ gateway_nginx_repo_url | llmhost.vllm.nginx_repo_errors(gateway_nginx_repo_key_url) }}"
"""

RETURN = r"""
_value:
  description: One sentence per bad value, naming its variable; an empty list when both are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import nginx_repo_errors


class FilterModule:
    """llmhost.vllm gateway repository filters."""

    def filters(self):
        return {"nginx_repo_errors": nginx_repo_errors}
