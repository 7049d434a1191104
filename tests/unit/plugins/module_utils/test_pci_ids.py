"""The PCI id table (module_utils/pci_ids.py) against public data: the distribution's PCI ID Repository
file (Debian package pci.ids, /usr/share/misc/pci.ids) for names and chips, and, for ids newer than
that file, real captures of the GPU where nvidia-smi reports the id and the compute capability."""
import csv
import os
import re
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import pci_ids, topology

ROOT = Path(__file__).resolve().parents[4]
HOSTS = ROOT / "tests" / "fixtures" / "hosts"
SHARED = Path(os.environ.get("LLMHOST_SHARED", ROOT.parent / "shared"))
PCI_IDS_FILE = Path("/usr/share/misc/pci.ids")
# ids that Debian 12's pci.ids (2023.04) predates: each proven by a capture whose nvidia-smi shows
# the id and the compute capability (ours from a lent H200; a public one for the RTX 4080 SUPER).
CAPTURED = {
    "0x2335": HOSTS / "h200x1" / "cmd" / "nvidia-smi-query.csv",
    "0x2702": SHARED / "fixtures/public/smi-query/nvge-4080super-595-idle-query-gpu-allfields-csv.txt",
}


def nvidia_entries():
    """{"0x2684": "AD102 [GeForce RTX 4090]", ...} from the vendor 10de block of pci.ids."""
    if not PCI_IDS_FILE.exists():
        pytest.fail("%s is missing: tests/harness/host-deps.sh unit installs the pci.ids package" % PCI_IDS_FILE)
    out, inside = {}, False
    for line in PCI_IDS_FILE.read_text(encoding="utf-8", errors="replace").splitlines():
        if re.match(r"^[0-9a-f]{4}\s", line):
            inside = line.startswith("10de ")
        elif inside and re.match(r"^\t[0-9a-f]{4}\s", line):
            out["0x" + line[1:5]] = line[5:].strip()
    return out


@pytest.mark.parametrize("device_id", sorted(set(pci_ids.TABLE) - set(CAPTURED)))
def test_each_entry_matches_the_pci_id_repository(device_id):
    name, cc, chip = pci_ids.TABLE[device_id]
    entry = nvidia_entries().get(device_id)
    assert entry, "%s is not in %s: prove it with a capture (CAPTURED)" % (device_id, PCI_IDS_FILE)
    listed_chip = re.match(r"^([A-Z]{2}\d{3}[A-Z]*)", entry).group(1)
    assert listed_chip.startswith(chip), (device_id, entry)
    assert pci_ids.family_cc(listed_chip) == cc, (device_id, entry, cc)
    marketing = re.sub(r"^(NVIDIA|Tesla)\s+", "", name).replace("-", " ").split()
    assert all(word.lower() in entry.lower().replace("-", " ") for word in marketing[:2]), (name, entry)


@pytest.mark.parametrize("device_id", sorted(CAPTURED))
def test_ids_newer_than_the_file_match_a_capture_of_the_gpu(device_id):
    rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(CAPTURED[device_id].open())]
    name, cc, chip = pci_ids.TABLE[device_id]
    row = rows[0]
    assert row["name"] == name and row["compute_cap"] == cc and pci_ids.family_cc(chip) == cc
    if "pci.device_id" in row:
        assert row["pci.device_id"].lower() == device_id + "10de"


def test_the_motivating_box_builds_before_its_driver_is_loaded():
    """2x RTX 4090 seen only through sysfs (a fresh host before its first reboot): arch 8.9, and the fact says so."""
    sys_gpus = [{"pci_bus_id": "0000:%02x:00.0" % bus, "device_id": "0x2684", "numa_node": 0, "cpu_affinity": "0-15",
                 "pcie": {}} for bus in (1, 2)]
    fact = topology.build(sys_gpus=sys_gpus, driver={"loaded": False})
    assert fact["source"] == "sysfs" and fact["arch_list"] == "8.9" and fact["arch_list_source"] == "pci-id table"
    assert [g["name"] for g in fact["gpus"]] == ["NVIDIA GeForce RTX 4090"] * 2


def test_unknown_ids_and_other_vendors_give_nothing():
    assert pci_ids.lookup("0x10de", "0xffff") == (None, None)
    assert pci_ids.lookup("0x1002", "0x2684") == (None, None)
    assert topology.build(sys_gpus=[{"pci_bus_id": "0000:01:00.0", "device_id": "0xffff", "pcie": {}}])["arch_list_source"] is None
