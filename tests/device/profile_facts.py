"""Device diagnosis: where gpu_facts spends its time (interpreter, imports, NVML, CLI calls)."""
import json
import subprocess
import sys
import time

PY = sys.executable


def wall(cmd, n=5):
    s = []
    for dummy in range(n):
        a = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        s.append(time.perf_counter() - a)
    return round(sorted(s)[len(s) // 2], 4)


out = {
    "python_pass": wall([PY, "-c", "pass"]),
    "python_isolated_pass": wall([PY, "-I", "-S", "-c", "pass"]),
    "import_basic": wall([PY, "-c", "import ansible.module_utils.basic"]),
    "import_pynvml_init": wall([PY, "-c", "import pynvml; pynvml.nvmlInit()"]),
    "nvidia_smi_q_x": wall(["nvidia-smi", "-q", "-x"]),
    "nvidia_smi_topo_m": wall(["nvidia-smi", "topo", "-m"]),
}
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_sources, nvml  # noqa: E402
import pynvml  # noqa: E402

calls = []


def run(argv):
    calls.append(argv)
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


t = time.perf_counter()
nvml.collect(pynvml)
out["collect_in_process"] = round(time.perf_counter() - t, 4)
t = time.perf_counter()
gpu_sources.gather(run=run, nvidia_smi="nvidia-smi")
out["gather_in_process"] = round(time.perf_counter() - t, 4)
out["cli_calls"] = calls
# per-call cost of the NVLink loop
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
t = time.perf_counter()
for link in range(18):
    try:
        pynvml.nvmlDeviceGetNvLinkState(h, link)
    except pynvml.NVMLError:
        pass
out["nvlink_state_18"] = round(time.perf_counter() - t, 4)
t = time.perf_counter()
for name in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo", "nvmlDeviceGetMemoryInfo"):
    getattr(pynvml, name)(h)
out["four_getters"] = round(time.perf_counter() - t, 4)
pynvml.nvmlShutdown()
print(json.dumps(out, indent=1))
