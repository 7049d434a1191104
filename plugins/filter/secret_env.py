# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the secret-shaped (or the plain) entries of an environment."""

from __future__ import annotations

DOCUMENTATION = r"""
name: secret_env
short_description: The entries of an environment that look like secrets, or those that do not
version_added: 0.1.0
description:
  - A secret by its name (C(KEY), C(TOKEN), C(SECRET), C(PASS), C(PWD), C(AUTH), C(CRED), C(PRIVATE), C(COOKIE),
    C(SESSION), C(SIGNATURE), C(CERT) anywhere in it) or by its value (a URL with credentials, a well-known token
    prefix such as C(hf_) or C(sk-), a JWT, a long run mixing letters and digits).
  - The roles write the secret part to a 0600 file and the rest to a readable one; a wrong guess costs nothing, the
    entry reaches the process either way. Logic in C(module_utils/input_classes.py).
options:
  _input:
    description: The environment, name to value.
    type: dict
    required: true
  secret:
    description: True for the secret-shaped entries, false for the others.
    type: bool
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: The replicas' secrets
  ansible.builtin.debug:
    msg: "{{ (vllm_service_env | llmhost.vllm.secret_env(true)).keys() | list }}"
"""

RETURN = r"""
_value:
  description: The chosen entries, name to value.
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.input_classes import split_env


def secret_env(env, secret):
    return split_env(dict(env or {}), secret)


class FilterModule:
    """llmhost.vllm environment filters."""

    def filters(self):
        return {"secret_env": secret_env}
