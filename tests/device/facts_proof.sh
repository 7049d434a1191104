#!/usr/bin/env bash
# Device proof for the facts modules (run on a lent GPU machine through the `device` tool; not
# part of `make test`). Read-only: it never calls gpu_clocks and changes no GPU setting.
#   carry: .whl (ansible-core and resolvelib wheels for Python 3.12)
#   writes to $OUT: the modules' results through Ansible, an NVML dump made by our collector,
#   nvidia-smi's outputs for comparison, and timings (gpu_facts vs nvidia-smi -q -x, 10 runs each).
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/proof; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
# everything goes into one tarball: the device tool returns at most 8 files
REPO=$(cd "$(dirname "$0")/../.." && pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$REPO"/.whl/*.whl || exit 1
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
export PYTHONPATH=/tmp/site:/tmp/coll ANSIBLE_COLLECTIONS_PATH=/tmp/coll PATH=/tmp/site/bin:$PATH
export ANSIBLE_LOAD_CALLBACK_PLUGINS=1 ANSIBLE_STDOUT_CALLBACK=ansible.builtin.minimal ANSIBLE_LOCALHOST_WARNING=0
PY=$(command -v python3)
name=$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1)x
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi topo -p2p r; } > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,compute_cap,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,persistence_mode,power.limit,power.min_limit,power.max_limit,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,temperature.gpu \
  --format=csv > "$OUT/query.csv" 2>&1
for m in gpu_facts numa_facts gpu_clock_info; do
  timeout 120 "$PY" -m ansible adhoc localhost -i localhost, -c local -e "ansible_python_interpreter=$PY" -m "llmhost.vllm.$m" \
    > "$OUT/$m.txt" 2> "$OUT/$m.err"
  echo "$m rc=$?"
done
# The NVML dump our collector makes (the same shape as tests/fixtures/hosts/*/nvml.json).
timeout 120 "$PY" - > "$OUT/nvml-dump.json" 2> "$OUT/nvml-dump.err" <<'PY'
import faulthandler, json, sys, pynvml
faulthandler.dump_traceback_later(60, exit=True)
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml
print(json.dumps(nvml.collect(pynvml, clocks=True), indent=1, sort_keys=True))
PY
echo "nvml dump rc=$?"
# Timing: the module as the target runs it (python3 + module file + args) against nvidia-smi -q -x.
echo '{"ANSIBLE_MODULE_ARGS": {}}' > /tmp/args.json
"$PY" - > "$OUT/timing.json" <<PY
import json, statistics, subprocess, time
def t(cmd):
    s = []
    for _ in range(10):
        a = time.perf_counter(); subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False); s.append(time.perf_counter() - a)
    return s
mod = t(["$PY", "$REPO/plugins/modules/gpu_facts.py", "/tmp/args.json"])
smi = t(["nvidia-smi", "-q", "-x"])
print(json.dumps({"gpu_facts_s": mod, "nvidia_smi_qx_s": smi, "median_gpu_facts_s": statistics.median(mod),
                  "median_nvidia_smi_qx_s": statistics.median(smi), "ratio": statistics.median(mod) / statistics.median(smi)}, indent=1))
PY
"$PY" "$REPO/plugins/modules/gpu_facts.py" /tmp/args.json > "$OUT/gpu_facts_direct.json" 2>&1
grep -E "median|ratio" "$OUT/timing.json"
"$PY" "$REPO/tests/device/profile_facts.py" > "$OUT/profile.json" 2>&1; cat "$OUT/profile.json"
tar czf "$FINAL/proof.tgz" -C "$OUT" .
echo "host: $name; python $($PY --version)"
