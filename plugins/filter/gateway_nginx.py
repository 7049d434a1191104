# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: where the gateway's nginx and njs come from."""

from __future__ import annotations

DOCUMENTATION = r"""
name: gateway_nginx
short_description: Where the gateway's nginx and its JavaScript module (njs) come from on this host
version_added: 0.1.0
description:
  - C(auto) takes the distribution's packages (C(nginx), C(libnginx-mod-http-js)) where its archive has njs, and
    nginx.org's own repository (C(nginx), C(nginx-module-njs)) where it has not (Ubuntu 22.04).
  - C(distribution) on Ubuntu 22.04, and C(nginx.org) on a distribution nginx.org has no packages for, come back
    with a sentence in C(error).
  - Logic in C(module_utils/gateway.py).
options:
  _input:
    description: I(gateway_nginx_source), one of C(auto), C(distribution), C(nginx.org).
    type: str
    required: true
  facts:
    description: C(ansible_facts) (distribution, distribution_version, distribution_release).
    type: dict
    required: true
  packages:
    description: I(gateway_packages); empty means the source's own.
    type: list
    elements: str
    default: []
  repo_url:
    description: I(gateway_nginx_repo_url); empty means C(https://nginx.org/packages/<debian|ubuntu>/).
    type: str
    default: ""
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle where nginx comes from
  ansible.builtin.set_fact:
    __gateway_nginx: "{{ gateway_nginx_source | llmhost.vllm.gateway_nginx(ansible_facts, gateway_packages, gateway_nginx_repo_url) }}"
"""

RETURN = r"""
_value:
  description: C(source) (distribution or nginx.org), C(packages), C(repo) (C(url), C(suite), C(component)) or none,
    C(error) (a sentence) or none.
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import nginx_source


def gateway_nginx(wish, facts, packages=None, repo_url=""):
    return nginx_source(str(wish), dict(facts or {}), list(packages or []), str(repo_url or ""))


class FilterModule:
    """llmhost.vllm gateway filters."""

    def filters(self):
        return {"gateway_nginx": gateway_nginx}
