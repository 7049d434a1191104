#!/usr/bin/env bash
# The sm_89 build proof: vLLM 0.6.3 (the seed profile's) compiled by the vllm_install role's own tasks for
# TORCH_CUDA_ARCH_LIST=8.9 (an RTX 4090), with no GPU and no GitHub, on a 2-core machine; then rebuilt from
# scratch with ccache warm. No stand-in: the real sdist, the real flash-attention and CUTLASS sources
# (../shared/sources), torch 2.4.0 from the seed's lock, and a real CUDA 12.4 nvcc.
#
# Where: a Debian 12 chroot (mmdebstrap) under $LLMHOST_SM89_DIR, with Debian 13's nvidia-cuda-toolkit 12.4
# (the toolchain vLLM 0.6.3's own Dockerfile uses) installed inside it, never on this machine: it pulls
# trixie's libc6. The role reaches the chroot through community.general.chroot, so its apt, user, venv,
# build and verify tasks run there exactly as on a host.
#
# Resumable: each phase leaves a marker in $LLMHOST_SM89_DIR/state; the build's CMake folder and ccache
# live under vllm_install_build_dir inside the chroot, so a run cut off mid-build picks up where it was.
# The summary (no binaries) goes to tests/fixtures/build/vllm-0.6.3-sm89/.
# usage: tests/build/sm89_proof.sh            (hours on 2 cores; run it under nohup, with setsid to stop it:)
#   setsid nohup nice -n 15 tests/build/sm89_proof.sh > /var/tmp/sm89.out 2>&1 &
#   kill -- -<its pid>     (its process group; never `pkill -f ninja` or the like: the host sees the test
#                           containers' processes too, and a name match kills their apt or builds)
# It takes about 3.2 CPU-hours cold: start it first in a session, and run no Molecule layer beside it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
D=${LLMHOST_SM89_DIR:-/var/tmp/llmhost-sm89}
R=$D/root
S=$D/state
SHARED=${LLMHOST_SHARED:-$repo/../shared}
OUTDIR=$repo/tests/fixtures/build/vllm-0.6.3-sm89
SDIST_URL=https://files.pythonhosted.org/packages/17/76/dbcad9e8b8cfefc446e18abd09d1ba4580e870f06b9ee839efda5b05864d/vllm-0.6.3.tar.gz
SDIST_SHA=03e69029ad9caceaab68d5c3833ae6fe57c04be678ec37f29e9df6eaf178a9c5
BUILD=/var/tmp/llmhost-vllm-build      # vllm_install_build_dir inside the chroot (the role's default)
HOME_DIR=/opt/llmhost/vllm             # vllm_install_home (the role's default)
mkdir -p "$S" "$OUTDIR"
log() { printf '[sm89 %(%H:%M:%S)T] %s\n' -1 "$*"; }

# 1. The chroot: Debian 12, then trixie non-free's CUDA 12.4 toolkit pinned low.
command -v mmdebstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap
if [ ! -f "$S/chroot" ]; then
  log "making the Debian 12 chroot in $R"
  # The build's own tools (the role's apt list) come from bookworm first; then -t trixie takes the toolkit and
  # upgrades, as one coherent set, what it needs (libc6 2.41, perl, gcc-13 for nvcc). Without the tools already
  # there, trixie's libc6 would leave bookworm's build-essential uninstallable for the role.
  [ -f "$R/.base" ] || mmdebstrap --variant=apt --include=python3,python3-venv,python3.11-dev,build-essential,git,ninja-build,ccache,ca-certificates,procps \
    bookworm "$R" http://deb.debian.org/debian
  touch "$R/.base"
  echo "deb http://deb.debian.org/debian trixie main contrib non-free" > "$R/etc/apt/sources.list.d/trixie.list"
  printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n' > "$R/etc/apt/preferences.d/trixie"
  chroot "$R" apt-get update -q
  [ -d "$D/debs" ] && cp "$D"/debs/*.deb "$R/var/cache/apt/archives/"   # an earlier attempt's downloads
  DEBIAN_FRONTEND=noninteractive chroot "$R" apt-get install -y -q --no-install-recommends -t trixie \
    nvidia-cuda-toolkit nvidia-cuda-dev
  touch "$S/chroot"
fi

# 2. The offline sources, checked, where the role's variables will name them.
src=$R/srv/llmhost-sources
if [ ! -f "$S/sources" ]; then
  log "placing the offline sources in $src"
  mkdir -p "$src"
  (cd "$SHARED/sources" && sha256sum -c --quiet SHA256SUMS)
  cp "$SHARED"/sources/*.tar.gz "$src/"
  [ -f "$src/vllm-0.6.3.tar.gz" ] || python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
    "$SDIST_URL" "$src/vllm-0.6.3.tar.gz"
  echo "$SDIST_SHA  $src/vllm-0.6.3.tar.gz" | sha256sum -c --quiet
  touch "$S/sources"
fi

# This machine's CA bundle: a network that intercepts TLS (as this workplace's does) signs with a CA of its own,
# which the chroot's pip and git must trust as the machine does.
cp /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/ca-certificates.crt"

# The build needs /proc (nproc, meminfo), /sys and /dev; unmounted on every exit.
for m in proc sys dev; do mountpoint -q "$R/$m" || mount --bind "/$m" "$R/$m"; done
trap 'for m in dev sys proc; do umount -l "$R/$m" 2>/dev/null || true; done' EXIT

release=$(sed -n 's/^VERSION_ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$R/etc/os-release")
VARS=$(cat <<JSON
{"llmhost_stack": "seed",
 "llmhost_stack_overrides": {"os": {"Debian": ["$release"]}, "python": {"version": "3.11", "package": "python3.11-venv"}},
 "vllm_install_method": "source", "vllm_install_arch_list": "8.9", "vllm_install_cuda_home": "/usr",
 "vllm_install_vllm_src": "/srv/llmhost-sources/vllm-0.6.3.tar.gz",
 "vllm_install_flash_attn_src": "/srv/llmhost-sources/vllm-flash-attn-013f0c4f.tar.gz",
 "vllm_install_flash_attn_cutlass_src": "/srv/llmhost-sources/cutlass-v3.4.0.tar.gz",
 "vllm_install_cutlass_src": "/srv/llmhost-sources/cutlass-v3.5.1.tar.gz",
 "vllm_install_build_timeout": 43200, "vllm_install_build_poll": 60}
JSON
)

# Peak memory in use on the machine (MemTotal - MemAvailable) while the role runs, sampled every 5 s.
sample_memory() { # file (a resumed run starts from the peak an earlier attempt recorded)
  local peak used
  peak=$(cat "$1" 2>/dev/null || echo 0)
  while sleep 5; do
    used=$(awk '/^MemTotal/{t=$2} /^MemAvailable/{a=$2} END{printf "%.0f\n", (t-a)*1024}' /proc/meminfo)
    [ "$used" -gt "$peak" ] && peak=$used && echo "$peak" > "$1"
  done
}

run_role() { # name: one run of the role, timed; its log and figures in $S
  local name=$1 t0 t1 sampler
  log "running the vllm_install role ($name); build log: $R$BUILD/build.log"
  sample_memory "$S/$name.peak" & sampler=$!
  t0=$(date +%s)
  (cd "$repo" && ANSIBLE_COLLECTIONS_PATH=$repo/.cache/collections .venv/bin/ansible-playbook \
    -i "$R," -c community.general.chroot -e ansible_python_interpreter=/usr/bin/python3 \
    -e "$VARS" tests/build/sm89.yml) 2>&1 | tee "$S/$name.log"
  local rc=${PIPESTATUS[0]}
  t1=$(date +%s); kill "$sampler" 2>/dev/null || true
  echo $((t1 - t0)) >> "$S/$name.seconds"   # one line per attempt: a resumed build adds its part
  return "$rc"
}


ccache_stats() { chroot "$R" env CCACHE_DIR=$BUILD/ccache ccache --print-stats; }
ninja_log() { chroot "$R" sh -c "cat $BUILD/src/build/temp.*/.ninja_log"; }

# What the figures were measured under.
conditions() {
  local log=$R$BUILD/build.log
  python3 - "$log" "$R" <<'PY'
import json, os, re, subprocess, sys
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
chroot = lambda *a: subprocess.run(["chroot", sys.argv[2], *a], capture_output=True, text=True).stdout.strip()
grab = lambda pattern: (re.search(pattern, log) or [None, None])[1]
print(json.dumps({
    "machine": {"cpus": os.cpu_count(), "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "gpu": None},
    "toolkit": "Debian 13 nvidia-cuda-toolkit " + chroot("dpkg-query", "-W", "-f=${Version}", "nvidia-cuda-toolkit"),
    "nvcc": grab(r"CUDA compiler identification is NVIDIA (\S+)"),
    "cxx": grab(r"CXX compiler identification is (GNU \S+)"),
    "python": chroot("/opt/llmhost/vllm/venv/bin/python", "-c", "import platform; print(platform.python_version())"),
    "torch": chroot("/opt/llmhost/vllm/venv/bin/python", "-c", "import torch; print(torch.__version__)"),
    "ccache": chroot("ccache", "--version").splitlines()[0],
    "torch_cuda_arch_list": grab(r"CUDA target architectures: (\S+)"),
    "max_jobs": int(grab(r"Using MAX_JOBS=(\d+)") or 0),
    "nvcc_threads": int(grab(r"Using NVCC_THREADS=(\d+)") or 0),
    "niceness": os.nice(0),
}, indent=2, sort_keys=True))
PY
}

# 3. The cold build: the role from a bare chroot (ccache empty). cold.built: the role's run that built and
# verified the wheel is over (its seconds are in cold.seconds).
if [ ! -f "$S/cold" ]; then
  [ -f "$S/cold.started" ] || { chroot "$R" sh -c "rm -rf $BUILD $HOME_DIR /var/cache/llmhost"; touch "$S/cold.started"; }
  [ -f "$S/cold.built" ] || { run_role cold; touch "$S/cold.built"; }
  ccache_stats > "$OUTDIR/ccache-cold.txt"
  ninja_log > "$OUTDIR/ninja_log-cold.txt"
  conditions > "$S/conditions.json"
  touch "$S/cold"
fi

# 4. The record of the cold build's result, read from the installed extensions.
record() {
  local site=$HOME_DIR/venv/lib/python3.11/site-packages
  mkdir -p "$OUTDIR"
  for so in _C _moe_C _core_C vllm_flash_attn/vllm_flash_attn_c; do
    f=$(chroot "$R" sh -c "ls $site/vllm/$so.*.so" 2>/dev/null) || continue
    n=$(basename "$so")
    chroot "$R" cuobjdump --list-elf "$f" > "$OUTDIR/$n.list-elf.txt" 2>&1 || true
    chroot "$R" cuobjdump --list-ptx "$f" > "$OUTDIR/$n.list-ptx.txt" 2>&1 || true
  done
  chroot "$R" sh -c "cd $BUILD/src/build && for t in _C _moe_C _core_C vllm_flash_attn_c; do \
    echo \"\$t \$(find . -path \"*CMakeFiles/\$t.dir/*\" -name '*.o' | wc -l)\"; done" > "$OUTDIR/objects.txt"
  chroot "$R" sh -c "ls -l /var/cache/llmhost/wheels/*/vllm-*.whl" > "$OUTDIR/wheel.txt"
}

# 5. The rebuild from scratch with ccache warm: source tree, CMake folder, wheel and install stamp gone.
if [ ! -f "$S/warm" ]; then
  [ -f "$S/warm.started" ] || {
    record
    chroot "$R" sh -c "rm -rf $BUILD/src $BUILD/sources /var/cache/llmhost/wheels $HOME_DIR/install-stamp.json \
      && CCACHE_DIR=$BUILD/ccache ccache --zero-stats"
    touch "$S/warm.started"; }
  run_role warm
  ccache_stats > "$OUTDIR/ccache-warm.txt"
  ninja_log > "$OUTDIR/ninja_log-warm.txt"
  touch "$S/warm"
fi

# 6. The summary the unit tests read.
python3 "$here/sm89_summary.py" "$S" "$OUTDIR"
log "done: $OUTDIR"
