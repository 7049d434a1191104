# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live collection for gpu_facts: which sources to ask, in which order, and when to stop.

Kept apart from the pure assembly in topology.py; ``run`` is a callable like
AnsibleModule.run_command (argv list -> (rc, stdout, stderr)) so tests can replay captures.
"""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils import sysfs
from ansible_collections.llmhost.vllm.plugins.module_utils import topology

_NEEDED = ("name", "uuid", "compute_capability", "memory_total_mib", "power_limit_w", "power_limit_min_w",
           "power_limit_max_w", "persistence_mode")


def query_gpus(run, nvidia_smi, fields=topology.SMI_FIELDS):
    """`--query-gpu` rows, retrying without compute_cap on drivers that do not know the field."""
    fields = list(fields)
    rc, out, err = run([nvidia_smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0 and "compute_cap" in fields and "compute_cap" in (out + err):
        fields.remove("compute_cap")
        rc, out, err = run([nvidia_smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0:
        failed = {"kind": "failed", "message": "nvidia-smi --query-gpu failed (rc %s): %s" % (rc, (err or out).strip()[:300])}
        return [], smi.parse_errors(out + "\n" + err) or [failed]
    return smi.parse_query_csv(out, fields), []


def gather(root="/", run=None, nvidia_smi=None, pynvml=None, use_nvml=True, notes=None, live=None):
    """Collect from every source that is needed and available; returns the gpu_topology fact.

    ``live`` says whether NVML and nvidia-smi describe the tree under ``root`` (true for "/";
    tests replaying a capture set it explicitly).
    """
    notes = list(notes or [])
    live = (root or "/") == "/" if live is None else live
    sys_gpus = sysfs.nvidia_gpus(root)
    driver = sysfs.driver_info(root)
    dump = None
    if use_nvml and live:
        dump = nv.collect_or_note(pynvml, notes)
    elif not live:
        notes.append("root=%s: NVML and nvidia-smi describe the running host, not that tree; only sysfs/procfs were read." % root)

    fact = topology.build(nvml_dump=dump, sys_gpus=sys_gpus, driver=driver, notes=notes)
    if not live:
        return fact
    have_nvml = fact["source"] == "nvml"
    need_rows = not have_nvml or any(g.get(k) is None for g in fact["gpus"] for k in _NEEDED)
    unresolved = have_nvml and _nvlink_unresolved(dump)
    pairs = len(fact["gpus"]) * (len(fact["gpus"]) - 1) // 2
    need_topo = not have_nvml or unresolved or len(fact["links"]) < pairs or any(g.get("cpu_affinity") is None for g in fact["gpus"])
    need_p2p = not have_nvml or len(fact["p2p"]) < pairs
    if not nvidia_smi:
        if sys_gpus and not have_nvml:
            notes.append("nvidia-smi is not installed: facts come from sysfs alone.")
        return topology.build(nvml_dump=dump, sys_gpus=sys_gpus, driver=driver, notes=notes)
    if not (need_rows or need_topo or need_p2p):
        return fact
    rows, errors, topo, p2p = [], [], None, None
    if need_rows:
        rows, errors = query_gpus(run, nvidia_smi)
    if need_topo and not errors:
        rc, out, err = run([nvidia_smi, "topo", "-m"])
        topo = smi.parse_topo_matrix(out) if rc == 0 else None
        if rc != 0:
            errors.extend(smi.parse_errors(out + "\n" + err))
    if need_p2p and not errors and (len(sys_gpus) > 1 or len(fact["gpus"]) > 1 or rows and len(rows) > 1):
        rc, out, err = run([nvidia_smi, "topo", "-p2p", "r"])
        p2p = smi.parse_p2p_matrix(out) if rc == 0 else None
    return topology.build(nvml_dump=dump, smi_rows=rows, smi_topo=topo, smi_p2p=p2p, smi_errors=errors,
                          sys_gpus=sys_gpus, driver=driver, notes=notes)


def _nvlink_unresolved(dump):
    for dev in (dump or {}).get("devices") or []:
        if dev.get("nvlinks") is None and nv.ok(dev.get("nvlink_state_0")):
            return True
        for link in dev.get("nvlinks") or []:
            if nv.ok(link.get("state")) and nv.ok(link.get("remote_type")) != nv.NVLINK_DEVICE_TYPE_SWITCH:
                remote = nv.ok(link.get("remote_pci")) or {}
                if not remote:
                    return True
    return False
