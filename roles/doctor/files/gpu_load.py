# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llmhost.vllm doctor, opt-in checks under load, bounded in time: `bandwidth` and `burnin`.

The doctor role copies this one file into a private folder on the host, runs it by path with the vLLM venv's Python
(its torch and nvidia-ml-py; the all-reduce's processes re-import it from the file) and reads the one JSON object it
prints, then removes the folder. It reports numbers;
plugins/module_utils/doctor_load.py judges them.

bandwidth: how fast data really moves over each GPU's link, and between the GPUs.
- copies: per GPU, host to device and device to host of --size-mib from pinned host memory, in GB/s (1e9 bytes),
  with the PCIe link NVML saw during the copies;
- all_reduce: with two GPUs or more, an all-reduce of --size-mib of float32 through torch.distributed with NCCL,
  one process per GPU; bus bandwidth in nccl-tests' sense (algbw * 2 (n - 1) / n), and whether the sum was right.

burnin: on every GPU at once, for --seconds:
- compute: half-precision matrix products (TFLOP/s reported);
- memory: --memory-fraction of the memory free on the GPU, written with a pattern that changes each pass and read
  back, every element compared (errors counted);
- every second, through NVML: the clock event reasons (OR-ed over the run), the hottest temperature, the highest
  power draw and the SM clock's range;
- before and after, through NVML: the volatile ECC counts, the PCIe replay counter and the remapped rows (None where
  the GPU does not count them: GeForce cards have no ECC).

--device cpu is the container scenario's stand-in (no GPU there): no copies, the same all-reduce code through gloo
between --ranks CPU processes, and the burn-in's loop on the CPU with small sizes and no NVML. It proves the script
and the report, not a GPU or a link."""

import argparse
import datetime
import functools
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time

# torch numbers GPUs fastest first unless told otherwise; nvidia-smi and NVML number them by PCI bus.
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
CHUNK = 1 << 26  # elements per pattern slice of the burn-in (256 MiB of int32)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("check", choices=["bandwidth", "burnin"])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--seconds", type=float, default=60.0, help="the whole run's bound")
    p.add_argument("--size-mib", type=int, default=256, help="bandwidth: each copy's and the all-reduce's size")
    p.add_argument("--ranks", type=int, default=2, help="bandwidth: processes of the CPU stand-in's all-reduce")
    p.add_argument("--memory-fraction", type=float, default=0.8, help="burnin: of the memory free on each GPU")
    p.add_argument("--matrix", type=int, default=8192, help="burnin: the matrices' side")
    return p.parse_args(argv)


def nvml():
    """pynvml, initialised, or None where NVML cannot be read (numbers are then reported without it)."""
    try:
        import pynvml  # pylint: disable=import-outside-toplevel  # nvidia-ml-py, one of vLLM's requirements
        pynvml.nvmlInit()
        return pynvml
    except Exception:  # pylint: disable=broad-except  # no NVML
        return None


def nvml_handles(nv):
    return {i: nv.nvmlDeviceGetHandleByIndex(i) for i in range(nv.nvmlDeviceGetCount())} if nv is not None else {}


def read(fn, *args):
    try:
        return fn(*args)
    except Exception:  # pylint: disable=broad-except  # NotSupported on this GPU, or an older driver
        return None


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def pci_bus_id(nv, h):
    return text(getattr(read(nv.nvmlDeviceGetPciInfo, h), "busId", None))


# bandwidth

def link(nv, h):
    """The link NVML reports now (gen, width), its maximum and the GPU's bus id, each None where not read."""
    if h is None:
        return {}
    return {"gen": read(nv.nvmlDeviceGetCurrPcieLinkGeneration, h), "width": read(nv.nvmlDeviceGetCurrPcieLinkWidth, h),
            "gen_max": read(nv.nvmlDeviceGetMaxPcieLinkGeneration, h),
            "width_max": read(nv.nvmlDeviceGetMaxPcieLinkWidth, h), "pci_bus_id": pci_bus_id(nv, h)}


def copy_rate(torch, src, dst, deadline, probe, seen, reps=20):
    """GB/s of src -> dst, as many of reps copies as the deadline lets; the widest link seen goes into seen."""
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    done, start = 0, time.perf_counter()
    while done < reps and (done < 3 or time.perf_counter() < deadline):
        dst.copy_(src, non_blocking=True)
        done += 1
        if done == 2:
            now = probe()
            if (now.get("gen") or 0, now.get("width") or 0) > (seen.get("gen") or 0, seen.get("width") or 0):
                seen.update(now)
    torch.cuda.synchronize()
    return round(done * src.numel() * src.element_size() / (time.perf_counter() - start) / 1e9, 2)


def copies(torch, nbytes, deadline, nv):
    """Per GPU: host to device and back, from pinned memory; the link seen while copying."""
    out = []
    host, gpus = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True), nvml_handles(nv)
    for i in range(torch.cuda.device_count()):
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda:%d" % i)
        seen = link(nv, gpus.get(i))
        share = time.perf_counter() + max(1.0, (deadline - time.perf_counter()) / 3 / (torch.cuda.device_count() - i))
        probe = functools.partial(link, nv, gpus.get(i))
        h2d = copy_rate(torch, host, dev, share, probe, seen)
        d2h = copy_rate(torch, dev, host, share, probe, seen)
        out.append(dict(seen, index=i, name=torch.cuda.get_device_name(i), h2d_gbps=h2d, d2h_gbps=d2h))
        del dev
    return out


def worker(rank, world, init, backend, nbytes, iters, queue):
    """One rank of the all-reduce: warm up, check the sum, time iters all-reduces; rank 0 reports."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    try:
        device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, init_method=init, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=60))
        t = torch.full((nbytes // 4,), float(rank + 1), dtype=torch.float32, device=device)
        dist.all_reduce(t)
        correct = bool(t[0].item() == world * (world + 1) / 2 and t[-1].item() == t[0].item())
        seconds = timed_all_reduce(torch, dist, t, iters, backend)
        if rank == 0:
            queue.put({"ranks": world, "iterations": iters, "seconds": round(seconds, 4), "correct": correct,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())) if backend == "nccl" else None})
        dist.destroy_process_group()
    except Exception as exc:  # pylint: disable=broad-except  # reported, never a traceback in the report
        queue.put({"error": "rank %d: %s: %s" % (rank, type(exc).__name__, exc)})


def timed_all_reduce(torch, dist, t, iters, backend):
    for _warm in range(2):
        dist.all_reduce(t)
    sync = torch.cuda.synchronize if backend == "nccl" else (lambda: None)
    sync()
    dist.barrier()
    start = time.perf_counter()
    for _step in range(iters):
        dist.all_reduce(t)
    sync()
    return time.perf_counter() - start


def all_reduce(world, backend, nbytes, deadline, iters=20):
    """Spawn one process per rank, wait until the deadline at most, and return rank 0's numbers."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="llmhost-bw-") as tmp:
        init = "file://" + os.path.join(tmp, "rendezvous")
        procs = [ctx.Process(target=worker, args=(r, world, init, backend, nbytes, iters, queue)) for r in range(world)]
        for p in procs:
            p.start()
        result = wait(procs, queue, deadline)
    if "seconds" in result:
        alg = nbytes * iters / result["seconds"] / 1e9
        result.update(algbw_gbps=round(alg, 2), busbw_gbps=round(alg * 2 * (world - 1) / world, 2))
    return result


def wait(procs, queue, deadline):
    """Rank 0's result or the first error; past the deadline, every rank is killed."""
    result = None
    while result is None and time.perf_counter() < deadline:
        try:
            result = queue.get(timeout=0.5)
        except Exception:  # pylint: disable=broad-except  # queue.Empty: not yet
            if not any(p.is_alive() for p in procs):
                result = {"error": "every rank ended without a result (exit codes %s)" % [p.exitcode for p in procs]}
    for p in procs:
        p.join(timeout=max(0.0, min(10.0, deadline - time.perf_counter())))
        if p.is_alive():
            p.kill()
    return result or {"error": "not done within the time allowed"}


def run_bandwidth(args):
    import torch  # pylint: disable=import-outside-toplevel  # the vLLM venv's
    deadline = time.perf_counter() + args.seconds
    nbytes = args.size_mib * 1024 * 1024
    out = {"device": args.device, "size_mib": args.size_mib,
           "torch": torch.__version__, "gpus": [], "all_reduce": None, "skipped": None}
    if args.device == "cpu":
        out["all_reduce"] = all_reduce(args.ranks, "gloo", nbytes, deadline)
        return out
    if not torch.cuda.is_available():
        out["skipped"] = "torch sees no CUDA device"
        return out
    out["gpus"] = copies(torch, nbytes, deadline - args.seconds / 2, nvml())
    if torch.cuda.device_count() < 2:
        out["skipped"] = "one GPU: no all-reduce between GPUs"
    else:
        out["all_reduce"] = all_reduce(torch.cuda.device_count(), "nccl", nbytes, deadline)
    return out


# burnin

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

    def __init__(self, nv, gpus):
        super().__init__(daemon=True)
        self.nv, self.gpus, self.stop = nv, gpus, threading.Event()
        self.seen = {i: {"reasons_mask": 0, "max_temp_c": None, "max_power_w": None, "sm_mhz": []} for i in gpus}

    def run(self):
        while not self.stop.wait(1.0):
            for i, h in self.gpus.items():
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
    gpus = nvml_handles(nv)
    before = {i: counters(nv, h) for i, h in gpus.items()}
    sampler = Sampler(nv, gpus) if nv is not None else None
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
        finish(r, nv, gpus.get(r["index"]), before.get(r["index"]), sampler)
    return results


def finish(result, nv, handle, before, sampler):
    if handle is None:
        return
    seen = dict(sampler.seen[result["index"]])
    sm = seen.pop("sm_mhz")
    result.update(seen, sm_mhz_min=min(sm) if sm else None, sm_mhz_max=max(sm) if sm else None,
                  name=text(read(nv.nvmlDeviceGetName, handle)), pci_bus_id=pci_bus_id(nv, handle),
                  counters_before=before, counters_after=counters(nv, handle))


def run_burnin(args):
    import torch  # pylint: disable=import-outside-toplevel  # the vLLM venv's
    out = {"device": args.device, "seconds": args.seconds,
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
    out = {"tool": "llmhost.vllm doctor " + args.check}
    try:
        out.update((run_bandwidth if args.check == "bandwidth" else run_burnin)(args))
    except Exception as exc:  # pylint: disable=broad-except  # the report says what broke
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
    print(json.dumps(out))
    parts = [out, out.get("all_reduce") or {}] + list(out.get("gpus") or [])
    return 1 if any(part.get("error") for part in parts) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
