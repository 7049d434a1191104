# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for nvidia-smi's stable machine interfaces.

Only ``--query-gpu=... --format=csv``, ``topo -m``, ``topo -p2p <cap>`` and nvidia-smi's
error lines are parsed; the human ``-q`` text is not. Every parser takes text and returns
plain data; none raises on odd input (ANSI codes, lost tabs, indented pastes, merged header
cells): what cannot be read is left out.
"""

from __future__ import annotations

import re

from ansible_collections.llmhost.vllm.plugins.module_utils.cpus import is_cpulist
from ansible_collections.llmhost.vllm.plugins.module_utils.nvml import P2P_CODES
from ansible_collections.llmhost.vllm.plugins.module_utils.pci import bus_id

# Real escape sequences and their caret-notation copies (^[[4m) as pasted into issues.
_ANSI_RE = re.compile(r"(\x1b|\^\[)\[[0-9;]*[A-Za-z]")
LINK_CODES = ("X", "SYS", "NODE", "PHB", "PXB", "PIX", "PXN")
_LINK_RE = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|PXN|NV\d+)\Z")
# A cell that swallowed its neighbour when a paste lost a tab ("NODENODE").
_LINKS_RE = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|PXN|NV\d+)+\Z")
# The legend of `topo -p2p`: X on the diagonal, then the codes NVML's P2P status maps to.
P2P_LEGEND = ("X",) + tuple(P2P_CODES.values())
_P2P_RE = re.compile(r"^(%s)\Z" % "|".join(P2P_LEGEND))
_DEVICE_COL_RE = re.compile(r"(GPU\d+|NIC\d+|mlx\d+_\d+)")
_ROW_RE = re.compile(r"^\s*(GPU(\d+))(?=\s)")
# Values nvidia-smi prints when a field has no value on this GPU or driver.
_NA_RE = re.compile(r"^\[?(N/A|Not Supported|Unknown Error|Requested functionality has been deprecated|"
                    r"Insufficient Permissions|Not Available|GPU requires reset|GPU is lost)\]?$", re.I)


def strip_ansi(text):
    """Remove terminal escape sequences, real or pasted in caret notation."""
    return _ANSI_RE.sub("", text or "")


# --------------------------------------------------------------------------- query CSV
def placeholder(value):
    """Kind of placeholder nvidia-smi printed instead of a value, else None.

    ``deprecated`` (GeForce application clocks on recent drivers), ``not_supported``, ``na``,
    ``no_permission``, ``error`` (GPU lost, unknown error, reset required).
    """
    v = (value or "").strip().strip("[]").lower()
    if v == "" or v in ("n/a", "not available"):
        return "na"
    if "deprecated" in v:
        return "deprecated"
    if "not supported" in v:
        return "not_supported"
    if "permission" in v:
        return "no_permission"
    if "error" in v or "lost" in v or "reset" in v:
        return "error"
    return None


def na_value(value):
    """True for the placeholders nvidia-smi prints instead of a value."""
    v = (value or "").strip()
    return v == "" or bool(_NA_RE.match(v))


def _field_name(header):
    return re.sub(r"\s*\[[^\]]*\]\s*$", "", header.strip())


def parse_query_csv(text, fields=None, keep_placeholders=False):
    """Parse ``--query-gpu=... --format=csv[,noheader][,nounits]`` output.

    With ``fields`` (the names asked for) the output may lack its header; without them the
    first line must be the header. Returns a list of dicts field -> string, with None for
    N/A-like placeholders (kept as printed with ``keep_placeholders``); a unit suffix
    ("345 MHz") is kept as printed.
    """
    lines = [ln for ln in strip_ansi(text).splitlines() if ln.strip()]
    if not lines:
        return []
    first = [c.strip() for c in lines[0].split(",")]
    if fields is None or [_field_name(c) for c in first] == list(fields):
        names = [_field_name(c) for c in first]
        lines = lines[1:]
    else:
        names = list(fields)
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.split(", ")]
        if len(cells) != len(names):
            cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(names):
            continue
        rows.append({n: (c if keep_placeholders or not na_value(c) else None) for n, c in zip(names, cells)})
    return rows


def number(value, unit_scale=None):
    """``"700.00 W"`` -> 700.0, ``"1980 MHz"`` -> 1980, ``"5"`` -> 5; None for placeholders."""
    if value is None or na_value(str(value)):
        return None
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", str(value))
    if not m:
        return None
    text = m.group(1)
    num = float(text) if "." in text else int(text)
    if unit_scale:
        num = num * unit_scale
    return num


# --------------------------------------------------------------------------- topo -m
def _split_row(line):
    """Cells of a matrix row: by tabs when the paste kept them, else by runs of spaces."""
    if "\t" in line:
        cells = [c.strip() for c in line.rstrip("\n").split("\t")]
        if cells and cells[0] == "":
            cells = cells[1:]
        return cells, True
    return line.split(), False


def _is_row(line):
    """A matrix row starts with its device name followed by a link or P2P code, a header does not."""
    m = _ROW_RE.match(line)
    if not m:
        return False
    nxt = line[m.end():].split()
    return bool(nxt) and bool(_LINKS_RE.match(nxt[0]) or _P2P_RE.match(nxt[0]))


def _header_columns(lines):
    for idx, line in enumerate(lines):
        if _is_row(line):
            continue
        cols = _DEVICE_COL_RE.findall(line)
        if cols and "GPU0" in cols:
            return idx, cols, line
    return None, [], ""


def _matrix_rows(text):
    """(device columns, [(row index, cells after the row name, row name)]) of a topo matrix."""
    lines = strip_ansi(text).splitlines()
    hidx, cols = _header_columns(lines)[:2]
    rows = []
    if hidx is None:
        return cols, rows
    for line in lines[hidx + 1:]:
        if re.match(r"^\s*Legend", line):
            break
        m = _ROW_RE.match(line)
        if m and _is_row(line):
            cells = _split_row(line)[0]
            rows.append((int(m.group(2)), cells[1:], cells[0]))
    return cols, rows


def parse_topo_matrix(text):
    """Parse ``nvidia-smi topo -m``.

    Returns ``{"gpus": [{"index", "cpu_affinity", "numa_affinity", "gpu_numa_id"}],
    "links": {"i,j": code}, "columns": [...]}``. Rows are matched by their leading
    ``GPUn``; matrix cells are taken in header order, so a merged header cell further right
    (``NIC8NIC9``) does not shift the GPU columns.
    """
    cols, rows = _matrix_rows(text)
    result = {"gpus": [], "links": {}, "columns": cols}
    gpu_cols = [c for c in cols if c.startswith("GPU")]
    matrix = {}
    for index, rest, name in rows:
        codes = []
        while rest and len(codes) < len(cols) and _LINKS_RE.match(rest[0]):
            codes.append(rest.pop(0))
        if not codes:
            continue
        cpu = numa = gid = None
        pos = next((k for k, c in enumerate(rest) if is_cpulist(c)), None)
        if pos is not None:
            cpu = rest[pos]
            after = rest[pos + 1:]
            if after and after[0] and not na_value(after[0]):
                numa = after[0]
            tail = [c for c in after[1:] if c]
            gid = tail[-1] if tail else None
        matrix[index] = dict(zip(cols, codes))
        result["gpus"].append({
            "index": index,
            "cpu_affinity": cpu,
            "numa_affinity": numa,
            "gpu_numa_id": int(gid) if gid and gid.isdigit() else None,
            "name": name,
        })
    for i in sorted(matrix):
        for col in gpu_cols:
            j = int(col[3:])
            if j > i and col in matrix[i] and matrix[i][col] != "X":
                result["links"]["%d,%d" % (i, j)] = matrix[i][col]
    return result


def parse_p2p_matrix(text):
    """Parse ``nvidia-smi topo -p2p <r|w|n|a|p>``: ``{"i,j": status}`` for i < j."""
    cols, rows = _matrix_rows(text)
    out = {}
    gpu_cols = [c for c in cols if c.startswith("GPU")]
    for i, rest, dummy in rows:
        cells = [c for c in rest if c]
        codes = []
        while cells and _P2P_RE.match(cells[0]):
            codes.append(cells.pop(0))
        for col, code in zip(gpu_cols, codes):
            j = int(col[3:])
            if j > i and code != "X":
                out["%d,%d" % (i, j)] = code
    return out


# --------------------------------------------------------------------------- errors
def parse_errors(text):
    """Recognise nvidia-smi / NVRM failure messages.

    Returns a list of ``{"kind", "message", "bus_id"?, "library_version"?}`` with kind one of
    ``no_driver``, ``version_mismatch``, ``no_devices``, ``gpu_lost``, ``fallen_off_bus``,
    ``usage``.
    """
    text = strip_ansi(text or "")
    found = []
    if re.search(r"couldn't communicate with the NVIDIA driver", text):
        found.append({"kind": "no_driver", "message": "nvidia-smi cannot talk to the NVIDIA driver: it is not loaded "
                      "(not installed, or built for another kernel)."})
    if re.search(r"Driver/library version mismatch", text):
        m = re.search(r"NVML library version:\s*([0-9.]+)", text)
        entry = {"kind": "version_mismatch", "message": "the loaded NVIDIA kernel module and the user-space NVML "
                 "library differ in version (a driver upgrade without a reboot or module reload)."}
        if m:
            entry["library_version"] = m.group(1)
            entry["message"] = entry["message"][:-1] + "; NVML library is %s." % m.group(1)
        found.append(entry)
    if re.search(r"^\s*No devices were found", text, re.M):
        found.append({"kind": "no_devices", "message": "the NVIDIA driver is loaded but initialised no GPU "
                      "(see the kernel log for RmInitAdapter errors)."})
    for m in re.finditer(r"Unable to determine the device handle for GPU\s*([0-9A-Fa-f:.]+):\s*(.+)", text):
        found.append({"kind": "gpu_lost", "bus_id": bus_id(m.group(1)),
                      "message": "GPU %s does not answer: %s" % (bus_id(m.group(1)), m.group(2).strip())})
    flat = re.sub(r"\s*\n\s*(\[[ 0-9.]+\]\s*)?NVRM:\s*", " ", text)
    for m in re.finditer(r"NVIDIA GPU\s+([0-9A-Fa-f:.]+)\s.*?fallen off the bus", flat, re.S):
        found.append({"kind": "fallen_off_bus", "bus_id": bus_id(m.group(1)),
                      "message": "GPU %s has fallen off the bus (kernel log); it needs a reboot." % bus_id(m.group(1))})
    if re.search(r"is missing its value|Invalid combination of input arguments|Unknown option", text):
        found.append({"kind": "usage", "message": "nvidia-smi rejected the command line: %s" % text.strip().splitlines()[-1]})
    return found
