"""Shared by the unit and integration tests: this checkout importable as ``ansible_collections.llmhost.vllm``, our
host captures (in the repo) and public captures (../shared)."""
import atexit
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = ROOT / ".cache" / "collections" / "ansible_collections" / "llmhost" / "vllm"
if not LINK.exists():
    LINK.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(ROOT, LINK)
sys.path.insert(0, str(ROOT / ".cache" / "collections"))

# Public captures live beside the checkout (../shared) and are read in place, never copied.
SHARED = Path(os.environ.get("LLMHOST_SHARED", ROOT.parent / "shared"))
HOSTS = ROOT / "tests" / "fixtures" / "hosts"
_UNPACKED = {}


class Capture:
    """One captured host: its sysfs/procfs tree, command outputs and NVML dump."""

    def __init__(self, name):
        self.name = name
        self.dir = HOSTS / name

    @property
    def root(self):
        """The captured /sys and /proc tree, unpacked once per run (it ships as root.tar.gz: sysfs
        names carry ':', which ansible-test's no-illegal-filenames refuses in a collection)."""
        if self.name not in _UNPACKED:
            dest = Path(tempfile.mkdtemp(prefix="llmhost-capture-%s-" % self.name))
            atexit.register(shutil.rmtree, str(dest), True)
            with tarfile.open(self.dir / "root.tar.gz") as tar:
                tar.extractall(dest, filter="data")
            _UNPACKED[self.name] = str(dest / "root")
        return _UNPACKED[self.name]

    def cmd(self, name):
        return (self.dir / "cmd" / name).read_text()

    def nvml(self):
        return json.loads((self.dir / "nvml.json").read_text())

    def runner(self, calls=None):
        """A run_command stand-in answering nvidia-smi calls from the captured outputs."""
        def run(argv):
            if calls is not None:
                calls.append(argv)
            args = argv[1:]
            if args[:2] == ["topo", "-m"]:
                return 0, self.cmd("nvidia-smi-topo-m.txt"), ""
            if args[:3] == ["topo", "-p2p", "r"]:
                return 0, self.cmd("nvidia-smi-topo-p2p-r.txt"), ""
            if args and args[0].startswith("--query-gpu="):
                return 0, _query_from_capture(self, args[0][len("--query-gpu="):].split(",")), ""
            return 2, "", "unexpected command %r" % argv
        return run


def _query_from_capture(capture, fields):
    """Answer a --query-gpu call from the captured CSV, for the fields the capture has."""
    text = capture.cmd("nvidia-smi-query.csv").splitlines()
    header = [h.strip().split(" [")[0] for h in text[0].split(",")]
    out = []
    for line in text[1:]:
        cells = dict(zip(header, [c.strip() for c in line.split(", ")]))
        out.append(", ".join(cells.get(f, "[N/A]") for f in fields))
    return "\n".join(out) + "\n"


@pytest.fixture(params=["h200x1", "h200x2"])
def capture(request):
    return Capture(request.param)


@pytest.fixture
def h200x2():
    return Capture("h200x2")


@pytest.fixture
def h200x2_device():
    """What tests/device/facts_proof.sh brought back from a lent 2x H200 machine (2026-11-29)."""
    return Capture("h200x2-device")


@pytest.fixture(params=["h200x1-device", "h200x2-device"])
def device_capture(request):
    """What tests/device/facts_proof.sh brought back from lent 1x and 2x H200 machines."""
    return Capture(request.param)


@pytest.fixture
def shared():
    """The public captures folder, or skip with the reason."""
    public = SHARED / "fixtures" / "public"
    if not public.is_dir():
        pytest.skip("public captures not found at %s (they live in ../shared, never in the repo)" % public)
    return public


@pytest.fixture
def rtx4090x2(shared):
    """The design card's box: 2x RTX 4090 (24564 MiB, compute capability 8.9, one NUMA node) with the
    peer-to-peer matrix a user posted for a GeForce pair (NS: not supported), and the PCIe link a user posted for a
    4090 (lspci/club3090-1125-...: LnkCap Speed 16GT/s, Width x16: gen 4 x16)."""
    from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi  # after the path is set
    p2p = smi.parse_p2p_matrix((shared / "topo" / "club3090-1125-2gpu-p2p-ns-indented.txt").read_text())
    gpus = [{"index": i, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "memory_total_mib": 24564,
             "numa_node": 0, "cpu_affinity": "0-31", "pcie": _rtx4090_link(shared)} for i in (0, 1)]
    return gpus, p2p


def _rtx4090_link(shared):
    """The 4090's (c1:00.0) LnkCap in a user's lspci capture: its generation (by transfer rate) and width."""
    text = (shared / "lspci" / "club3090-1125-3090-plus-4090-h12ssl-lnksta-wrapped-lines-PARTIAL.txt").read_text()
    block = text.split("-s 0000:c1:00.0", 1)[1]
    speed, width = re.search(r"LnkCap:.*?Speed ([\d.]+)GT/s, Width x(\d+)", block).groups()
    return {"gen_max": {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5}[speed], "width_max": int(width)}


@pytest.fixture
def run_main(capsys):
    """A module's main() run as Ansible would: arguments in, the JSON it prints out, with its exit code."""
    from ansible.module_utils.testing import patch_module_args

    def run(main, args):
        with patch_module_args(args):
            with pytest.raises(SystemExit) as exc:
                main()
        out = json.loads(capsys.readouterr().out)
        out["rc"] = exc.value.code
        return out
    return run
