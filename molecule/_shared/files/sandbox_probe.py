"""Runs, under a unit's sandbox, the process-level work real vLLM does at start-up, with real torch:
CPU affinity, a NUMA memory policy, writes into every cache folder the unit names, raising RLIMIT_NOFILE, shared memory, torch's thread pool, and
torch.multiprocessing spawn of two workers that join a gloo process group over loopback and
all-reduce. Prints 'sandbox probe: ok' and exits 0 only if all of it worked.
usage: sandbox_probe.py [PORT] [--no-mempolicy]; with --no-mempolicy the NUMA policy call is not
probed (for hosts that forbid it to every process, like a Docker container without CAP_SYS_NICE).
Used by molecule/_shared/tests/test_vllm_service.py (the vLLM stand-in itself needs no GPU library)."""
import ctypes
import os
import resource
import sys
from multiprocessing import shared_memory

SYS_SET_MEMPOLICY = 238  # x86_64
MPOL_DEFAULT = 0


def set_mempolicy_default():
    """0, or the errno of set_mempolicy(MPOL_DEFAULT), the call NCCL and libnuma make."""
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.syscall(SYS_SET_MEMPOLICY, MPOL_DEFAULT, None, 0) == 0 else ctypes.get_errno()


def worker(rank, world, port):
    import torch  # pylint: disable=import-outside-toplevel  # the venv under test has it, this checkout need not
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[rank % len(os.sched_getaffinity(0))]})
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    t = torch.ones(4) * (rank + 1)
    dist.all_reduce(t)
    if t[0].item() != sum(range(1, world + 1)):
        raise SystemExit("all_reduce gave %s" % t.tolist())
    dist.destroy_process_group()


def main():
    import torch  # pylint: disable=import-outside-toplevel
    import torch.multiprocessing as mp  # pylint: disable=import-outside-toplevel
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    if "--no-mempolicy" in sys.argv:
        print("set_mempolicy not probed: the host forbids it outside any unit too (a container without CAP_SYS_NICE)")
    else:
        err = set_mempolicy_default()
        if err:
            raise OSError(err, "set_mempolicy: %s" % os.strerror(err))
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    for var in ("VLLM_CACHE_ROOT", "HF_HOME", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "XDG_CACHE_HOME"):
        folder = os.environ.get(var)
        if not folder:
            raise SystemExit("%s is not set: that cache would go to a home the service user does not have" % var)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, ".llmhost-probe"), "w", encoding="ascii") as f:
            f.write("ok")
        os.unlink(os.path.join(folder, ".llmhost-probe"))
    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
    shm.buf[0] = 1
    shm.close()
    shm.unlink()
    torch.set_num_threads(len(cpus))
    product = torch.randn(128, 128) @ torch.randn(128, 128)
    if product.shape != (128, 128):
        raise SystemExit("matmul")
    port = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 29511
    mp.spawn(worker, args=(2, port), nprocs=2)
    print("sandbox probe: ok (torch %s, %d CPUs)" % (torch.__version__, len(cpus)))


if __name__ == "__main__":
    main()
