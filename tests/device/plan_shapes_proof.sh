#!/usr/bin/env bash
# Device proof (not part of `make test`): every one-GPU plan of the serving plan's unit-test shapes starts and answers
# under real vLLM 0.25.0 held to an RTX 4090's memory budget, and the weight estimate against vLLM's own "Model loading
# took ... GiB" for a dense, an AWQ and a mixture-of-experts shape (random weights, --load-format dummy).
#   carry: .dev/p (chunk.* of site.tar.xz: vLLM 0.25.0 and the wheels the lent image lacks, a site folder)
#   usage: setsid nohup tests/device/plan_shapes_proof.sh > /root/proof.out 2>&1 &   (then follow /root/done)
#   out:   /root/res/proof.log (a summary line per case), server-lines.txt, vllm-0.25.0-options.json, servers.tar.gz
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
RES=/root/res; mkdir -p "$RES"; rm -f /root/done   # not $OUT: the device tool empties that before each call
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
SITE=/opt/llmhost-proof/site
say() { echo "=== $(date +%T) $*" | tee -a "$RES/proof.log"; }

mkdir -p /root/parts && mv "$REPO"/.dev/p/chunk.* /root/parts/ 2>/dev/null
if [ ! -d $SITE/vllm ]; then
  mkdir -p /opt/llmhost-proof
  if ! cat /root/parts/chunk.* | tar -C /opt/llmhost-proof -xJf -; then say "unpack failed"; exit 3; fi
fi
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
export PYTHONPATH=$SITE:/tmp/coll
TOTAL=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
say "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
VLLM_TARGET_DEVICE=cuda python3 "$REPO/tools/vllm_option_table.py" parser > "$RES/vllm-0.25.0-options.json" \
  2> "$RES/table.err" || { say "option table failed"; exit 4; }
python3 "$REPO/tests/device/plan_shapes.py" folders /root/shapes > /dev/null || { say "folders failed"; exit 5; }

# serve CASE ARGV...: start, wait for /health (or death), one chat answer, the start-up lines, stop.
serve() {
  local case=$1; shift
  local log=/root/logs/server-$case.log; mkdir -p /root/logs
  local start; start=$(date +%s)
  python3 -m vllm.entrypoints.cli.main serve "$@" --load-format dummy --port 8000 > "$log" 2>&1 &
  local pid=$! ok=""
  for _ in $(seq 1 240); do
    curl -sf http://127.0.0.1:8000/health > /dev/null 2>&1 && { ok=yes; break; }
    kill -0 $pid 2> /dev/null || break
    sleep 2
  done
  local answer="no answer"
  if [ -n "$ok" ]; then
    answer=$(curl -s http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \
      -d "{\"model\": \"$case\", \"messages\": [{\"role\": \"user\", \"content\": \"w1 w2 w3\"}], \"max_tokens\": 8}" \
      | python3 -c 'import json,sys; r=json.load(sys.stdin); print("answered: %d tokens, finish %s" % (r["usage"]["completion_tokens"], r["choices"][0]["finish_reason"]))' 2>&1 | tail -1)
  fi
  say "$case: ${ok:+ready after $(( $(date +%s) - start )) s; }$answer"
  { echo "== $case"; echo "argv: $*";
    grep -E "Model loading took|Available KV cache memory|GPU KV cache size|Maximum concurrency|Graph capturing finished|Using .* backend|quantization|Error|error:" "$log" | grep -v "^\s*$" | cut -c1-400 | head -20
  } >> "$RES/server-lines.txt"
  kill -INT $pid 2> /dev/null; sleep 8; kill -9 $pid 2> /dev/null; wait $pid 2> /dev/null
}

# plan CASE SHAPE [WISHES]: the shape's plan for one RTX 4090 (make_plan), its argv rescaled to this GPU, served.
plan() {
  local case=$1 shape=$2 wishes=${3:-}
  local out; out=$(python3 "$REPO/tests/device/plan_shapes.py" plan "$shape" "$RES/vllm-0.25.0-options.json" "$TOTAL" "$wishes")
  say "$case plan: $(echo "$out" | head -1)"
  # shellcheck disable=SC2046  # the argv is whitespace-free words (the plan refuses any other)
  serve "$case" $(echo "$out" | tail -1 | sed "s/--served-model-name $shape/--served-model-name $case/")
}

plan qwen3-8b qwen3-8b
plan qwen3-8b-bf16 qwen3-8b '{"weight_format": "bf16"}'
plan qwen2.5-32b-awq qwen2.5-32b-awq
plan qwen2.5-3b qwen2.5-3b
# the mixture of experts does not fit a 4090 (the plan refuses it): its loading, on more of this GPU
serve qwen3-30b-a3b-fp8 /root/shapes/qwen3-30b-a3b --served-model-name qwen3-30b-a3b-fp8 --quantization fp8 \
  --gpu-memory-utilization 0.6 --max-model-len 4096 --enforce-eager
serve qwen3-30b-a3b-bf16 /root/shapes/qwen3-30b-a3b --served-model-name qwen3-30b-a3b-bf16 \
  --gpu-memory-utilization 0.9 --max-model-len 4096 --enforce-eager
tar -C /root/logs -czf "$RES/servers.tar.gz" .
say "done"
touch /root/done
