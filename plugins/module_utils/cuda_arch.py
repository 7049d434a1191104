# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which CUDA architectures a built extension holds, against the TORCH_CUDA_ARCH_LIST it was built for.

The input is what ``cuobjdump --list-elf`` and ``cuobjdump --list-ptx`` print for a shared object,
lines like ``ELF file    1: _C.abi3.1.sm_89.cubin`` and ``PTX file    1: _C.abi3.1.sm_89.ptx``.
A source build for an RTX 4090 (``8.9``) must hold sm_89 code and no other GPU generation's: finding
sm_70 ... sm_90a is the sign of PyPI's all-architecture wheel, installed instead of the build.
Architectures below sm_70 are set aside: vLLM runs on none of them, and CMake's default architecture
(sm_52) shows up for files that carry no kernels (tests/fixtures/cuobjdump/README.md)."""

from __future__ import annotations

import re

_ENTRY = re.compile(r"^(ELF|PTX) file\s+\d+:\s+\S*?\.(sm_\d+[a-z]?)\.(?:cubin|ptx)\s*\Z")
_ARCH = re.compile(r"^(\d+)\.(\d+)([a-z]?)(\+PTX)?\Z")
OLDEST_SUPPORTED = 70


def listed(text):
    """{"ELF": {"sm_89", ...}, "PTX": {...}} from cuobjdump --list-elf / --list-ptx output."""
    out = {"ELF": set(), "PTX": set()}
    for line in (text or "").splitlines():
        m = _ENTRY.match(line.strip())
        if m:
            out[m.group(1)].add(m.group(2))
    return out


def wanted(arch_list):
    """(cubin arches, ptx arches) that TORCH_CUDA_ARCH_LIST asks for: "8.9;9.0a+PTX" -> ({sm_89, sm_90a}, {sm_90a})."""
    cubins, ptx = set(), set()
    for item in re.split(r"[;\s]+", (arch_list or "").strip()):
        m = _ARCH.match(item)
        if not m:
            continue
        sm = "sm_%s%s%s" % (m.group(1), m.group(2), m.group(3))
        cubins.add(sm)
        if m.group(4):
            ptx.add(sm)
    return cubins, ptx


def _number(sm):
    return int(re.match(r"sm_(\d+)", sm).group(1))


def _runs_on(sm, found_cubins, found_ptx):
    """True when code for sm is there: a cubin of the same major version and a minor not above it
    (cubins run on later minors of their major), or PTX of a version not above it (JIT-compiled)."""
    major, minor = divmod(_number(sm), 10)
    cubin = any(divmod(_number(c), 10)[0] == major and divmod(_number(c), 10)[1] <= minor for c in found_cubins)
    return cubin or any(_number(p) <= _number(sm) for p in found_ptx)


def errors(arch_list, listing, ptx_listing="", strict=True):
    """Sentences on what the listing (--list-elf and --list-ptx output, together or apart) lacks of
    arch_list, or (strict) holds beyond it; empty when they match.

    strict: the extension is built for exactly TORCH_CUDA_ARCH_LIST (vLLM's own _C and _moe_C), so
    every arch needs its own cubin, and another GPU generation's cubin is an error. Not strict: the
    extension follows an arch policy of its own (vLLM 0.6.3's flash-attention builds sm_80 and sm_90,
    whose sm_80 code runs on sm_86 and sm_89), so each arch only needs code that runs on it, and a
    file without any device code passes."""
    cubins, ptx = wanted(arch_list)
    found = listed(listing)["ELF"]
    found_ptx = listed(listing)["PTX"] | listed(ptx_listing)["PTX"]
    if not strict:
        if not found and not found_ptx:
            return []
        lacking = sorted(a for a in cubins if not _runs_on(a, found, found_ptx))
        return ["has no code that runs on %s (it holds %s)" % (", ".join(lacking), ", ".join(sorted(found | found_ptx)))] if lacking else []
    out = []
    if not found:
        return ["no CUDA code found (cuobjdump listed no cubin): not a CUDA build"]
    missing = sorted(cubins - found)
    if missing:
        out.append("lacks %s, which TORCH_CUDA_ARCH_LIST=%s asks for" % (", ".join(missing), arch_list))
    extra = sorted(a for a in found - cubins if _number(a) >= OLDEST_SUPPORTED)
    if extra:
        out.append("holds %s beyond TORCH_CUDA_ARCH_LIST=%s: not the build for these GPUs (PyPI's all-architecture "
                   "wheel?)" % (", ".join(extra), arch_list))
    if ptx - found_ptx:
        out.append("lacks the PTX of %s (+PTX in TORCH_CUDA_ARCH_LIST)" % ", ".join(sorted(ptx - found_ptx)))
    return out


# vLLM's own extensions, built for exactly TORCH_CUDA_ARCH_LIST; the others have an arch policy of their own.
OWN_EXTENSION = re.compile(r"_(moe_)?C[.]")


def install_errors(v):
    """What vllm_install's verify refuses: a venv without the profile's vLLM (``version``: rc, stdout, stderr of the
    venv's answer; ``expected``; not refused under --check when the venv is not there yet) and, for a source build,
    one _C extension, cuobjdump to read it (``cuobjdump``: executable, under ``cuda_home``), and each extension
    (``listings``: the listing command's results: ``item`` the path, ``stdout`` and ``stderr`` cuobjdump's output)
    built for ``arch_list``."""
    version = v["version"]
    if version["rc"] != 0 and v["check_mode"]:
        return []
    found = (version.get("stdout") or "").strip()
    if found != v["expected"]:
        return ["%s holds vLLM %s (%s), not the profile's %s."
                % (v["venv"], found or "none", (version.get("stderr") or "").strip()[:300], v["expected"])]
    if v["method"] != "source":
        return []
    own = [p for p in v["files"] if re.search(r"/vllm/_C[.]", p)]
    if len(own) != 1 or not v["cuobjdump"]:
        return ["%s has %d vllm/_C extension(s), and %s/bin/cuobjdump %s: the source build cannot be checked."
                % (v["venv"], len(own), v["cuda_home"],
                   "is there" if v["cuobjdump"] else "is missing (vllm_install_cuda_home)")]
    out = []
    for result in sorted(v["listings"], key=lambda r: r["item"]):
        path, listing = result["item"], "\n".join([result.get("stdout") or "", result.get("stderr") or ""])
        found_errors = errors(v["arch_list"], listing, strict=bool(OWN_EXTENSION.match(path.rsplit("/", 1)[-1])))
        out += ["%s %s" % (path, "; ".join(found_errors))] if found_errors else []
    return out
