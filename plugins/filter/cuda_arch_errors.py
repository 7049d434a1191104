# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: what a built extension's CUDA code lacks or holds beyond the TORCH_CUDA_ARCH_LIST it was built for."""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import cuda_arch

DOCUMENTATION = r"""
name: cuda_arch_errors
short_description: Compare the CUDA architectures cuobjdump lists in a shared object with a TORCH_CUDA_ARCH_LIST
version_added: 0.1.0
description:
  - Reads the output of C(cuobjdump --list-elf) (and, for C(+PTX) entries, C(cuobjdump --list-ptx)) of a
    built extension such as vLLM's C(vllm/_C.abi3.so), and says what it lacks of I(arch_list) or holds
    beyond it. Architectures below sm_70, which vLLM does not run on, are set aside (CMake's default
    architecture shows up for files without kernels).
  - The vllm_install role's verify step uses it to prove that the source build, not PyPI's
    all-architecture wheel, is what the venv runs.
options:
  _input:
    description: The output of C(cuobjdump --list-elf FILE), and of C(cuobjdump --list-ptx FILE) after it or in I(ptx).
    type: str
    required: true
  arch_list:
    description: The TORCH_CUDA_ARCH_LIST of the build (C(8.9), C(8.9;9.0a+PTX)).
    type: str
    required: true
  ptx:
    description: The output of C(cuobjdump --list-ptx FILE).
    type: str
    default: ""
  strict:
    description:
      - True for an extension built for exactly I(arch_list) (vLLM's C(_C), C(_moe_C)). Then each arch needs its own
        cubin, and another GPU generation's is an error.
      - False for one with an arch policy of its own (vLLM 0.6.3's flash-attention builds sm_80 and sm_90). Then each
        arch needs code that runs on it (a cubin of the same major and a lower or equal minor, or older PTX), and a
        file without device code passes.
    type: bool
    default: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse an extension built for other GPUs
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "vllm/_C.abi3.so {{ __errors | join('; ') }}"
  vars:
    __errors: "{{ __elf.stdout | llmhost.vllm.cuda_arch_errors('8.9', __ptx.stdout) }}"
"""

RETURN = r"""
_value:
  description: One sentence per mismatch; empty when the listing holds exactly the architectures asked for.
  type: list
  elements: str
"""


def cuda_arch_errors(elf_text, arch_list, ptx="", strict=True):
    return cuda_arch.errors(str(arch_list), str(elf_text or ""), str(ptx or ""), strict=bool(strict))


class FilterModule:
    """llmhost.vllm CUDA architecture filters."""

    def filters(self):
        return {"cuda_arch_errors": cuda_arch_errors}
