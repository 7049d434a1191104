"""STAND-IN of vLLM's source tree, for the source-build test (molecule/_shared/tests/test_vllm_install_source.py).

The vllm_install role builds it exactly as it builds vLLM: `pip wheel --no-deps --no-build-isolation` of the
fetched tag, with TORCH_CUDA_ARCH_LIST and CUDA_HOME in the environment. Like vLLM's CMake build, it compiles
its CUDA code with $CUDA_HOME/bin/nvcc for each architecture in TORCH_CUDA_ARCH_LIST (8.9 -> sm_89 code;
8.9+PTX adds compute_89 PTX) into the extensions vllm/_C.abi3.so and vllm/_moe_C.abi3.so, which the role's
verify reads with cuobjdump. Its version is the VERSION file's (vLLM's comes from its git tag)."""
import os
import re
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def gencode_flags(arch_list):
    """nvcc -gencode flags for a TORCH_CUDA_ARCH_LIST such as '8.0;8.9+PTX' (the format torch reads)."""
    flags = []
    for entry in filter(None, re.split(r"[;\s]+", arch_list)):
        match = re.fullmatch(r"(\d+)\.(\d+)(a?)(\+PTX)?", entry)
        if not match:
            raise SystemExit("TORCH_CUDA_ARCH_LIST entry %r is not like 8.9, 9.0a or 8.9+PTX" % entry)
        num = match.group(1) + match.group(2) + match.group(3)
        flags += ["-gencode", "arch=compute_%s,code=sm_%s" % (num, num)]
        if match.group(4):
            flags += ["-gencode", "arch=compute_%s,code=compute_%s" % (num, num)]
    if not flags:
        raise SystemExit("TORCH_CUDA_ARCH_LIST is empty: nothing to compile for")
    return flags


class NvccBuild(build_ext):
    """Each extension is one shared object that nvcc compiles from csrc/standin.cu."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + ".abi3.so"

    def build_extension(self, ext):
        out = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        nvcc = os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")
        cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", out, *ext.sources,
               *gencode_flags(os.environ.get("TORCH_CUDA_ARCH_LIST", ""))]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


with open(os.path.join(HERE, "VERSION"), encoding="utf-8") as version_file:
    VERSION = version_file.read().strip()

setup(
    name="vllm",
    version=VERSION,
    description="STAND-IN of vLLM's source tree for the source-build test (a CUDA extension, no engine)",
    packages=["vllm"],
    ext_modules=[Extension("vllm._C", ["csrc/standin.cu"]), Extension("vllm._moe_C", ["csrc/standin.cu"])],
    cmdclass={"build_ext": NvccBuild},
)
