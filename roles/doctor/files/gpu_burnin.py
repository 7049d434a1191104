# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llmhost.vllm doctor, opt-in: a GPU burn-in, bounded in time.

playbooks/doctor.yml runs it on the host with the vLLM venv's Python (its torch) and reads the one JSON object it
prints; plugins/module_utils/doctor.py judges the numbers. On every GPU at once, for --seconds:
- compute: half-precision matrix products (TFLOP/s reported);
- memory: --memory-fraction of the memory free on the GPU, written with a pattern that changes each pass and read
  back, every element compared (errors counted);
- every second, through NVML: the clock event reasons (OR-ed over the run), the hottest temperature, the highest
  power draw and the SM clock's range;
- before and after, through NVML: the volatile ECC counts, the PCIe replay counter and the remapped rows (None where
  the GPU does not count them: GeForce cards have no ECC).
--device cpu is the container scenario's stand-in (no GPU there): the same loop on the CPU with small sizes and no
NVML. It proves the script and the report, not a GPU."""

import argparse
import json
import os
import sys
import threading
import time

# torch numbers GPUs fastest first unless told otherwise; nvidia-smi and NVML number them by PCI bus.
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
CHUNK = 1 << 26  # elements per pattern slice (256 MiB of int32)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=600.0)
    p.add_argument("--memory-fraction", type=float, default=0.8, help="of the memory free on each GPU")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--matrix", type=int, default=8192)
    return p.parse_args(argv)


def nvml():
    try:
        import pynvml  # pylint: disable=import-outside-toplevel  # nvidia-ml-py, one of vLLM's requirements
        pynvml.nvmlInit()
        return pynvml
    except Exception:  # pylint: disable=broad-except  # no NVML: the load runs, nothing is counted
        return None


def read(fn, *args):
    try:
        return fn(*args)
    except Exception:  # pylint: disable=broad-except  # NotSupported on this GPU, or an older driver
        return None


def counters(nv, h):
    """The error counts NVML keeps: volatile ECC (since the driver loaded), PCIe replays, remapped rows."""
    if nv is None:
        return None
    rows = read(nv.nvmlDeviceGetRemappedRows, h)
    return {"ecc_corrected": read(nv.nvmlDeviceGetTotalEccErrors, h, 0, 0),  # corrected, volatile
            "ecc_uncorrected": read(nv.nvmlDeviceGetTotalEccErrors, h, 1, 0),
            "pcie_replays": read(nv.nvmlDeviceGetPcieReplayCounter, h),
            "remapped_rows_pending": bool(rows[2]) if rows else None,
            "remap_failed": bool(rows[3]) if rows else None}


def reasons(nv, h):
    value = read(getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or (lambda _h: None), h)
    return value if value is not None else read(nv.nvmlDeviceGetCurrentClocksThrottleReasons, h)


class Sampler(threading.Thread):
    """Every second, per GPU: clock event reasons (OR-ed), temperature, power, SM clock."""

    def __init__(self, nv, handles):
        super().__init__(daemon=True)
        self.nv, self.handles, self.stop = nv, handles, threading.Event()
        self.seen = {i: {"reasons_mask": 0, "max_temp_c": None, "max_power_w": None, "sm_mhz": []} for i in handles}

    def run(self):
        while not self.stop.wait(1.0):
            for i, h in self.handles.items():
                self.sample(self.seen[i], h)

    def sample(self, seen, h):
        nv = self.nv
        seen["reasons_mask"] |= reasons(nv, h) or 0
        temp = read(nv.nvmlDeviceGetTemperature, h, 0)  # NVML_TEMPERATURE_GPU
        power = read(nv.nvmlDeviceGetPowerUsage, h)  # mW
        sm = read(nv.nvmlDeviceGetClockInfo, h, 1)  # NVML_CLOCK_SM
        if temp is not None:
            seen["max_temp_c"] = max(temp, seen["max_temp_c"] or temp)
        if power is not None:
            seen["max_power_w"] = round(max(power / 1000.0, seen["max_power_w"] or 0.0), 1)
        if sm:
            seen["sm_mhz"].append(sm)


def pattern(torch, buf, start, seed):
    """The expected values of buf[start:start + CHUNK] for this pass: a different sequence per slice and per pass
    (int32 throughout, computed in place, so the slice's pattern costs one slice of memory)."""
    n = min(CHUNK, buf.numel() - start)
    offset = (seed * 7919 + (start // CHUNK) * 104729) & 0x3FFFFFFF
    return torch.arange(n, dtype=torch.int32, device=buf.device).mul_(40503).add_(offset).bitwise_and_(0x7FFFFFFF)


def memory_pass(torch, buf, seed):
    """Write the pass's pattern over buf, read it back; the number of elements that differ."""
    for start in range(0, buf.numel(), CHUNK):
        buf[start:start + CHUNK] = pattern(torch, buf, start, seed)
    wrong = 0
    for start in range(0, buf.numel(), CHUNK):
        wrong += int((buf[start:start + CHUNK] != pattern(torch, buf, start, seed)).sum().item())
    return wrong


def load(torch, device, args, deadline, result):
    """Matrix products and memory passes on one device until the deadline."""
    try:
        gpu = device.type == "cuda"
        n = args.matrix if gpu else 256
        dtype = torch.float16 if gpu else torch.float32
        a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
        c = torch.empty_like(a)
        # room kept for a pattern slice, its comparison and the matrices; the stand-in tests one slice
        count = int(torch.cuda.mem_get_info(device)[0] * args.memory_fraction) // 4 - 3 * CHUNK if gpu else 1 << 24
        buf = torch.empty(max(count, CHUNK), dtype=torch.int32, device=device)
        result.update(memory_gib=round(buf.numel() * 4 / 2 ** 30, 2), matmuls=0, memory_passes=0, memory_errors=0)
        start = time.perf_counter()
        while time.perf_counter() < deadline:
            for _step in range(50):
                torch.matmul(a, b, out=c)
            result["matmuls"] += 50
            result["memory_errors"] += memory_pass(torch, buf, result["memory_passes"])
            result["memory_passes"] += 1
        result["seconds"] = round(time.perf_counter() - start, 1)
        result["tflops"] = round(result["matmuls"] * 2 * n ** 3 / result["seconds"] / 1e12, 3)
    except Exception as exc:  # pylint: disable=broad-except  # reported per device
        result["error"] = "%s: %s" % (type(exc).__name__, exc)


def devices(torch, args):
    if args.device == "cpu":
        return [torch.device("cpu")]
    return [torch.device("cuda", i) for i in range(torch.cuda.device_count())]


def burn(torch, args, nv):
    handles = {}
    if nv is not None:
        handles = {i: nv.nvmlDeviceGetHandleByIndex(i) for i in range(nv.nvmlDeviceGetCount())}
    before = {i: counters(nv, h) for i, h in handles.items()}
    sampler = Sampler(nv, handles) if nv is not None else None
    if sampler:
        sampler.start()
    deadline = time.perf_counter() + args.seconds
    results = [{"index": d.index if d.type == "cuda" else "cpu"} for d in devices(torch, args)]
    threads = [threading.Thread(target=load, args=(torch, d, args, deadline, r)) for d, r in
               zip(devices(torch, args), results)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if sampler:
        sampler.stop.set()
        sampler.join()
    for r in results:
        finish(r, nv, handles.get(r["index"]), before.get(r["index"]), sampler)
    return results


def finish(result, nv, handle, before, sampler):
    if handle is None:
        return
    seen = dict(sampler.seen[result["index"]])
    sm = seen.pop("sm_mhz")
    result.update(seen, sm_mhz_min=min(sm) if sm else None, sm_mhz_max=max(sm) if sm else None,
                  name=read(nv.nvmlDeviceGetName, handle), counters_before=before, counters_after=counters(nv, handle))
    bus = read(nv.nvmlDeviceGetPciInfo, handle)
    result["pci_bus_id"] = bus.busId.decode() if bus and isinstance(bus.busId, bytes) else getattr(bus, "busId", None)
    if isinstance(result.get("name"), bytes):
        result["name"] = result["name"].decode()


def run(args):
    import torch  # pylint: disable=import-outside-toplevel  # the vLLM venv's
    out = {"tool": "llmhost.vllm doctor burn-in", "device": args.device, "seconds": args.seconds,
           "torch": torch.__version__, "gpus": [], "skipped": None}
    if args.device == "cuda" and not torch.cuda.is_available():
        out["skipped"] = "torch sees no CUDA device"
        return out
    nv = nvml() if args.device == "cuda" else None
    out["nvml"] = nv is not None
    out["gpus"] = burn(torch, args, nv)
    return out


def main(argv):
    args = parse(argv)
    try:
        out = run(args)
    except Exception as exc:  # pylint: disable=broad-except  # the report says what broke
        out = {"tool": "llmhost.vllm doctor burn-in", "error": "%s: %s" % (type(exc).__name__, exc)}
    print(json.dumps(out))
    return 1 if out.get("error") or any(g.get("error") for g in out.get("gpus") or []) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
