#!/usr/bin/env bash
# Device proof: the llmhost.vllm.vllm_ready module (vllm_service's readiness check) against real
# `vllm serve` (vLLM 0.25.0) on a lent GPU machine, run as Ansible runs a module: the module file and its
# arguments, with ansible-core's module_utils and this collection on the path. Not part of `make test`.
#   carry: .dev/p (chunk.* of site.tar.xz, vLLM 0.25.0 and the wheels the lent image lacks, unpacked into a
#          site folder on PYTHONPATH, moved to /root/parts by earlier calls; ansible_core-2.19.14 wheel)
#   usage: ready_proof.sh            -> $OUT/ready-proof.log, serve.log, <case>.json
# Cases: a server still starting (the module must wait on /health), the key it needs, a wrong key, a
# model it does not serve, and a port with nothing behind it.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
exec > >(tee -a "$FINAL/ready-proof.log") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
say() { echo "=== $(date +%T) $*"; }
SITE=/opt/llmhost-proof/site
LIB=/opt/llmhost-proof/ansible   # ansible-core's files: module_utils is all a module imports
COLL=/opt/llmhost-proof/collections
MODEL=/srv/llmhost-proof/qwen3-4b-shape
KEY=sk-llmhost-proof

say "machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /root/parts && mv "$REPO"/.dev/p/chunk.* /root/parts/ 2>/dev/null
if [ ! -d $SITE/vllm ]; then
  say "unpack vLLM 0.25.0"
  mkdir -p /opt/llmhost-proof && cat /root/parts/chunk.* | tar -C /opt/llmhost-proof -xJf - || exit 3
fi
[ -d $LIB/ansible ] || python3 -m zipfile -e "$REPO"/.dev/p/ansible_core-*.whl $LIB || exit 4
mkdir -p $COLL/ansible_collections/llmhost && ln -sfn "$REPO" $COLL/ansible_collections/llmhost/vllm
[ -f $MODEL/config.json ] || { mkdir -p /srv/llmhost-proof && PYTHONPATH=$SITE python3 "$REPO/tests/device/qwen_shape.py" $MODEL >/dev/null; } || exit 5

# ready CASE ARGS_JSON: the module as Ansible runs it; its JSON result in $FINAL/CASE.json
ready() {
  echo "{\"ANSIBLE_MODULE_ARGS\": $2}" > "$FINAL/$1.args.json"
  PYTHONPATH=$LIB:$COLL python3 "$REPO/plugins/modules/vllm_ready.py" "$FINAL/$1.args.json" > "$FINAL/$1.json"
  echo "$1: rc=$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("msg") or r.get("servers"))' "$FINAL/$1.json")"
}

say "start vllm serve (dummy weights, an API key) and ask at once: the module must wait for /health"
PYTHONPATH=$SITE python3 -m vllm.entrypoints.cli.main serve $MODEL --load-format dummy --served-model-name qwen3-4b-shape \
  --host 127.0.0.1 --port 8000 --api-key $KEY --gpu-memory-utilization 0.3 --max-model-len 4096 > "$FINAL/serve.log" 2>&1 &
SERVER=$!
ready starting "{\"urls\": [\"http://127.0.0.1:8000\"], \"model\": \"qwen3-4b-shape\", \"api_key\": \"$KEY\", \"timeout\": 900}"
say "the same server, ready: a wrong key, a model it does not serve"
ready wrong_key "{\"urls\": [\"http://127.0.0.1:8000\"], \"model\": \"qwen3-4b-shape\", \"api_key\": \"sk-wrong\", \"timeout\": 30}"
ready wrong_model "{\"urls\": [\"http://127.0.0.1:8000\"], \"model\": \"other\", \"api_key\": \"$KEY\", \"timeout\": 30}"
ready nothing "{\"urls\": [\"http://127.0.0.1:8000\", \"http://127.0.0.1:8001\"], \"model\": \"qwen3-4b-shape\", \"api_key\": \"$KEY\", \"timeout\": 5}"
say "the key never in a result"; grep -l $KEY "$FINAL"/*.json | grep -v args || echo "not in any result"
kill -INT $SERVER; wait $SERVER
say "done"
