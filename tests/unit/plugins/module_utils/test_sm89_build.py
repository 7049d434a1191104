"""The real sm_89 build's record (tests/fixtures/build/vllm-0.6.3-sm89, made by tests/build/sm89_proof.sh: vLLM
0.6.3 compiled by the vllm_install role for TORCH_CUDA_ARCH_LIST=8.9) read through the role's own verify check
(filter cuda_arch_errors, as verify.yml calls it), beside PyPI's all-architecture wheel of the same version, and the
figures of its cold build. The record's own figures (cold and warm build) are checked in tests/unit/test_records.py."""
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.filter.cuda_arch_errors import cuda_arch_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import cuda_arch

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"  # from tests/unit/plugins/module_utils/
BUILT = FIXTURES / "build" / "vllm-0.6.3-sm89"
PYPI = FIXTURES / "cuobjdump"
# verify.yml: vLLM's own extensions are strict (exactly the arch list), flash-attention has its own arch policy
STRICT = {"_C": True, "_moe_C": True, "vllm_flash_attn_c": False}


def built(ext):
    return (BUILT / ("%s.list-elf.txt" % ext)).read_text(), (BUILT / ("%s.list-ptx.txt" % ext)).read_text()


@pytest.mark.parametrize("ext", sorted(STRICT))
def test_each_built_extension_passes_verify_and_holds_sm89_alone(ext):
    elf, ptx = built(ext)
    assert cuda_arch_errors(elf + ptx, "8.9", strict=STRICT[ext]) == []
    assert cuda_arch.listed(elf)["ELF"] == {"sm_89"}, elf[:400]
    assert cuda_arch.listed(ptx)["PTX"] == set(), "no PTX: nothing to JIT-compile on another GPU"


@pytest.mark.parametrize("ext", ["_C", "_moe_C"])
def test_pypis_listing_of_the_same_extension_is_refused_by_the_same_check(ext):
    elf = (PYPI / ("vllm-0.6.3-pypi-%s.abi3.list-elf.txt" % ext)).read_text()
    errors = cuda_arch_errors(elf, "8.9", strict=True)
    assert len(errors) == 1 and "beyond TORCH_CUDA_ARCH_LIST=8.9" in errors[0], errors


def test_pypis_flash_attention_holds_no_sm89_cubin_where_the_build_does():
    """PyPI's runs on a 4090 through its sm_80 code (the check passes it); the build carries sm_89's own."""
    pypi = (PYPI / "vllm-0.6.3-pypi-vllm_flash_attn_c.abi3.list-elf.txt").read_text()
    assert cuda_arch_errors(pypi, "8.9", strict=False) == []
    assert "sm_89" not in cuda_arch.listed(pypi)["ELF"]
