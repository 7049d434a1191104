# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llmhost.vllm doctor, opt-in: how fast data really moves over each GPU's link, and between the GPUs.

playbooks/doctor.yml runs it on the host with the vLLM venv's Python (its torch), bounded in time, and reads the one
JSON object it prints. It reports numbers; plugins/module_utils/doctor.py judges them.
- copies: per GPU, host to device and device to host of --size-mib from pinned host memory, in GB/s (1e9 bytes),
  with the PCIe link NVML saw during the copies;
- all_reduce: with two GPUs or more, an all-reduce of --size-mib of float32 through torch.distributed with NCCL,
  one process per GPU; bus bandwidth in nccl-tests' sense (algbw * 2 (n - 1) / n), and whether the sum was right.
--device cpu is the container scenario's stand-in (no GPU there): no copies, and the same all-reduce code through
gloo between --ranks CPU processes. It proves the script and the report, not a link."""

import argparse
import datetime
import json
import multiprocessing
import os
import sys
import tempfile
import time

# torch numbers GPUs fastest first unless told otherwise; nvidia-smi and NVML number them by PCI bus.
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mib", type=int, default=256)
    p.add_argument("--seconds", type=float, default=60.0, help="the whole run's bound")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--ranks", type=int, default=2, help="processes of the CPU stand-in's all-reduce")
    return p.parse_args(argv)


def nvml_handles():
    """NVML handles by index, or {} where NVML cannot be read (the numbers are then reported without links)."""
    try:
        import pynvml  # pylint: disable=import-outside-toplevel  # nvidia-ml-py, one of vLLM's requirements
        pynvml.nvmlInit()
        return {i: pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())}
    except Exception:  # pylint: disable=broad-except  # no NVML: numbers without links
        return {}


def link(handle):
    """The link NVML reports now (gen, width) and its maximum, each None where not read."""
    out = {}
    if handle is None:
        return out
    import pynvml  # pylint: disable=import-outside-toplevel
    for key, call in (("gen", "nvmlDeviceGetCurrPcieLinkGeneration"), ("width", "nvmlDeviceGetCurrPcieLinkWidth"),
                      ("gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"), ("width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
                      ("pci_bus_id", "nvmlDeviceGetPciInfo")):
        try:
            value = getattr(pynvml, call)(handle)
            out[key] = value.busId if key == "pci_bus_id" else value
        except Exception:  # pylint: disable=broad-except
            out[key] = None
    if isinstance(out.get("pci_bus_id"), bytes):
        out["pci_bus_id"] = out["pci_bus_id"].decode()
    return out


def copy_rate(torch, src, dst, deadline, handle, seen, reps=20):
    """GB/s of src -> dst, as many of reps copies as the deadline lets; the widest link seen goes into seen."""
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    done, start = 0, time.perf_counter()
    while done < reps and (done < 3 or time.perf_counter() < deadline):
        dst.copy_(src, non_blocking=True)
        done += 1
        if done == 2:
            now = link(handle)
            if (now.get("gen") or 0, now.get("width") or 0) > (seen.get("gen") or 0, seen.get("width") or 0):
                seen.update(now)
    torch.cuda.synchronize()
    return round(done * src.numel() * src.element_size() / (time.perf_counter() - start) / 1e9, 2)


def copies(torch, nbytes, deadline, handles):
    """Per GPU: host to device and back, from pinned memory; the link seen while copying."""
    out = []
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    for i in range(torch.cuda.device_count()):
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda:%d" % i)
        seen = link(handles.get(i))
        share = time.perf_counter() + max(1.0, (deadline - time.perf_counter()) / 3 / (torch.cuda.device_count() - i))
        h2d = copy_rate(torch, host, dev, share, handles.get(i), seen)
        d2h = copy_rate(torch, dev, host, share, handles.get(i), seen)
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


def run(args):
    import torch  # pylint: disable=import-outside-toplevel  # the vLLM venv's
    deadline = time.perf_counter() + args.seconds
    nbytes = args.size_mib * 1024 * 1024
    out = {"tool": "llmhost.vllm doctor bandwidth", "device": args.device, "size_mib": args.size_mib,
           "torch": torch.__version__, "gpus": [], "all_reduce": None, "skipped": None}
    if args.device == "cpu":
        out["all_reduce"] = all_reduce(args.ranks, "gloo", nbytes, deadline)
        return out
    if not torch.cuda.is_available():
        out["skipped"] = "torch sees no CUDA device"
        return out
    out["gpus"] = copies(torch, nbytes, deadline - args.seconds / 2, nvml_handles())
    if torch.cuda.device_count() < 2:
        out["skipped"] = "one GPU: no all-reduce between GPUs"
    else:
        out["all_reduce"] = all_reduce(torch.cuda.device_count(), "nccl", nbytes, deadline)
    return out


def main(argv):
    args = parse(argv)
    try:
        out = run(args)
    except Exception as exc:  # pylint: disable=broad-except  # the report says what broke
        out = {"tool": "llmhost.vllm doctor bandwidth", "error": "%s: %s" % (type(exc).__name__, exc)}
    print(json.dumps(out))
    return 1 if out.get("error") or (out.get("all_reduce") or {}).get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
