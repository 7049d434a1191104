#!/usr/bin/env bash
# Device proof for the serving plan and the command lines vllm_service renders (run on a lent
# 2-GPU machine through the `device` tool; not part of `make test`). No systemd there, so the
# replicas' command lines run as plain processes, with the environment the unit would give them.
#   carry: .whl (ansible-core, resolvelib) and .dev/p* (chunks of a tar of vLLM 0.25.0 and the
#          wheels the lent image lacks; see ../shared/device/README.md)
#   usage: vllm_proof.sh tp|replicas [MODEL_DIR]   -> $OUT/proof-<mode>.tar.gz
#   Without MODEL_DIR: a Qwen3-4B-shaped folder served with --load-format dummy (random weights).
#   With MODEL_DIR (e.g. the quantize role's output, carried in .dev/): its real weights.
set -uo pipefail
mode=${1:?tp or replicas}; model=${2:-}
FINAL=${OUT:-/tmp/out}; OUT=/tmp/proof-$mode; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
if [ ! -f /tmp/site/.done ]; then
  mkdir -p /root/parts; for d in "$REPO"/.dev/p*; do [ -d "$d" ] && mv "$d"/* /root/parts/ 2>/dev/null; done
  cat /root/parts/chunk.* > /root/all.tar && mkdir -p /root/whl && tar -C /root/whl -xf /root/all.tar || exit 3
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site /root/whl/*.whl "$REPO"/.whl/*.whl || exit 4
  touch /tmp/site/.done
fi
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
export PYTHONPATH=/tmp/site:/tmp/coll ANSIBLE_COLLECTIONS_PATH=/tmp/coll PATH=/tmp/site/bin:$PATH
export ANSIBLE_STDOUT_CALLBACK=ansible.builtin.minimal ANSIBLE_LOCALHOST_WARNING=0
PY=$(command -v python3)
if [ -z "$model" ]; then
  model=/root/qwen3-4b-shape; name=qwen3-4b-shape; extra='"--load-format", "dummy"'
  [ -f "$model/config.json" ] || "$PY" "$REPO/tests/device/qwen_shape.py" "$model" >/dev/null || exit 5
else
  model=$(cd "$model" && pwd); name=$(basename "$model"); extra=''
fi
# 1. the option table of the vLLM that runs here, made by the product's tool from the real parser
VLLM_TARGET_DEVICE=cuda "$PY" "$REPO/tools/vllm_option_table.py" parser > "$OUT/vllm-0.25.0.json" 2> "$OUT/table.err" || exit 6
# 2. the plan, through the real module, on the live GPU facts
wishes="{\"served_model_name\": \"$name\", \"extra_args\": [$extra]"
[ "$mode" = tp ] && wishes="$wishes, \"tensor_parallel_size\": 2"
wishes="$wishes}"
"$PY" - "$OUT" "$wishes" "$model" <<'PY' || exit 7
import json, subprocess, sys
out, wishes, model = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
facts = json.loads(subprocess.run([sys.executable, "-m", "ansible", "adhoc", "localhost", "-i", "localhost,", "-c", "local",
    "-e", "ansible_python_interpreter=" + sys.executable, "-m", "llmhost.vllm.gpu_facts", "-o"],
    capture_output=True, text=True).stdout.split(" => ", 1)[1])["ansible_facts"]["gpu_topology"]
args = {"gpus": facts["gpus"], "p2p": facts["p2p"], "model_path": model, "wishes": wishes,
        "option_table": json.load(open(out + "/vllm-0.25.0.json"))}
r = subprocess.run([sys.executable, "-m", "ansible", "adhoc", "localhost", "-i", "localhost,", "-c", "local",
    "-e", "ansible_python_interpreter=" + sys.executable, "-m", "llmhost.vllm.vllm_serving_plan", "-a", json.dumps(args), "-o"],
    capture_output=True, text=True)
res = json.loads(r.stdout.split(" => ", 1)[1])
json.dump(res, open(out + "/plan.json", "w"), indent=1)
if "plan" not in res:
    print(res.get("msg")); sys.exit(1)
for d in res["plan"]["decisions"]:
    print("%-16s %-16s %s" % (d["key"], d["value"], d["reason"]))
PY
# 3. start every replica's command line, as the unit would (env from the plan, VLLM_API_KEY from "secrets")
export VLLM_API_KEY=device-proof-key
n=$("$PY" -c "import json; print(len(json.load(open('$OUT/plan.json'))['plan']['replicas']))")
pids=()
for k in $(seq 0 $((n - 1))); do
  eval "$("$PY" -c "
import json, shlex; p = json.load(open('$OUT/plan.json'))['plan']; r = p['replicas'][$k]
print(' '.join('export %s=%s;' % (a, shlex.quote(b)) for a, b in r['env'].items()))
print('ARGV=(' + ' '.join(shlex.quote(a) for a in ['serve', p['model_path']] + r['options']) + ')')")"
  echo "replica $k: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES vllm ${ARGV[*]}" | tee -a "$OUT/commands.txt"
  "$PY" -m vllm.entrypoints.cli.main "${ARGV[@]}" > "$OUT/server-$k.log" 2>&1 &
  pids+=($!)
done
start=$(date +%s)
for k in $(seq 0 $((n - 1))); do
  port=$((8000 + k))
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    kill -0 "${pids[$k]}" 2>/dev/null || { echo "replica $k died"; tail -n 30 "$OUT/server-$k.log"; break; }
    sleep 2
  done
  echo "replica $k ready after $(( $(date +%s) - start )) s" | tee -a "$OUT/commands.txt"
  { echo "== /v1/models without key: $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/v1/models)"
    echo "== /v1/models"; curl -s -H "Authorization: Bearer $VLLM_API_KEY" "http://127.0.0.1:$port/v1/models"; echo
    echo "== /v1/completions"; curl -s -H "Authorization: Bearer $VLLM_API_KEY" -H 'Content-Type: application/json' \
      -d "{\"model\": \"$name\", \"prompt\": \"w1 w2 w3\", \"max_tokens\": 16, \"temperature\": 0}" "http://127.0.0.1:$port/v1/completions"; echo
    echo "== /metrics (vllm:)"; curl -s "http://127.0.0.1:$port/metrics" | grep -E '^vllm:(num_requests_running|generation_tokens_total|kv_cache_usage_perc|time_to_first_token_seconds_count)' | head
  } > "$OUT/endpoints-$k.txt" 2>&1
  cat "$OUT/endpoints-$k.txt"
done
nvidia-smi --query-gpu=index,memory.used --format=csv >> "$OUT/commands.txt"
# 4. drain: SIGTERM, as systemd stops the unit
t=$(date +%s); kill -TERM "${pids[@]}"; wait "${pids[@]}"; echo "stopped after SIGTERM in $(( $(date +%s) - t )) s" | tee -a "$OUT/commands.txt"
grep -i -E "shutdown|shutting|drain" "$OUT"/server-*.log | tail -n 6
tar -C /tmp -czf "$FINAL/proof-$mode.tar.gz" "proof-$mode"
