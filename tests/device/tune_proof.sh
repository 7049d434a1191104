#!/usr/bin/env bash
# Device proof for playbooks/tune.yml (not part of `make test`; run on a lent 1-GPU machine through the `device` tool):
# real vLLM 0.25.0 held to an RTX 4090's memory budget serves each candidate the tuning makes around the planner's own
# plan for a Qwen3-4B-shaped model (random weights), one after the other on the same port, as tune.yml serves them on
# one replica; each is measured with the benchmark role's client and command line (vllm bench serve, built by
# module_utils/bench.client_argv) on one phase; then the choice and the report, by module_utils/tune.py (the filter's
# and tune_report's code). systemd and Ansible are not on the lent image: the loop is this script's, the decisions
# are the collection's.
#   carry: .dev/p* (chunks of a tar of vLLM 0.25.0's wheels for Python 3.12 and those it needs beyond the lent image,
#          ansible-core's among them; as for tests/device/canary_proof.sh), or .dev/s* (chunks of an xz tar of a folder
#          site2 those wheels were installed into: 219 MB, four calls in place of six)
#   usage: TUNE_PROOF_OUT=/root/tune-proof setsid nohup tests/device/tune_proof.sh &  (then follow $TUNE_PROOF_OUT/done)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
R=${TUNE_PROOF_OUT:-/root/tune-proof}; mkdir -p "$R"; rm -f "$R/done"
LIMIT=${TUNE_PROOF_LIMIT:-6}; SLO_MS=${TUNE_PROOF_SLO_MS:-2000}
# TUNE_PROOF_ONLY="plan seqs_double": serve and measure only these of the candidates (a lease too short for all)
ONLY=${TUNE_PROOF_ONLY:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export STARTED; STARTED=$(date -u +%Y%m%dT%H%M%SZ)
say() { echo "=== $(date +%T) $*" | tee -a "$R/proof.log"; }
finish() { touch "$R/done"; exit "${1:-0}"; }
# the chunks are a tar of the wheels (installed here), or an xz tar of a folder they were installed into (site2)
SITE=/tmp/site
if [ ! -f $SITE/.done ]; then
  mkdir -p /root/parts; for d in "$REPO"/.dev/[ps]*; do [ -d "$d" ] && mv "$d"/* /root/parts/ 2>/dev/null; done
  if head -c 6 /root/parts/chunk.00 | grep -q 7zXZ; then
    mkdir -p /opt/llmhost-proof
    find /root/parts -name 'chunk.*' | sort | xargs cat | tar -C /opt/llmhost-proof -xJf - || { say unpack; finish 3; }
    ln -sfn /opt/llmhost-proof/site2 $SITE
  else
    mkdir -p /root/bundle
    find /root/parts -name 'chunk.*' | sort | xargs cat | tar -C /root/bundle -xf - || { say unpack; finish 3; }
    python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE /root/bundle/*.whl || { say install; finish 4; }
  fi
  touch $SITE/.done
fi
export PYTHONPATH=/tmp/coll:$SITE
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
model=/root/qwen3-4b-shape
[ -f "$model/config.json" ] || python3 "$REPO/tests/device/qwen_shape.py" "$model" >/dev/null || { say shape; finish 5; }
say "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
export TUNE_PROOF_GPU; TUNE_PROOF_GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
TOTAL=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
TABLE=$REPO/tests/fixtures/device/vllm-0.25.0-plans-4090budget/vllm-0.25.0-options.json
python3 "$REPO/tests/device/tune_proof.py" candidates "$TABLE" "$TOTAL" "$LIMIT" "$R" > "$R/argv.txt" || { say candidates; finish 6; }
if [ -n "$ONLY" ]; then
  grep -E "^($(echo "$ONLY" | tr ' ' '|')) " "$R/argv.txt" > "$R/argv.only" && mv "$R/argv.only" "$R/argv.txt"
fi

# one candidate: serve it, wait for /health (or its death), measure one phase, stop it
while read -r name argv; do
  mkdir -p "$R/$name"; start=$(date +%s)
  # shellcheck disable=SC2086  # the plan's argv is whitespace-free words (the plan refuses any other)
  python3 -m vllm.entrypoints.cli.main serve $argv --load-format dummy --port 8000 > "$R/$name/server.log" 2>&1 &
  pid=$!; ok=""
  for _ in $(seq 1 200); do
    curl -sf http://127.0.0.1:8000/health >/dev/null 2>&1 && { ok=yes; break; }
    kill -0 $pid 2>/dev/null || break
    sleep 2
  done
  if [ -z "$ok" ]; then
    { echo "did not start: exit status or timeout; its log ends:"; tail -n 5 "$R/$name/server.log"; } > "$R/$name/error.txt"
    say "$name: did not start"
  else
    say "$name: ready after $(( $(date +%s) - start )) s: $argv"
    python3 - "$R" "$name" > "$R/$name/argv.json" <<'PY'
import json, sys
from ansible_collections.llmhost.vllm.plugins.module_utils import bench
r, name = sys.argv[1], sys.argv[2]
phase = json.load(open(r + "/candidates.json"))["phase"]
print(json.dumps(bench.client_argv("vllm", ["python3", "-m", "vllm.entrypoints.cli.main"], phase,
                                   {"base_url": "http://127.0.0.1:8000", "model": "qwen3-4b-shape",
                                    "tokenizer": "/root/qwen3-4b-shape", "result_dir": r + "/" + name})))
PY
    python3 -c 'import json,os,sys; a=json.load(open(sys.argv[1])); os.execvp(a[0], a)' "$R/$name/argv.json" \
      > "$R/$name/bench.log" 2>&1 || echo "the load generator failed: $(tail -n 3 "$R/$name/bench.log")" > "$R/$name/error.txt"
    say "$name: measured: $(grep -E 'Output token throughput|P95 TTFT' "$R/$name/bench.log" | tr -s ' ' | paste -sd ';')"
  fi
  grep -E "non-default args|Available KV cache memory|GPU KV cache size|Maximum concurrency|Model loading took" \
    "$R/$name/server.log" | cut -c1-400 > "$R/$name/server-lines.txt"
  kill -INT $pid 2>/dev/null; sleep 8; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  rm -f "$R/$name/server.log.gz"; gzip -f "$R/$name/server.log"
done < "$R/argv.txt"
say "decision: $(python3 "$REPO/tests/device/tune_proof.py" decide "$R" "$SLO_MS" 2>&1 | tail -1)"
finish 0
