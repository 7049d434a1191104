# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what the quantize role refuses once it has read the host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: quantize_errors
short_description: Refuse a model, calibration data or output folder the quantizer cannot use
version_added: 1.0.0
description:
  - A model without a readable config.json (not refused under --check, before the model is fetched), one whose
    architecture the profile's quantizer does not map, or one already quantized.
  - Calibration data without a line that holds a C(text) field.
  - An output folder that is, holds or lies in the model, or that exists without the role's stamp.
  - Logic in C(module_utils/quantize_check.py).
options:
  _input:
    description: >-
      C(source), C(output), C(found) (module C(path_info)'s paths), C(architectures), C(tool), C(calibration),
      C(calibration_text), C(check_mode).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse what the quantizer cannot use
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ __read | llmhost.vllm.quantize_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import quantize_check
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def quantize_errors(values):
    return quantize_check.errors(plain(values))


class FilterModule:
    """llmhost.vllm quantize filters."""

    def filters(self):
        return {"quantize_errors": quantize_errors}
