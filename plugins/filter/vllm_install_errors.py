# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what vllm_install's verify refuses."""

from __future__ import annotations

DOCUMENTATION = r"""
name: vllm_install_errors
short_description: Refuse a venv without the profile's vLLM, or a source build not built for these GPUs
version_added: 1.0.0
description:
  - The venv's vLLM must be the profile's version (not refused under --check while the venv is not there yet).
  - A source build must be what runs. vLLM's own extensions (C(_C), C(_moe_C)) hold exactly the GPUs' architectures,
    and the others (flash-attention, with an arch policy of its own) hold code that runs on them. PyPI's
    all-architecture wheel of the same version holds sm_70..sm_90a.
  - Logic in C(module_utils/cuda_arch.py).
options:
  _input:
    description: >-
      C(version) (the venv's answer: C(rc), C(stdout), C(stderr)), C(expected), C(check_mode), C(venv), C(method),
      C(files) (the extensions' paths), C(cuobjdump) (whether it is executable), C(cuda_home), C(listings) (the listing
      task's results: C(item) the extension's path, C(stdout) and C(stderr) what cuobjdump listed), C(arch_list) (TORCH_CUDA_ARCH_LIST).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse a venv that is not what the profile asked for
  ansible.builtin.assert:
    that: __errors | length == 0
  vars:
    __errors: "{{ __read | llmhost.vllm.vllm_install_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import cuda_arch
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import plain


def vllm_install_errors(values):
    return cuda_arch.install_errors(plain(values))


class FilterModule:
    """llmhost.vllm install filters."""

    def filters(self):
        return {"vllm_install_errors": vllm_install_errors}
