"""Summary of the sm_89 build proof (tests/build/sm89_proof.sh): reads what the proof left in its state folder
and in the fixture folder, writes summary.json beside the listings. No binaries are kept.

usage: sm89_summary.py STATE_DIR FIXTURE_DIR

Figures:
- role_seconds: wall time of the role's run, every attempt added (a resumed build adds its part);
- ninja: from ninja's own log (.ninja_log, copied into the fixture): wall time from the first step's start to
  the last step's end of each ninja session, the sum of the steps' own times (job-seconds: with MAX_JOBS=2 the
  wall time is about half of it), the step count and the slowest steps;
- peak_memory_bytes: the machine's memory in use (MemTotal - MemAvailable) at its highest during the run,
  sampled every 5 s: an upper bound on the build's, with this machine's idle use in it;
- ccache: hits and misses of the run's compilations (ccache --print-stats);
- objects: object files per extension target in the CMake build folder.
"""
import json
import os
import re
import sys

PYPI_WHEEL = {"name": "vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl", "bytes": 193540602,
              "sha256": "939ae90251a5676b83d0c2afb92405e4e53bfb4b79a3920c80e5b57fbe9c5ff7"}
EXTENSIONS = ("_C", "_moe_C", "_core_C", "vllm_flash_attn_c")


def read(path, default=""):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return default


def ninja_sessions(text):
    """[[(start_ms, end_ms, target), ...], ...]: one list per ninja run (its clock restarts at 0)."""
    sessions, last_start = [], None
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        start, end, _mtime, target = line.split("\t")[:4]
        start, end = int(start), int(end)
        if last_start is None or start < last_start:
            sessions.append([])
        sessions[-1].append((start, end, target))
        last_start = start
    return sessions


def ninja_figures(text):
    sessions = ninja_sessions(text)
    steps = [step for session in sessions for step in session]
    slowest = sorted(steps, key=lambda s: s[1] - s[0], reverse=True)[:5]
    return {
        "sessions": len(sessions),
        "steps": len(steps),
        "wall_seconds": round(sum((max(s[1] for s in ss) - min(s[0] for s in ss)) / 1000 for ss in sessions if ss), 1),
        "job_seconds": round(sum(s[1] - s[0] for s in steps) / 1000, 1),
        "slowest": [[os.path.basename(s[2]), round((s[1] - s[0]) / 1000, 1)] for s in slowest],
    }


def ccache_figures(text):
    """hits and misses from ccache --print-stats (tab-separated key value lines)."""
    stats = dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)

    def number(key):
        return int(stats.get(key, "0").strip() or 0)
    return {"hits": number("direct_cache_hit") + number("preprocessed_cache_hit"), "misses": number("cache_miss")}


def seconds(path):
    return sum(int(line) for line in read(path).split() if line.strip().isdigit())


def run_figures(state, fixture, name):
    peak = read(os.path.join(state, name + ".peak")).strip()
    return {
        "role_seconds": seconds(os.path.join(state, name + ".seconds")),
        "ninja": ninja_figures(read(os.path.join(fixture, "ninja_log-%s.txt" % name))),
        "peak_memory_bytes": int(peak) if peak.isdigit() else None,
        "ccache": ccache_figures(read(os.path.join(fixture, "ccache-%s.txt" % name))),
    }


def listing(fixture, ext, kind):
    found = re.findall(r"\.(sm_\d+a?)\.(?:cubin|ptx)", read(os.path.join(fixture, "%s.list-%s.txt" % (ext, kind))))
    return {arch: found.count(arch) for arch in sorted(set(found))}


def wheel(fixture):
    """The built wheel from `ls -l` of the wheel cache."""
    for line in read(os.path.join(fixture, "wheel.txt")).splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[-1].endswith(".whl"):
            return {"name": os.path.basename(parts[-1]), "bytes": int(parts[4])}
    return None


def main(state, fixture):
    objects = dict(line.split() for line in read(os.path.join(fixture, "objects.txt")).splitlines() if line.strip())
    summary = {
        "what": "vLLM 0.6.3 built from source by the vllm_install role for TORCH_CUDA_ARCH_LIST=8.9 (RTX 4090)",
        "conditions": json.loads(read(os.path.join(state, "conditions.json"), "{}")),
        "cold": run_figures(state, fixture, "cold"),
        "warm": run_figures(state, fixture, "warm"),
        "objects": {name: int(count) for name, count in objects.items()},
        "extensions": {ext: {"elf": listing(fixture, ext, "elf"), "ptx": listing(fixture, ext, "ptx")} for ext in EXTENSIONS},
        "wheel": wheel(fixture),
        "pypi_wheel": PYPI_WHEEL,
    }
    cold, warm = summary["cold"]["role_seconds"], summary["warm"]["role_seconds"]
    summary["warm_over_cold"] = round(warm / cold, 3) if cold and warm else None
    with open(os.path.join(fixture, "summary.json.tmp"), "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=2, sort_keys=True)
        out.write("\n")
    os.replace(os.path.join(fixture, "summary.json.tmp"), os.path.join(fixture, "summary.json"))
    print(json.dumps(summary, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(*sys.argv[1:3])
