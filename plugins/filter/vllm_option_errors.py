# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what `vllm serve`'s own parser would refuse in a list of options, before any host changes."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options

DOCUMENTATION = r"""
name: vllm_option_errors
short_description: Errors vLLM's argument parser would raise for a list of vllm serve options
version_added: 0.1.0
description:
  - Checks options against the option table of one vLLM version (roles/vllm_service/files/vllm-options/,
    written from the real parser by tools/vllm_option_table.py), on the controller, with no GPU and no
    model. The same check as the serving plan's (module_utils/vllm_options.py), so the first play can
    refuse a bad C(vllm_service_extra_args) before anything on the host changes.
  - Unknown or misspelled options, values given to switches, missing values, values outside an option's
    choices, and (with I(refuse_owned)) the options the serving plan owns.
options:
  _input:
    description: The options, as argv tokens (C(["--enable-prefix-caching", "--swap-space", "4"])).
    type: list
    elements: str
    required: true
  table:
    description: The option table (the parsed JSON).
    type: dict
    required: true
  variable:
    description: The variable the options came from; every error names it.
    type: str
    required: true
  refuse_owned:
    description: Refuse the options the serving plan sets (C(--port), C(--api-key), ...), and those that would get around
      it (C(--config), C(--uds), C(--num-gpu-blocks-override), ...).
    type: bool
    default: true
  allow_foreign:
    description: Allow the options that load code from outside vLLM (C(--trust-remote-code), C(--middleware), ...).
    type: bool
    default: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse options vLLM would refuse
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: >-
      {{ vllm_service_extra_args | llmhost.vllm.vllm_option_errors(
           lookup('ansible.builtin.file', 'vllm-options/0.33.0.json') | from_json, 'vllm_service_extra_args') }}
"""

RETURN = r"""
_value:
  description: One sentence per error, each naming I(variable); empty when the options are good.
  type: list
  elements: str
"""


def vllm_option_errors(argv, table, variable, refuse_owned=True, allow_foreign=True):
    """Errors of ``argv`` against ``table`` (see module_utils/vllm_options.validate)."""
    if not isinstance(argv, (list, tuple)):
        raise AnsibleFilterError("%s must be a list of vllm serve arguments, got %s" % (variable, type(argv).__name__))
    if not isinstance(table, dict) or "options" not in table:
        raise AnsibleFilterError("vllm_option_errors: the option table has no 'options' (is it an option table?)")
    return vllm_options.validate(list(argv), table, variable, refuse_owned=bool(refuse_owned),
                                 allow_foreign=bool(allow_foreign))


class FilterModule:
    """llmhost.vllm vLLM option filters."""

    def filters(self):
        return {"vllm_option_errors": vllm_option_errors}
