"""nvidia-smi parsers on real outputs: our host captures and public pastes (mangled ones too)."""
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
from ansible_collections.llmhost.vllm.plugins.module_utils import pci
import yaml
from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi

CASES = yaml.safe_load((Path(__file__).parent / "public_cases.yml").read_text())


def _read(shared, rel):
    path = shared / rel
    if not path.exists():
        pytest.skip("%s is not in this copy of ../shared" % rel)
    return path.read_text(errors="replace")


@pytest.mark.parametrize("rel", sorted(CASES["topo"]))
def test_topo_public(shared, rel):
    want = CASES["topo"][rel]
    got = smi.parse_topo_matrix(_read(shared, rel))
    if "links" in want:
        assert got["links"] == want["links"]
    if "affinity" in want:
        assert [[g["cpu_affinity"], g["numa_affinity"]] for g in got["gpus"]] == want["affinity"]
    if "gpu_count" in want:
        assert len(got["gpus"]) == want["gpu_count"]
        n = want["gpu_count"]
        assert got["links"] == {"%d,%d" % (i, j): want["all_links"] for i in range(n) for j in range(i + 1, n)}
    for idx, aff in (want.get("affinity_of") or {}).items():
        g = [g for g in got["gpus"] if g["index"] == idx][0]
        assert [g["cpu_affinity"], g["numa_affinity"]] == aff


@pytest.mark.parametrize("rel", sorted(CASES["p2p"]))
def test_p2p_public(shared, rel):
    assert smi.parse_p2p_matrix(_read(shared, rel)) == CASES["p2p"][rel]


@pytest.mark.parametrize("rel", sorted(CASES["errors"]))
def test_errors_public(shared, rel):
    kind, bus = CASES["errors"][rel]
    found = smi.parse_errors(_read(shared, rel))
    assert [f["kind"] for f in found] == [kind]
    assert found[0].get("bus_id") == bus
    assert found[0]["message"]


def test_mismatch_carries_library_version(shared):
    found = smi.parse_errors(_read(shared, "errors/nvml-mismatch-with-library-version-intel-llvm-17614.txt"))
    assert found[0]["library_version"] == "550.144"


def test_every_public_topo_capture_parses_without_error(shared):
    """Also the captures not listed above: a parser must never raise on real pastes."""
    paths = sorted((shared / "topo").glob("*.txt")) + sorted((shared / "collect-env").glob("*.txt"))
    assert len(paths) >= len(CASES["topo"]), "the public captures are missing: nothing would be parsed"
    for path in paths:
        text = path.read_text(errors="replace")
        smi.parse_topo_matrix(text)
        smi.parse_p2p_matrix(text)
        smi.parse_errors(text)


def test_host_capture_topo(capture):
    topo = smi.parse_topo_matrix(capture.cmd("nvidia-smi-topo-m.txt"))
    if capture.name == "h200x2":
        assert topo["links"] == {"0,1": "NV18"}
        assert [g["cpu_affinity"] for g in topo["gpus"]] == ["0-31", "0-31"]
    else:
        assert topo["links"] == {}
        assert [g["cpu_affinity"] for g in topo["gpus"]] == ["0-15"]
    assert all(g["numa_affinity"] == "0" and g["gpu_numa_id"] is None for g in topo["gpus"])


def test_ansi_codes_real_and_pasted():
    real = "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \tPIX\t0-7\t0\t\tN/A\nGPU1\tPIX\t X \t0-7\t0\t\tN/A\n"
    pasted = real.replace("\x1b", "^[")
    for text in (real, pasted):
        assert smi.parse_topo_matrix(text)["links"] == {"0,1": "PIX"}


def test_query_csv_placeholders_and_units():
    text = "index, name, power.limit [W], clocks.applications.graphics [MHz]\n0, NVIDIA GeForce RTX 4090, 450.00 W, [N/A]\n"
    rows = smi.parse_query_csv(text)
    assert rows == [{"index": "0", "name": "NVIDIA GeForce RTX 4090", "power.limit": "450.00 W", "clocks.applications.graphics": None}]
    assert smi.number(rows[0]["power.limit"]) == 450.0
    kept = smi.parse_query_csv(text.replace("[N/A]", "[Requested functionality has been deprecated]"), keep_placeholders=True)
    assert smi.placeholder(kept[0]["clocks.applications.graphics"]) == "deprecated"


def test_query_csv_public_allfields(shared):
    rows = smi.parse_query_csv(_read(shared, "smi-query/nvge-4080super-595-idle-query-gpu-allfields-csv.txt"))
    assert len(rows) == 1
    assert rows[0]["name"] == "NVIDIA GeForce RTX 4080 SUPER"
    assert rows[0]["clocks.applications.graphics"] is None
    assert smi.number(rows[0]["power.max_limit"]) == 400.0


@pytest.mark.parametrize("raw,want", [
    ("00000000:01:00.0", "0000:01:00.0"),
    ("0000:0B:00.0", "0000:0b:00.0"),
    ("GPU0000:07:00.0", "0000:07:00.0"),
    ("c1:00.0", "0000:c1:00.0"),
    ("garbage", None),
])
def test_bus_id(raw, want):
    assert pci.bus_id(raw) == want


def test_p2p_legend_is_nvmls_codes():
    assert set(smi.P2P_LEGEND) == {"X"} | set(nv.P2P_CODES.values())
    assert smi.parse_p2p_matrix("        GPU0    GPU1\n GPU0   X       DR\n GPU1   DR      X\n") == {"0,1": "DR"}
