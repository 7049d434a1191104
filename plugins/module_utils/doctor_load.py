# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's two opt-in checks under load, judged: the GPU bandwidth test and the burn-in. Pure functions over
the JSON that roles/doctor/files/gpu_load.py (bandwidth, burnin) prints on the host, and over what the doctor
read around the burn-in (stress-ng's exit and its last lines, the EDAC counters, the kernel's Xid lines since its
start). Checks in the host report's shape (plugins/module_utils/report.py)."""

from __future__ import annotations

import json

from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils.gpu_metrics import count_xids
from ansible_collections.llmhost.vllm.plugins.module_utils.pci import bus_id
from ansible_collections.llmhost.vllm.plugins.module_utils.report import FAIL, INFO, PASS, WARN, check

# One direction of a PCIe link, per lane, in GB/s after line coding (gen 1-2: 8b/10b; gen 3-5: 128b/130b;
# gen 6: FLIT mode, about 242/256).
LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
# Copies from pinned memory reach 80-90 % of that on a healthy link (a lent H200 at gen5 x16: 55.3 of 63.0 GB/s);
# half or less is a link trained below its lanes or generation, or one shared with another device.
COPY_PASS, COPY_FAIL = 0.6, 0.3
# An all-reduce between GPUs without NVLink crosses the slowest GPU's link (through host memory where the GPUs
# have no P2P, as GeForce cards): its bus bandwidth is judged against that link.
ALL_REDUCE_PASS, ALL_REDUCE_FAIL = 0.4, 0.2
# Clock event reasons a GPU under full load may show: the power cap is how it is meant to run at full load.
_LOAD_REASONS = {"gpu_idle", "applications_clocks_setting", "sw_power_cap", "sync_boost", "display_clock_setting"}
_STAND_IN = "the container scenario's stand-in (no GPU): proves the test and the report, not a GPU"


def script_result(run):
    """The JSON the script printed, from its task's result ({stdout, stderr, rc, msg}); None when the task was
    skipped or absent; {"error": ...} when it printed none."""
    if not run or run.get("skipped"):
        return None
    printed = (run.get("stdout") or "").strip()
    try:
        return json.loads(printed)
    except ValueError:
        detail = (run.get("stderr") or run.get("msg") or "").strip()[-300:]
        return {"error": "no result (exit %s): %s" % (run.get("rc", "-"), detail or "nothing printed")}


def link_gbps(gen, width):
    """One direction of a PCIe link of this generation and width, in GB/s; None when either is unknown."""
    if not gen or not width or int(gen) not in LANE_GBPS:
        return None
    return round(LANE_GBPS[int(gen)] * int(width), 1)


def _ratio_status(ratio, good, bad):
    return PASS if ratio >= good else WARN if ratio >= bad else FAIL


def _max_link(gpu, topo):
    """The link's maximum (gen, width): what the script read through NVML, else the facts' view."""
    pcie = (topo or {}).get("pcie") or {}
    return gpu.get("gen_max") or pcie.get("gen_max"), gpu.get("width_max") or pcie.get("width_max")


def copy_checks(result, topo_gpus):
    """Per GPU: host-to-device and device-to-host copies against what the link should give."""
    topo = {g.get("index"): g for g in topo_gpus or []}
    out = []
    for g in result.get("gpus") or []:
        gen, width = _max_link(g, topo.get(g.get("index")))
        should, worst = link_gbps(gen, width), min(g.get("h2d_gbps") or 0, g.get("d2h_gbps") or 0)
        have = "to the GPU %s GB/s, back %s GB/s; link gen%s x%s while copying" % (
            g.get("h2d_gbps"), g.get("d2h_gbps"), g.get("gen"), g.get("width"))
        item = "GPU %s copies over PCIe" % g.get("index")
        if not should:
            out.append(check("bandwidth", item, "the link's rate (its maximum unknown)", have, INFO))
            continue
        status = _ratio_status(worst / should, COPY_PASS, COPY_FAIL)
        out.append(check("bandwidth", item, ">= %d%% of gen%s x%s's %.1f GB/s" % (COPY_PASS * 100, gen, width, should),
                         "%s (%d%%)" % (have, round(100 * worst / should)), status,
                         "" if status == PASS else "the link moves less than it should: reseat the card, check its "
                         "slot, riser and the BIOS's PCIe settings; a slot shared with other devices (through the "
                         "chipset) gives less"))
    return out


def _nvlinked(links):
    return any(str(v).startswith("NV") for v in (links or {}).values())


def all_reduce_checks(result, topo_gpus, links):
    """The all-reduce between GPUs (bus bandwidth), against the slowest GPU's link unless NVLink joins them."""
    ar, item = result.get("all_reduce"), "all-reduce between the GPUs"
    if not ar:
        return [check("bandwidth", item, "measured", "not run: %s" % (result.get("skipped") or "no result"), INFO)]
    if ar.get("error") or not ar.get("correct"):
        return [check("bandwidth", item, "the right sum, within the time allowed",
                      ar.get("error") or "the sum was wrong", FAIL,
                      "NCCL could not complete an all-reduce: run it with NCCL_DEBUG=INFO; on GeForce cards with a "
                      "535 driver, NCCL_P2P_DISABLE=1")]
    have = "bus %s GB/s (algorithm %s GB/s), %d ranks, NCCL %s" % (
        ar.get("busbw_gbps"), ar.get("algbw_gbps"), ar.get("ranks"), ar.get("nccl") or "-")
    if result.get("device") == "cpu":
        return [check("bandwidth", item + " (stand-in: gloo on CPU)", "the right sum", have, INFO, _STAND_IN)]
    if _nvlinked(links):
        return [check("bandwidth", item, "NVLink's rate (not judged here)", have, INFO)]
    slowest = min((link_gbps(*_max_link({}, g)) or 0 for g in topo_gpus or []), default=0)
    if not slowest:
        return [check("bandwidth", item, "the slowest link's rate (unknown)", have, INFO)]
    ratio = (ar.get("busbw_gbps") or 0) / slowest
    status = _ratio_status(ratio, ALL_REDUCE_PASS, ALL_REDUCE_FAIL)
    return [check("bandwidth", item, ">= %d%% of the slowest GPU link's %.1f GB/s" % (ALL_REDUCE_PASS * 100, slowest),
                  "%s (%d%%)" % (have, round(100 * ratio)), status,
                  "" if status == PASS else "tensor parallelism waits on this: check each GPU's copies above and "
                  "the host report's link widths; one replica per GPU does not need it")]


def bandwidth_checks(result, topo_gpus, links):
    """The opt-in bandwidth test's checks; [] when it did not run."""
    if result is None:
        return []
    if result.get("error"):
        return [check("bandwidth", "GPU bandwidth test", "a result", result["error"], FAIL,
                      "run roles/doctor/files/gpu_load.py bandwidth with the vLLM venv's Python to see it")]
    if result.get("skipped") and not result.get("gpus"):
        return [check("bandwidth", "GPU bandwidth test", "run on the GPUs", "not run: %s" % result["skipped"], WARN,
                      "the vLLM venv's torch must see the GPUs (nvidia-smi, the driver)")]
    return copy_checks(result, topo_gpus) + all_reduce_checks(result, topo_gpus, links)


def _deltas(before, after):
    """Counters that went up during the burn-in: {name: increase}; None when the GPU does not count them."""
    if not before or not after:
        return None
    out = {}
    for key in ("ecc_corrected", "ecc_uncorrected", "pcie_replays"):
        if isinstance(before.get(key), int) and isinstance(after.get(key), int) and after[key] > before[key]:
            out[key] = after[key] - before[key]
    for key in ("remapped_rows_pending", "remap_failed"):
        if after.get(key):
            out[key] = True
    return out


def _gpu_burnin_problems(g):
    """What went wrong on one GPU during the burn-in, as short phrases."""
    problems = []
    if g.get("error"):
        problems.append(g["error"])
    if g.get("memory_errors"):
        problems.append("%d memory element(s) read back wrong" % g["memory_errors"])
    slowdowns = sorted(set(nv.decode_event_reasons(g.get("reasons_mask") or 0) or []) - _LOAD_REASONS)
    if slowdowns:
        problems.append("clocks slowed by " + ", ".join(slowdowns))
    for key, value in sorted((_deltas(g.get("counters_before"), g.get("counters_after")) or {}).items()):
        problems.append("%s: %s" % (key, "+%d" % value if value is not True else "yes"))
    return problems


def _gpu_burnin_have(g):
    counted = _deltas(g.get("counters_before"), g.get("counters_after")) is not None
    return ("%s s, %s TFLOP/s, %s GiB x %s passes; hottest %s C, %s W; SM %s-%s MHz; reasons %s; error counters %s"
            % (g.get("seconds"), g.get("tflops"), g.get("memory_gib"), g.get("memory_passes"), g.get("max_temp_c"),
               g.get("max_power_w"), g.get("sm_mhz_min"), g.get("sm_mhz_max"),
               ", ".join(nv.decode_event_reasons(g.get("reasons_mask") or 0) or []) or "none",
               "read" if counted else "not kept by this GPU"))


def gpu_burnin_checks(result):
    """Per GPU: the load ran, memory read back right, no slowdown but the power cap, no error counted."""
    if result.get("error") or (result.get("skipped") and not result.get("gpus")):
        return [check("burnin", "GPU burn-in", "run on the GPUs", result.get("error") or "not run: %s" % result["skipped"],
                      FAIL if result.get("error") else WARN, "the vLLM venv's torch must see the GPUs")]
    out = []
    for g in result.get("gpus") or []:
        problems, stand_in = _gpu_burnin_problems(g), result.get("device") == "cpu"
        status = FAIL if problems else INFO if stand_in else PASS
        out.append(check("burnin", "GPU %s burn-in%s" % (g.get("index"), " (stand-in: CPU)" if stand_in else ""),
                         "no error, no slowdown but the power cap, no ECC or PCIe error counted",
                         "; ".join(problems) or _gpu_burnin_have(g), status,
                         "see nvidia-smi -q -d PERFORMANCE,ECC and the kernel log; a card that fails here fails in "
                         "service: check cooling, power cables and its slot" if problems else
                         _STAND_IN if stand_in else ""))
    return out


def edac_counts(lines):
    """{path: count} from `grep -H . .../mc*/{ce,ue}_count` lines."""
    out = {}
    for line in lines or []:
        path, _sep, value = line.rpartition(":")
        if path and value.strip().isdigit():
            out[path] = int(value)
    return out


def host_burnin_checks(host):
    """The host's memory under stress-ng: its exit and the EDAC counters (memory errors the platform corrected or
    could not)."""
    if not host.get("ran"):
        return [check("burnin", "host memory burn-in", "stress-ng ran", host.get("why") or "not run", WARN,
                      "install stress-ng (the doctor installs it unless run with --check)")]
    before, after = edac_counts(host.get("edac_before")), edac_counts(host.get("edac_after"))
    grown = {p.split("/")[-2] + "/" + p.split("/")[-1]: after[p] - before.get(p, 0)
             for p in after if after[p] > before.get(p, 0)}
    problems = (["stress-ng exited %s: %s" % (host.get("rc"), host.get("tail") or "")] if host.get("rc") else [])
    problems += ["EDAC %s +%d" % kv for kv in sorted(grown.items())]
    have = "%s; EDAC %s" % (host.get("tail") or "stress-ng exited 0", "counted" if after else "not present on this host")
    return [check("burnin", "host memory burn-in", "stress-ng exits 0, no EDAC error counted",
                  "; ".join(problems) or have, FAIL if problems else PASS,
                  "memory errors under load: run a full memory test (memtest86+) and check the DIMMs" if problems else "")]


def xid_burnin_checks(kernel_log_lines, read, gpus):
    """Xid lines logged during the burn-in, per GPU."""
    if not read:
        return [check("burnin", "Xid lines during the burn-in", "none", "the kernel log could not be read", INFO)]
    names = {bus_id(g.get("pci_bus_id")): g.get("index") for g in gpus or []}
    counts = count_xids(kernel_log_lines or [])
    if not counts:
        return [check("burnin", "Xid lines during the burn-in", "none", "none", PASS)]
    return [check("burnin", "GPU %s Xid %d during the burn-in" % (names.get(bus, bus), xid), "none", "%d line(s)" % n,
                  FAIL, "see NVIDIA's Xid catalogue for Xid %d" % xid)
            for (bus, xid), n in sorted(counts.items(), key=lambda kv: (kv[0][0] or "", kv[0][1]))]


def burnin_checks(burnin, gpus):
    """The opt-in burn-in's checks ({"gpu": script JSON, "host": stress-ng, "kernel_log", "kernel_log_read"}); []
    when it did not run."""
    if burnin is None:
        return []
    gpu = script_result(burnin.get("gpu")) or {"error": "the burn-in did not run"}
    return (gpu_burnin_checks(gpu) + host_burnin_checks(burnin.get("host") or {})
            + xid_burnin_checks(burnin.get("kernel_log"), burnin.get("kernel_log_read"), gpus))
