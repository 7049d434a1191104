#!/usr/bin/env bash
# Device proof for the Ray cluster (issue #52; run on a lent 1-GPU machine through the `device` tool, not part of
# `make test`). The lent image has no systemd: the node runs the exact command line and environment the role's unit
# gives it (module_utils/ray_cluster.node_argv with roles/ray_cluster/defaults/main.yml's ports), as a plain process;
# then real vLLM serves with --distributed-executor-backend ray and RAY_ADDRESS on that one-node cluster.
#   carry: .dev/p* (chunks of a tar holding site.tar.xz, vLLM 0.25.0's site folder for Python 3.12 as
#          ../shared/device/README.md makes it, and Ray 2.60.0's wheel for Python 3.12)
#   usage: ray_proof.sh  -> $OUT/ray-proof/ (ray status, node argv, server log, completion)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
R=${OUT:-/tmp/out}/ray-proof; mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
if [ ! -f /tmp/site/.done ]; then
  mkdir -p /root/parts; for d in "$REPO"/.dev/p*; do [ -d "$d" ] && mv "$d"/* /root/parts/ 2>/dev/null; done
  find /root/parts -name 'chunk.*' | sort | xargs cat | tar -C /root -xf - || exit 3
  tar -C /tmp -xJf /root/site.tar.xz || exit 3
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site /root/ray-*.whl || exit 4
  touch /tmp/site/.done
fi
# vLLM's site folder has a bin/ of its own already, where pip --target does not add Ray's entry point
if [ ! -x /tmp/site/bin/ray ]; then
  printf '#!/usr/bin/env python3\nimport sys\nfrom ray.scripts.scripts import main\nsys.exit(main())\n' > /tmp/site/bin/ray
  chmod +x /tmp/site/bin/ray
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/coll/ansible_collections/llmhost && ln -sfn "$REPO" /tmp/coll/ansible_collections/llmhost/vllm
# the node's address and its interface: the default route's; the lent image has no iproute2, so without `ip` the
# first IPv4 address `hostname -I` gives, and the interface that holds it
if command -v ip >/dev/null 2>&1; then
  ADDR=$(ip -4 route get 192.0.2.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  IFACE=$(ip -4 route get 192.0.2.1 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
else
  ADDR=$(hostname -I | tr ' ' '\n' | grep -m1 -E '^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$')
  IFACE=$(python3 - "$ADDR" <<'PY'
import fcntl, socket, struct, sys
for _, name in socket.if_nameindex():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        got = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))[20:24])
    except OSError:
        continue
    if got == sys.argv[1]:
        print(name)
        break
PY
)
fi
echo "node address $ADDR on ${IFACE:-?}" | tee "$R/node.txt"
# 1. the node's command line and environment, from the role's defaults and the product's function
PYTHONPATH=/tmp/coll:/tmp/site python3 - "$REPO" "$ADDR" "${IFACE:-lo}" > "$R/node-argv.json" <<'PY' || exit 5
import json, sys, yaml
from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster as rc
repo, addr, iface = sys.argv[1], sys.argv[2], sys.argv[3]
d = yaml.safe_load(open(repo + "/roles/ray_cluster/defaults/main.yml"))
argv = rc.node_argv("/tmp/site/bin/ray", {"address": addr, "head": True, "gpus": 1}, addr, d["ray_cluster_ports"],
                    d["ray_cluster_worker_ports"], d["ray_cluster_dir"] + "/tmp")
json.dump({"argv": argv, "env": rc.node_environment(iface)}, sys.stdout)
PY
cat "$R/node-argv.json"; echo
mkdir -p /var/lib/llmhost-ray/tmp && chmod 0700 /var/lib/llmhost-ray
eval "$(python3 -c "import json,shlex; d=json.load(open('$R/node-argv.json')); print('export ' + ' '.join('%s=%s' % (k, shlex.quote(v)) for k, v in d['env'].items())); print('ARGV=(' + ' '.join(map(shlex.quote, d['argv'])) + ')')")"
setsid "${ARGV[@]}" > "$R/ray-node.log" 2>&1 &
rpid=$!
for _ in $(seq 1 60); do
  ray status --address "$ADDR:6379" > "$R/ray-status.txt" 2>&1 && grep -q "GPU" "$R/ray-status.txt" && break
  kill -0 $rpid 2>/dev/null || { echo "ray node died"; tail -30 "$R/ray-node.log"; exit 6; }
  sleep 2
done
cat "$R/ray-status.txt"; (ss -Hltnp 2>/dev/null || netstat -ltnp 2>/dev/null) | grep -E ':(63[78][0-9]|8265)\b' > "$R/ray-listeners.txt"; cat "$R/ray-listeners.txt"
# 2. real vLLM on the cluster: the API server's environment as vllm_service gives the head
model=/root/qwen3-4b-shape
[ -f "$model/config.json" ] || python3 "$REPO/tests/device/qwen_shape.py" "$model" >/dev/null || exit 7
export RAY_ADDRESS="$ADDR:6379" NCCL_SOCKET_IFNAME=${IFACE:-lo} GLOO_SOCKET_IFNAME=${IFACE:-lo}
start=$(date +%s)
python3 -m vllm.entrypoints.cli.main serve "$model" --load-format dummy --served-model-name qwen3-4b-shape \
  --host 127.0.0.1 --port 8000 --tensor-parallel-size 1 --pipeline-parallel-size 1 \
  --distributed-executor-backend ray --max-model-len 4096 --gpu-memory-utilization 0.5 --enforce-eager \
  > "$R/server.log" 2>&1 &
spid=$!
for _ in $(seq 1 200); do
  curl -sf http://127.0.0.1:8000/health >/dev/null 2>&1 && break
  kill -0 $spid 2>/dev/null || { echo "server died"; tail -n 60 "$R/server.log"; kill $rpid; exit 8; }
  sleep 2
done
echo "ready after $(( $(date +%s) - start )) s" | tee "$R/ready.txt"
curl -s http://127.0.0.1:8000/v1/completions -H 'Content-Type: application/json' \
  -d '{"model": "qwen3-4b-shape", "prompt": "Hello", "max_tokens": 16, "temperature": 0}' | tee "$R/completion.json"; echo
ray status --address "$ADDR:6379" > "$R/ray-status-serving.txt" 2>&1; cat "$R/ray-status-serving.txt"
python3 - "$ADDR" > "$R/ray-actors.txt" 2>&1 <<'PY'
import sys, ray
ray.init(address=sys.argv[1] + ":6379", logging_level="ERROR")
from ray.util.state import list_actors
for a in list_actors(filters=[("state", "=", "ALIVE")]):
    print(a.class_name, a.node_id[:12], a.pid)
PY
cat "$R/ray-actors.txt"
grep -iE "ray|executor|placement" "$R/server.log" | head -30
kill -INT $spid; sleep 8; kill -9 $spid 2>/dev/null
"$(dirname "${ARGV[0]}")/ray" stop --force > /dev/null 2>&1; kill $rpid 2>/dev/null
tail -n 5 "$R/server.log"
