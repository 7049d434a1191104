#!/usr/bin/env bash
# Device proof: the seed quantizer's output (AutoAWQ 0.2.6, made on the CPU by the quantize role's worker,
# roles/quantize/files/llmhost_quantize.py) loaded by real vLLM 0.25.0 on a lent GPU, which answers a
# completion. Not part of `make test`.
#   carry: .dev/site.tar.xz.* (vLLM 0.25.0 and the wheels the lent image lacks) and .dev/awq.tar.* (the
#          AutoAWQ output folder, tar split in parts), over several calls: each call moves what it
#          carried to /root/parts, and the last one runs.
#   usage: awq_proof.sh stage | run     -> $OUT/awq-proof.log, serve.log, completion.json
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
mkdir -p /root/parts && mv "$REPO"/.dev/site.tar.xz.* "$REPO"/.dev/awq.tar.* /root/parts/ 2>/dev/null
ls -la /root/parts
[ "${1:-}" = run ] || exit 0
LOG=$FINAL/awq-proof.log
exec > >(tee -a "$LOG") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
SITE=/opt/llmhost-proof/site
say() { echo "=== $(date +%T) $*"; }
say "machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; uname -r
if [ ! -f $SITE/.done ]; then
  say "unpack vLLM 0.25.0"
  mkdir -p /opt/llmhost-proof && cat /root/parts/site.tar.xz.* | xz -d | tar -C /opt/llmhost-proof -xf - || exit 3
  touch $SITE/.done
fi
MODEL=/root/tiny-qwen-autoawq
rm -rf $MODEL && mkdir -p /root && cat /root/parts/awq.tar.* | tar -C /root -xf - || exit 4
say "the model (sha256 of the files as the quantize worker wrote them)"
(cd $MODEL && sha256sum ./*) ; python3 -c "import json; print(json.load(open('$MODEL/config.json'))['quantization_config'])"
export PYTHONPATH=$SITE PATH=$SITE/bin:$PATH
say "vllm serve (eager: this proves the checkpoint format, not speed)"
python3 -m vllm.entrypoints.cli.main serve $MODEL --served-model-name tiny-qwen-autoawq --port 8011 \
  --max-model-len 512 --gpu-memory-utilization 0.3 --enforce-eager > "$FINAL/serve.log" 2>&1 &
pid=$!; t0=$(date +%s)
for _ in $(seq 1 150); do
  curl -sf http://127.0.0.1:8011/health >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { say "vllm died"; tail -n 40 "$FINAL/serve.log"; exit 5; }
  sleep 2
done
say "ready after $(( $(date +%s) - t0 )) s"
# the tiny model's tokenizer knows the words w0 ... w151642 and Qwen's special tokens; token ids as a second form
for prompt in '"w1 w2 w3"' '[151644, 17, 42, 151645]'; do
  curl -s http://127.0.0.1:8011/v1/completions -H 'Content-Type: application/json' \
    -d "{\"model\": \"tiny-qwen-autoawq\", \"prompt\": $prompt, \"max_tokens\": 8, \"temperature\": 0}" | tee -a "$FINAL/completion.json"
  echo | tee -a "$FINAL/completion.json"
done
grep -i -E "quantization|awq|marlin" "$FINAL/serve.log" | head -n 8
kill -TERM $pid; wait $pid; say "stopped rc=$?"
