"""STAND-IN of vLLM's source tree, for the source-build test (molecule/_shared/tests/test_vllm_install_source.py).

The vllm_install role builds it exactly as it builds vLLM: `pip wheel --no-deps --no-build-isolation` of the
fetched tag, with TORCH_CUDA_ARCH_LIST and CUDA_HOME in the environment. Like vLLM's CMake build, it compiles
its CUDA code with $CUDA_HOME/bin/nvcc for each architecture in TORCH_CUDA_ARCH_LIST (8.9 -> sm_89 code;
8.9+PTX adds compute_89 PTX) into the extensions vllm/_C.abi3.so and vllm/_moe_C.abi3.so, which the role's
verify reads with cuobjdump. Its version is the VERSION file's (vLLM's comes from its git tag).

Before compiling it takes its dependencies as vLLM 0.6.3's CMake does (clones.txt): flash-attention from
$VLLM_FLASH_ATTN_SRC_DIR when set, else a clone; CUTLASS by a shallow `git clone --branch <tag>` of its
upstream URL, which only the build's gitconfig (GIT_CONFIG_GLOBAL, insteadOf) can turn into a local mirror.
It prints what it got (build.log) and stops when a dependency is missing or empty."""
import os
import re
import shutil
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


def clone(name, url, ref, dest):
    """FetchContent's git step: a shallow clone of one tag (no network here: a mirror or nothing)."""
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", ref, url, dest], check=True, timeout=120,
                   env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
    return "%s cloned from %s at %s" % (name, url, ref)


def take_dependencies(deps_dir):
    """One line per dependency of clones.txt, or SystemExit naming the one that is missing or empty."""
    lines = []
    with open(os.path.join(HERE, "clones.txt"), encoding="utf-8") as clones:
        wanted = [line.split() for line in clones if line.strip() and not line.startswith("#")]
    for name, url, ref in wanted:
        if name == "flash_attn" and os.environ.get("VLLM_FLASH_ATTN_SRC_DIR"):
            where = os.environ["VLLM_FLASH_ATTN_SRC_DIR"]
            lines.append("flash_attn from VLLM_FLASH_ATTN_SRC_DIR=%s" % where)
        else:
            where = os.path.join(deps_dir, name)
            lines.append(clone(name, url, ref, where))
        cutlass = os.path.join(where, "csrc", "cutlass") if name == "flash_attn" else where
        if not os.path.isfile(os.path.join(cutlass, "include", "cutlass", "version.h")):
            raise SystemExit("STAND-IN: %s has no include/cutlass/version.h (an empty submodule?)" % cutlass)
        lines.append("%s's CUTLASS: %s" % (name, open(os.path.join(cutlass, "VERSION"), encoding="utf-8").read().strip()))
    return lines


class NvccBuild(build_ext):
    """Each extension is one shared object that nvcc compiles from csrc/standin.cu."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + ".abi3.so"

    def run(self):
        deps = os.path.join(self.build_temp, "deps")
        shutil.rmtree(deps, ignore_errors=True)
        for line in take_dependencies(deps):
            print("STAND-IN dependency: " + line, flush=True)
        super().run()

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
