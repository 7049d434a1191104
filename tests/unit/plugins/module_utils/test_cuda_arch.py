"""The installed-extension check of the source build (module_utils/cuda_arch.py, filter cuda_arch_errors)
on real cuobjdump listings of PyPI's vLLM 0.6.3 extensions (tests/fixtures/cuobjdump/README.md)."""
from pathlib import Path

from ansible_collections.llmhost.vllm.plugins.filter.cuda_arch_errors import cuda_arch_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import cuda_arch

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "cuobjdump"
ELF = (FIX / "vllm-0.6.3-pypi-_C.abi3.list-elf.txt").read_text()
PTX = (FIX / "vllm-0.6.3-pypi-_C.abi3.list-ptx.txt").read_text()
MOE = (FIX / "vllm-0.6.3-pypi-_moe_C.abi3.list-elf.txt").read_text()
FLASH = (FIX / "vllm-0.6.3-pypi-vllm_flash_attn_c.abi3.list-elf.txt").read_text()
CORE = (FIX / "vllm-0.6.3-pypi-_core_C.abi3.list-elf.txt").read_text()


def test_the_listing_is_read_whole():
    found = cuda_arch.listed(ELF)
    assert found["ELF"] == {"sm_52", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}
    assert cuda_arch.listed(PTX)["PTX"] == {"sm_52"}
    assert len([line for line in ELF.splitlines() if line.startswith("ELF file")]) == 173


def test_pypis_all_arch_wheel_is_refused_for_a_4090_build():
    errors = cuda_arch_errors(ELF, "8.9", PTX)
    assert len(errors) == 1 and "holds sm_70, sm_75, sm_80, sm_86, sm_90, sm_90a beyond TORCH_CUDA_ARCH_LIST=8.9" in errors[0]
    assert "sm_52" not in errors[0]


def test_the_arch_list_pypi_built_for_matches():
    assert cuda_arch_errors(ELF, "7.0;7.5;8.0;8.6;8.9;9.0;9.0a", PTX) == []
    assert cuda_arch_errors(MOE, "7.0;7.5;8.0;8.6;8.9;9.0") == []


def test_a_build_for_one_arch_passes_and_lacks_are_named():
    sm89 = "ELF file    1: _C.abi3.1.sm_89.cubin\nELF file    2: _C.abi3.2.sm_89.cubin\n"
    assert cuda_arch_errors(sm89, "8.9") == []
    assert cuda_arch_errors(sm89, "8.9;9.0") == ["lacks sm_90, which TORCH_CUDA_ARCH_LIST=8.9;9.0 asks for"]
    assert "lacks the PTX of sm_89" in cuda_arch_errors(sm89, "8.9+PTX", "")[0]
    assert cuda_arch_errors(sm89, "8.9+PTX", "PTX file    1: _C.abi3.1.sm_89.ptx") == []


def test_a_cpu_only_or_empty_listing_is_not_a_cuda_build():
    assert "no CUDA code" in cuda_arch_errors("", "8.9")[0]
    assert "no CUDA code" in cuda_arch_errors("cuobjdump info    : File 'x.so' does not contain device code", "8.9")[0]


def test_one_text_with_both_listings_reads_as_two():
    assert cuda_arch_errors(ELF + PTX, "7.0;7.5;8.0;8.6;8.9;9.0;9.0a") == []
    sm89 = "ELF file    1: _C.abi3.1.sm_89.cubin\nPTX file    1: _C.abi3.1.sm_89.ptx\n"
    assert cuda_arch_errors(sm89, "8.9+PTX") == []


def test_flash_attention_follows_its_own_arch_policy():
    """Not strict: sm_80 code runs on an RTX 4090 (8.9) and on an RTX 3090 (8.6); nothing runs on a V100 (7.0)."""
    assert cuda_arch_errors(FLASH, "8.9", strict=False) == []
    assert cuda_arch_errors(FLASH, "8.6;9.0", strict=False) == []
    assert cuda_arch_errors(FLASH, "7.0", strict=False) == ["has no code that runs on sm_70 (it holds sm_80, sm_90)"]
    assert len(cuda_arch_errors(FLASH, "8.9")) == 2  # strict, it would be refused: lacks sm_89, holds sm_80, sm_90


def test_a_file_without_device_code_passes_only_when_not_strict():
    assert cuda_arch_errors(CORE, "8.9", strict=False) == []
    assert "no CUDA code" in cuda_arch_errors(CORE, "8.9")[0]
    assert cuda_arch_errors("PTX file    1: x.1.sm_80.ptx", "8.9", strict=False) == []  # PTX is JIT-compiled


SITE = "/opt/llmhost/vllm/venv/lib/python3.10/site-packages/vllm/"
PYPI = [{"item": SITE + "_C.abi3.so", "stdout": ELF, "stderr": PTX},
        {"item": SITE + "vllm_flash_attn/vllm_flash_attn_c.abi3.so", "stdout": FLASH, "stderr": ""}]
INSTALLED = {"version": {"rc": 0, "stdout": "0.6.3\n", "stderr": ""}, "expected": "0.6.3", "check_mode": False,
             "venv": "/opt/llmhost/vllm/venv", "method": "source", "files": [r["item"] for r in PYPI],
             "cuobjdump": True, "cuda_home": "/usr/local/cuda", "listings": PYPI, "arch_list": "7.0;7.5;8.0;8.6;8.9;9.0;9.0a"}


def installed(**change):
    return cuda_arch.install_errors(dict(INSTALLED, **change))


def test_the_verify_takes_pypis_wheel_for_its_own_arch_list_and_refuses_it_for_a_4090():
    assert installed(listings=PYPI[:1]) == []  # flash-attention holds no sm_70, sm_75 code
    got = installed(arch_list="8.9")
    assert len(got) == 1 and got[0].startswith(SITE + "_C.abi3.so ") and "sm_90" in got[0]
    assert installed(arch_list="8.9", method="wheel") == []


def test_the_verify_refuses_another_vllm_and_an_uncheckable_build():
    assert installed(version={"rc": 0, "stdout": "0.7.0", "stderr": ""})[0] == (
        "/opt/llmhost/vllm/venv holds vLLM 0.7.0 (), not the profile's 0.6.3.")
    assert "holds vLLM none (No module" in installed(version={"rc": 1, "stdout": "", "stderr": "No module named x"})[0]
    assert installed(version={"rc": 1, "stdout": "", "stderr": ""}, check_mode=True) == []
    assert "has 0 vllm/_C extension(s)" in installed(files=[])[0]
    assert "/usr/local/cuda/bin/cuobjdump is missing (vllm_install_cuda_home)" in installed(cuobjdump=False)[0]
