#!/usr/bin/env bash
# Device proof for the canary's evidence (issue #55; run on a lent 1-GPU machine through the `device` tool, not part
# of `make test`): two real vLLM 0.25.0 replicas on one GPU (0.4 of its memory each, a Qwen3-4B-shaped model with
# dummy weights), a real Prometheus scraping them as the monitoring role's does (Debian 12's package, the one the
# container scenario installs), the gateway's canary share applied to the requests a client sends (nginx is not on
# the lent image: each request goes where nginx's smooth weighted round robin would send it, with the weights of
# module_utils/canary.weights), then the module canary_probe run as Ansible runs it, against both replicas and that
# Prometheus, and the filter canary_verdict on what it gathered.
#   carry: .dev/p* (chunks of a tar of vLLM 0.25.0's wheels for Python 3.12 and those it needs beyond the lent image,
#          as ../shared/device/wheel_closure.py lists them, ansible-core's wheel and Debian 12's prometheus .deb)
#   usage: canary_proof.sh  -> $OUT/canary-proof/
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
R=${CANARY_PROOF_OUT:-${OUT:-/tmp/out}/canary-proof}; mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
if [ ! -f /tmp/site/.done ]; then
  mkdir -p /root/parts; for d in "$REPO"/.dev/p*; do [ -d "$d" ] && mv "$d"/* /root/parts/ 2>/dev/null; done
  mkdir -p /root/bundle && find /root/parts -name 'chunk.*' | sort | xargs cat | tar -C /root/bundle -xf - || exit 3
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site /root/bundle/*.whl || exit 4
  mkdir -p /tmp/prom && dpkg -x /root/bundle/prometheus_*.deb /tmp/prom || exit 4
  touch /tmp/site/.done
fi
export PYTHONPATH=/tmp/coll:/tmp/site
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
model=/root/qwen3-4b-shape
[ -f "$model/config.json" ] || python3 "$REPO/tests/device/qwen_shape.py" "$model" >/dev/null || exit 5
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$R/gpu.txt"

# 1. two replicas, one after the other (each sizes its KV cache from what the GPU has free when it starts)
for port in 8000 8001; do
  start=$(date +%s)
  python3 -m vllm.entrypoints.cli.main serve "$model" --load-format dummy --served-model-name qwen3-4b-shape \
    --host 127.0.0.1 --port $port --max-model-len 4096 --gpu-memory-utilization 0.4 --enforce-eager \
    > "$R/server-$port.log" 2>&1 &
  echo $! > "/tmp/replica-$port.pid"
  for _ in $(seq 1 200); do
    curl -sf http://127.0.0.1:$port/health >/dev/null 2>&1 && break
    kill -0 "$(cat /tmp/replica-$port.pid)" 2>/dev/null || { echo "replica $port died"; tail -n 60 "$R/server-$port.log"; exit 6; }
    sleep 2
  done
  echo "replica $port ready after $(( $(date +%s) - start )) s" | tee -a "$R/ready.txt"
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader | tee -a "$R/gpu.txt"

# 2. Prometheus, scraping both every 5 s with the labels vllm_service's targets file gives them
cat > /tmp/prometheus.yml <<'EOF'
global: {scrape_interval: 5s, evaluation_interval: 5s}
scrape_configs:
  - job_name: vllm
    static_configs:
      - targets: ["127.0.0.1:8000"]
        labels: {llmhost_target: vllm, replica: "0"}
      - targets: ["127.0.0.1:8001"]
        labels: {llmhost_target: vllm, replica: "1"}
EOF
/tmp/prom/usr/bin/prometheus --config.file=/tmp/prometheus.yml --storage.tsdb.path=/tmp/promdata \
  --web.listen-address=127.0.0.1:9090 > "$R/prometheus.log" 2>&1 &
ppid=$!
sleep 6

# 3. the gateway's share: 10% to the canary (replica 0), as nginx's weights would send 400 requests, 8 at a time
python3 - > "$R/traffic.json" <<'PY' || exit 7
import json, threading, time, urllib.request
from ansible_collections.llmhost.vllm.plugins.module_utils import canary
ends = ["127.0.0.1:8000", "127.0.0.1:8001"]
weights = canary.weights(ends, ends[0], 10)
current = {e: 0 for e in ends}
def smooth():  # nginx's smooth weighted round robin
    total = sum(weights.values())
    for e in ends:
        current[e] += weights[e]
    best = max(ends, key=lambda e: current[e])
    current[best] -= total
    return best
order = [smooth() for _ in range(400)]
lock, status = threading.Lock(), {}
def worker(mine):
    for end in mine:
        body = json.dumps({"model": "qwen3-4b-shape", "prompt": "Tell me about the sea.", "max_tokens": 32}).encode()
        req = urllib.request.Request("http://%s/v1/completions" % end, body, {"Content-Type": "application/json"})
        try:
            code = urllib.request.urlopen(req, timeout=60).getcode()
        except Exception as e:
            code = getattr(e, "code", 0)
        with lock:
            status.setdefault(end, {}).setdefault(str(code), 0)
            status[end][str(code)] += 1
started = time.time()
threads = [threading.Thread(target=worker, args=(order[i::8],)) for i in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps({"weights": weights, "sent": {e: order.count(e) for e in ends}, "answered": status,
                  "seconds": round(time.time() - started, 1)}, indent=1))
PY
cat "$R/traffic.json"
sleep 12   # two more scrapes after the last request
for port in 8000 8001; do
  curl -s http://127.0.0.1:$port/metrics | grep -E '^(http_requests_total|vllm:time_to_first_token_seconds_count|vllm:request_success_total)' \
    > "$R/metrics-$port.txt"
done
cat "$R/metrics-8000.txt"

# 4. the module canary_probe as Ansible runs it (its arguments in a JSON file), then the filter canary_verdict
python3 - "$REPO" > /tmp/args.json <<'PY'
import json, sys, yaml
prompts = yaml.safe_load(open(sys.argv[1] + "/playbooks/files/canary-prompts.yml"))
print(json.dumps({"ANSIBLE_MODULE_ARGS": {
    "prompts": prompts, "canary_url": "http://127.0.0.1:8000", "old_urls": ["http://127.0.0.1:8001"],
    "model": "qwen3-4b-shape", "prometheus_url": "http://127.0.0.1:9090", "window_s": 120}}))
PY
python3 "$REPO/plugins/modules/canary_probe.py" /tmp/args.json > "$R/probe.json" || { cat "$R/probe.json"; exit 8; }
python3 - "$REPO" "$R" <<'PY' || exit 9
import json, sys, yaml
from ansible_collections.llmhost.vllm.plugins.filter.canary_verdict import canary_verdict
repo, out = sys.argv[1], sys.argv[2]
prompts = yaml.safe_load(open(repo + "/playbooks/files/canary-prompts.yml"))
probe = json.load(open(out + "/probe.json"))
limits = {"score_tolerance": 0.0, "max_error_rate_increase": 0.01, "max_ttft_ratio": 1.5}
context = {"old_source": "qwen3-4b-shape (dummy weights)", "new_source": "qwen3-4b-shape (dummy weights)",
           "canary_endpoint": "127.0.0.1:8000", "old_endpoints": ["127.0.0.1:8001"], "percent": 10, "soak_s": 120}
verdict = canary_verdict(probe, prompts, limits, context)
open(out + "/report.md", "w").write(verdict.pop("report"))
json.dump(verdict, open(out + "/verdict.json", "w"), indent=1, ensure_ascii=False)
print(verdict["decision"], "|", verdict["why"])
print(json.dumps(verdict["figures"]))
PY
cat "$R/report.md"
for port in 8000 8001; do kill -INT "$(cat /tmp/replica-$port.pid)"; done; kill $ppid
sleep 6
grep -hE "KV cache|Maximum concurrency|Available KV" "$R"/server-800*.log | head -6 > "$R/server-lines.txt"; cat "$R/server-lines.txt"
touch "$R/done"
