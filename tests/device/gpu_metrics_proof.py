"""Device proof for the GPU exporter's readings (run on a lent GPU machine; not part of `make test`).

Read-only. Five times, one second apart: the metric families of plugins/module_utils/gpu_metrics.py
from real NVML, and `nvidia-smi --query-gpu` read right after; prints each pair and whether they agree
within the tolerances below (a clock or a power draw may move between the two reads).
    usage: PYTHONPATH=<wheels>:<collections> python3 gpu_metrics_proof.py  ->  JSON on stdout, rc 1 on a mismatch
"""
import json
import subprocess
import sys
import time

import pynvml
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_metrics as gm

# nvidia-smi field -> (our metric, extra labels, factor from our unit to nvidia-smi's, tolerance)
FIELDS = [
    ("memory.total", "memory_total_bytes", {}, 1 / 2 ** 20, 1),
    ("memory.used", "memory_used_bytes", {}, 1 / 2 ** 20, 64),
    ("temperature.gpu", "temperature_celsius", {}, 1, 2),
    ("power.draw", "power_watts", {}, 1, 15),
    ("enforced.power.limit", "power_limit_watts", {}, 1, 0.5),
    ("clocks.sm", "clock_hertz", {"clock": "sm"}, 1e-6, 200),
    ("clocks.mem", "clock_hertz", {"clock": "mem"}, 1e-6, 200),
    ("clocks.max.sm", "clock_max_hertz", {"clock": "sm"}, 1e-6, 0),
    ("clocks.max.mem", "clock_max_hertz", {"clock": "mem"}, 1e-6, 0),
    ("pcie.link.gen.current", "pcie_link_generation", {}, 1, 0),
    ("pcie.link.gen.max", "pcie_link_generation_max", {}, 1, 0),
    ("pcie.link.width.current", "pcie_link_width", {}, 1, 0),
    ("pcie.link.width.max", "pcie_link_width_max", {}, 1, 0),
    ("utilization.gpu", "utilization_ratio", {}, 100, 10),
]


def smi():
    names = ["index", "pci.bus_id", "clocks_event_reasons.active"] + [f[0] for f in FIELDS]
    out = subprocess.run(["nvidia-smi", "--query-gpu=" + ",".join(names), "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}).stdout
    return [dict(zip(names, (c.strip() for c in line.split(",")))) for line in out.splitlines() if line.strip()]


def ours(fams, name, labels):
    for lab, val in fams.get(gm.PREFIX + name, ("", "", []))[2]:
        if all(lab.get(k) == v for k, v in labels.items()):
            return val
    return None


def compare(fams, rows):
    checks = []
    for row in rows:
        gpu = row["index"]
        for field, metric, extra, factor, tol in FIELDS:
            mine = ours(fams, metric, dict(extra, gpu=gpu))
            theirs = row[field]
            try:
                ok = mine is not None and abs(mine * factor - float(theirs)) <= tol
            except ValueError:  # [N/A]
                ok = mine is None
            checks.append({"gpu": gpu, "field": field, "ours": None if mine is None else round(mine * factor, 2),
                           "nvidia_smi": theirs, "tolerance": tol, "ok": ok})
        active = [lab["reason"] for lab, val in fams.get(gm.PREFIX + "clock_event_reason", ("", "", []))[2]
                  if lab["gpu"] == gpu and val == 1]
        checks.append({"gpu": gpu, "field": "clocks_event_reasons.active", "ours": active,
                       "nvidia_smi": row["clocks_event_reasons.active"], "ok": True, "note": "shown, not compared"})
    return checks


def main():
    pynvml.nvmlInit()
    rounds = []
    for dummy in range(5):
        start = time.time()
        fams = gm.families(gm.read_devices(pynvml))
        read_s = time.time() - start
        rounds.append({"read_s": round(read_s, 4), "checks": compare(fams, smi())})
        time.sleep(1)
    pynvml.nvmlShutdown()
    bad = [c for r in rounds for c in r["checks"] if not c["ok"]]
    print(json.dumps({"rounds": rounds, "mismatches": bad, "families": sorted(fams)}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
