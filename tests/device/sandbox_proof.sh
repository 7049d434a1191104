#!/usr/bin/env bash
# Device proof: real `vllm serve` (vLLM 0.25.0) under the vllm@.service sandbox, on a lent GPU machine
# (no systemd there: tests/device/unit_sandbox.py applies the unit's filter, mounts and devices by hand).
# Not part of `make test`.
#   carry: .dev (site.tar.xz.* parts of vLLM 0.25.0 and the wheels the lent image lacks, pyseccomp included,
#          installed here with `pip install --no-deps --target site`; sandbox-spec.json and
#          sandbox-spec-old.json made here by `unit_sandbox.py spec` from the role-rendered unit and from the
#          unit before the fix)
#   usage: sandbox_proof.sh            -> $OUT/sandbox-proof.log, proc-devices.txt, serve.log, results.json
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
LOG=$FINAL/sandbox-proof.log
exec > >(tee -a "$LOG") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
SITE=/opt/llmhost-proof/site   # not under /tmp: the unit's PrivateTmp hides it
SB=(python3 "$REPO/tests/device/unit_sandbox.py")
say() { echo "=== $(date +%T) $*"; }

say "machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r
cp /proc/devices "$FINAL/proc-devices.txt"
# shellcheck disable=SC2012  # the listing itself is the record (majors, minors, modes)
ls -l /dev/nvidia* /dev/nvidia-caps 2>/dev/null | tee "$FINAL/dev-nvidia.txt"

if [ ! -f $SITE/.done ]; then
  say "unpack vLLM 0.25.0 and its wheels"
  mkdir -p /root/parts /opt/llmhost-proof && mv "$REPO"/.dev/site.tar.xz.* /root/parts/ 2>/dev/null
  cat /root/parts/site.tar.xz.* | xz -d | tar -C /opt/llmhost-proof -xf - || exit 3
  chmod -R a+rX /opt/llmhost-proof && touch $SITE/.done
fi
id vllm >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vllm
MODEL=/srv/llmhost-proof/qwen3-4b-shape
[ -f $MODEL/config.json ] || { mkdir -p /srv/llmhost-proof && python3 "$REPO/tests/device/qwen_shape.py" $MODEL >/dev/null; } || exit 5
chmod -R a+rX /srv/llmhost-proof
export PYTHONPATH=$SITE

say "negative control: the unit before the fix (@resources denied, no SystemCallErrorNumber: KILL)"
"${SB[@]}" run "$REPO/.dev/sandbox-spec-old.json" -- python3 -c "import torch; print('torch imported', torch.__version__)"
echo "rc=$? (159 = killed by SIGSYS)"

say "torch, CUDA, NCCL-style affinity and shared memory under the unit's sandbox"
"${SB[@]}" run "$REPO/.dev/sandbox-spec.json" -- python3 - <<'PY'
import os, torch, multiprocessing.shared_memory as shm
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0))
x = torch.ones(1 << 20, device="cuda"); print("sum on GPU", float(x.sum()))
os.sched_setaffinity(0, os.sched_getaffinity(0)); print("sched_setaffinity ok")
s = shm.SharedMemory(create=True, size=1 << 20); s.close(); s.unlink(); print("shared memory ok")
for path in ["/usr/lib/llmhost-write-test", "/etc/llmhost-write-test"]:
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError as e:
        print("write refused:", path, e.strerror)
print("devices:", sorted(os.listdir("/dev")))
try:
    os.nice(-5)
    print("nice(-5) ALLOWED")
except OSError as e:
    print("nice(-5) refused:", e.strerror)
PY
echo "rc=$?"

say "vllm serve under the unit's sandbox"
export VLLM_API_KEY=device-proof-key
setsid "${SB[@]}" run "$REPO/.dev/sandbox-spec.json" -- python3 -m vllm.entrypoints.cli.main serve "$MODEL" \
  --load-format dummy --served-model-name qwen3-4b-shape --host 127.0.0.1 --port 8000 \
  --max-model-len 8192 --gpu-memory-utilization 0.85 --shutdown-timeout 60 > "$FINAL/serve.log" 2>&1 &
PID=$!
python3 - "$PID" "$FINAL/results.json" <<'PY'
import json, os, sys, threading, time, urllib.request
pid, out = int(sys.argv[1]), sys.argv[2]
H = {"Authorization": "Bearer device-proof-key", "Content-Type": "application/json"}
def req(path, body=None, timeout=600):
    r = urllib.request.Request("http://127.0.0.1:8000" + path, data=json.dumps(body).encode() if body else None, headers=H)
    try:
        with urllib.request.urlopen(r, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)
res = {}; t0 = time.time()
while time.time() - t0 < 420:
    if req("/health", timeout=5)[0] == 200:
        break
    try:
        os.kill(pid, 0)
    except OSError:
        res["died"] = True; break
    time.sleep(2)
res["ready_s"] = round(time.time() - t0, 1)
res["health"] = req("/health")[0]
code, body = req("/v1/models"); res["models"] = [code, body[:200]]
code, body = req("/v1/completions", {"model": "qwen3-4b-shape", "prompt": "w1 w2 w3", "max_tokens": 16, "temperature": 0})
res["completion"] = [code, body[:300]]
code, body = req("/metrics")
res["metrics"] = [code, sorted({l.split("{")[0].split(" ")[0] for l in body.splitlines() if l.startswith("vllm:")})[:40]]
# SIGTERM while 4 long requests run: they should finish; the process should exit within --shutdown-timeout
done = []
def long(i):
    c, b = req("/v1/completions", {"model": "qwen3-4b-shape", "prompt": "w5 w6", "max_tokens": 1500,
                                    "temperature": 0, "ignore_eos": True})
    done.append([i, c, round(time.time() - t_term, 1), (json.loads(b)["usage"]["completion_tokens"] if c == 200 else b[:120])])
t_term = time.time() + 2
ths = [threading.Thread(target=long, args=(i,)) for i in range(4)]
[t.start() for t in ths]; time.sleep(2)
os.kill(pid, 15); t_term = time.time()
time.sleep(0.5); res["new_request_after_sigterm"] = req("/v1/completions", {"model": "qwen3-4b-shape", "prompt": "w1", "max_tokens": 2}, timeout=10)[0]
[t.join(120) for t in ths]
while time.time() - t_term < 90:
    try:
        os.kill(pid, 0); time.sleep(0.2)
    except OSError:
        break
res["exit_after_sigterm_s"] = round(time.time() - t_term, 1)
res["inflight_after_sigterm"] = done
print(json.dumps(res, indent=1)); json.dump(res, open(out, "w"), indent=1)
PY
wait $PID; echo "vllm rc=$?"
grep -iE "sandbox|error|Traceback|EPERM|Operation not permitted|SIGSYS" "$FINAL/serve.log" | head -40
# shellcheck disable=SC2012  # a listing for the log
ls -la /var/cache/vllm | head; du -sh /var/cache/vllm/* 2>/dev/null
