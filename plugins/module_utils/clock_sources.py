# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live reading of GPU clocks for gpu_clock_info and gpu_clocks (NVML first, then nvidia-smi)."""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils import clocks
from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv


def read_clock_info(run=None, nvidia_smi=None, use_nvml=True, pynvml=None):
    """(source, gpus, warnings)."""
    warnings = []
    dump = nv.collect_or_note(pynvml, warnings, clocks=True) if use_nvml else None
    if dump is not None:
        if nv.err(dump.get("init")):
            warnings.append("NVML did not initialise (%s: %s)." % (dump["init"]["err"], dump["init"].get("msg")))
        else:
            gpus = clocks.info_from_nvml(dump)
            if gpus:
                return "nvml", gpus, warnings
    if not nvidia_smi:
        warnings.append("nvidia-smi is not installed: no GPU clocks to read.")
        return "none", [], warnings
    fields = list(clocks.SMI_CLOCK_FIELDS)
    rc, out, err = run([nvidia_smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0 and "clocks_event_reasons" in (out + err):
        fields = [clocks.LEGACY_FIELD_NAMES.get(f, f) for f in fields]
        rc, out, err = run([nvidia_smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0:
        problems = smi.parse_errors(out + "\n" + err)
        warnings.extend(p["message"] for p in problems)
        if not problems:
            warnings.append("nvidia-smi --query-gpu failed (rc %s): %s" % (rc, (err or out).strip()[:300]))
        return "none", [], warnings
    rows = smi.parse_query_csv(out, fields, keep_placeholders=True)
    rc, out, err = run([nvidia_smi, "--query-supported-clocks=gpu_uuid,memory,graphics", "--format=csv,noheader,nounits"])
    supported = clocks.parse_supported_clocks(out) if rc == 0 else {}
    if rc != 0:
        warnings.append("nvidia-smi --query-supported-clocks failed (rc %s)." % rc)
    return "nvidia-smi", clocks.info_from_smi(rows, supported), warnings
