#!/usr/bin/env bash
# Runs one Molecule scenario with the services and images it needs.
# usage: molecule.sh container|vm [molecule action, default: test]
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
scenario=${1:?scenario}; action=${2:-test}
# The container scenario's serving stand-in serves vLLM's real metric names, read from the shared
# fixtures beside the checkout (../shared, or LLMHOST_SHARED); without them it cannot run.
export LLMHOST_SHARED=${LLMHOST_SHARED:-$(cd "$REPO_ROOT/.." && pwd)/shared}
if [ "$scenario" = container ] && [ ! -f "$LLMHOST_SHARED/fixtures/vllm/vllm-0.33.0-metric-names.txt" ]; then
  log "the container scenario needs the shared fixtures at $LLMHOST_SHARED (fixtures/vllm/*-metric-names.txt):"
  log "put the project's shared/ folder beside the checkout, or set LLMHOST_SHARED to it"
  exit 77
fi
"$HARNESS_DIR/host-deps.sh" "$scenario"
"$HARNESS_DIR/acng.sh" start
"$HARNESS_DIR/nvrepo.sh" start
# the stand-in repository's signing key, given offline (a key over plain http is refused): the
# container reads it through a file:// key URL, the VM inline
LLMHOST_NVREPO_KEY=$("$HARNESS_DIR/nvrepo.sh" path)/debian12/x86_64/3bf863cc.pub; export LLMHOST_NVREPO_KEY
case "$scenario" in
  container)
    "$HARNESS_DIR/dockerd.sh" start
    "$HARNESS_DIR/hfhub.sh" start
    LLMHOST_CONTAINER_IMAGE=$("$HARNESS_DIR/images.sh" container); export LLMHOST_CONTAINER_IMAGE
    # the quantizer's wheels (current profile, Python 3.11 of Debian 12), mounted into the container
    LLMHOST_QUANTIZE_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/roles/llmhost_stack/files/locks/current-llm-compressor-py311.txt")
    export LLMHOST_QUANTIZE_WHEELS
    # and the seed profile's (AutoAWQ), resolved for Python 3.11 too: a verify test quantizes with it
    LLMHOST_SEED_QUANTIZE_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/roles/llmhost_stack/files/locks/seed-autoawq-py311.txt")
    export LLMHOST_SEED_QUANTIZE_WHEELS
    # the monitoring role's GPU exporter (prometheus_client, nvidia-ml-py)
    LLMHOST_EXPORTER_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/roles/llmhost_stack/files/locks/gpu-exporter.txt")
    export LLMHOST_EXPORTER_WHEELS
    # the benchmark role's venv, and the pinned vLLM release whose benchmarks/benchmark_serving.py it runs (the
    # seed profile's load generator), as the profile names it (URL and sha256)
    LLMHOST_BENCH_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/roles/llmhost_stack/files/locks/bench-py311.txt")
    read -r bench_url bench_sum < <(python3 -c 'import re, sys; t = open(sys.argv[1]).read(); m = re.search(r"^ +script:\n +version: \S+\n +url: (\S+)\n +sha256: (\S+)$", t, re.M); print(m.group(1), m.group(2))' "$REPO_ROOT/roles/llmhost_stack/vars/seed.yml")
    LLMHOST_BENCH_SDIST=$("$HARNESS_DIR/sdist.sh" "$bench_url" "$bench_sum")
    export LLMHOST_BENCH_WHEELS LLMHOST_BENCH_SDIST
    # the source build's tools (setuptools_scm, cmake, wheel) and a CUDA toolkit from NVIDIA's PyPI wheels,
    # for test_vllm_install_source.py (a stand-in vLLM source tree, compiled for real with that nvcc)
    # Ray and what it needs beyond the stand-in lock, for the one-node cluster; the cluster's interface is this
    # machine's default route's (the container shares its network)
    LLMHOST_RAY_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/molecule/_shared/files/ray-lock.txt")
    LLMHOST_CLUSTER_INTERFACE=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i + 1); exit}}')
    export LLMHOST_RAY_WHEELS LLMHOST_CLUSTER_INTERFACE
    LLMHOST_BUILD_WHEELS=$("$HARNESS_DIR/wheels.sh" "$REPO_ROOT/molecule/_shared/files/source-build-lock.txt")
    LLMHOST_CUDA_HOME=$("$HARNESS_DIR/cuda_home.sh" "$REPO_ROOT/molecule/_shared/files/source-build-lock.txt")
    export LLMHOST_BUILD_WHEELS LLMHOST_CUDA_HOME ;;
  vm)
    LLMHOST_VM_IMAGE=$("$HARNESS_DIR/images.sh" vm); export LLMHOST_VM_IMAGE
    LLMHOST_QEMU_ACCEL=$("$HARNESS_DIR/images.sh" accel); export LLMHOST_QEMU_ACCEL
    # Mitogen's strategy plugins, from the venv's own mitogen (molecule/vm/molecule.yml names the strategy)
    LLMHOST_MITOGEN_STRATEGIES=$(python3 -c 'import ansible_mitogen.plugins.strategy as s, os; print(os.path.dirname(s.__file__))')
    export LLMHOST_MITOGEN_STRATEGIES ;;
  *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
cd "$REPO_ROOT"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
exec molecule "$action" -s "$scenario"
