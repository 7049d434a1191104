"""gpu_topology assembled from real captures, checked against the same host's nvidia-smi output."""
import copy

from ansible_collections.llmhost.vllm.plugins.module_utils import nvidia_smi as smi
from ansible_collections.llmhost.vllm.plugins.module_utils import pci, sysfs, topology


def _smi_view(capture):
    """What nvidia-smi said on that host: the CSV rows, keyed by index."""
    return dict((int(r["index"]), r) for r in smi.parse_query_csv(capture.cmd("nvidia-smi-query.csv")))


def _build(capture, **over):
    args = dict(nvml_dump=capture.nvml(), smi_topo=smi.parse_topo_matrix(capture.cmd("nvidia-smi-topo-m.txt")),
                smi_p2p=smi.parse_p2p_matrix(capture.cmd("nvidia-smi-topo-p2p-r.txt")),
                sys_gpus=sysfs.nvidia_gpus(capture.root), driver=sysfs.driver_info(capture.root))
    args.update(over)
    return topology.build(**args)


def test_nvml_view_matches_nvidia_smi(capture):
    fact = _build(capture)
    view = _smi_view(capture)
    assert fact["source"] == "nvml"
    assert [g["index"] for g in fact["gpus"]] == sorted(view)
    for g in fact["gpus"]:
        row = view[g["index"]]
        assert g["name"] == row["name"]
        assert g["uuid"] == row["uuid"]
        assert g["pci_bus_id"] == pci.bus_id(row["pci.bus_id"])
        assert g["compute_capability"] == row["compute_cap"]
        assert g["pcie"]["gen_current"] == int(row["pcie.link.gen.current"])
        assert g["pcie"]["width_max"] == int(row["pcie.link.width.max"])
        assert g["persistence_mode"] is (row["persistence_mode"] == "Enabled")
        assert g["power_limit_w"] == smi.number(row["power.limit"])
        assert g["pcie"]["downgraded"] is False
    assert fact["driver"] == {"version": view[0]["driver_version"], "cuda_version": "13.0", "loaded": True}
    assert fact["arch_list"] == "9.0"
    assert fact["errors"] == [] and fact["warnings"] == []


def test_links_and_p2p_on_the_nvlink_pair(h200x2):
    fact = _build(h200x2)
    # NVML's common ancestor says HOSTBRIDGE (30) here; topo -m knows it is NVLink.
    assert h200x2.nvml()["devices"][0]["topology"]["1"]["ok"] == 30
    assert fact["links"] == {"0,1": "NV18"}
    assert fact["p2p"] == {"0,1": "OK"}


def test_numa_and_affinity_come_from_nvml_not_the_vm_sysfs(capture):
    # sysfs numa_node is -1 in these VMs; NVML's memory affinity and topo -m both say node 0.
    assert all(g["numa_node"] is None for g in sysfs.nvidia_gpus(capture.root))
    fact = _build(capture)
    topo = smi.parse_topo_matrix(capture.cmd("nvidia-smi-topo-m.txt"))
    for g, t in zip(fact["gpus"], topo["gpus"]):
        assert g["numa_node"] == int(t["numa_affinity"])
        assert g["cpu_affinity"] == t["cpu_affinity"]


def test_sysfs_only_still_names_every_gpu(capture):
    fact = topology.build(sys_gpus=sysfs.nvidia_gpus(capture.root), driver=sysfs.driver_info(capture.root))
    assert fact["source"] == "sysfs"
    assert [g["name"] for g in fact["gpus"]] == [r["name"] for r in _smi_view(capture).values()]
    assert fact["arch_list"] == "9.0"
    assert fact["driver"]["version"] == "580.159.04"


def test_topo_alone_gives_one_entry_per_gpu(h200x2):
    fact = topology.build(smi_topo=smi.parse_topo_matrix(h200x2.cmd("nvidia-smi-topo-m.txt")))
    assert fact["source"] == "nvidia-smi"
    assert [(g["index"], g["cpu_affinity"], g["numa_node"]) for g in fact["gpus"]] == [(0, "0-31", 0), (1, "0-31", 0)]
    assert fact["links"] == {"0,1": "NV18"}


def test_missing_field_comes_from_the_next_source(h200x2):
    dump = h200x2.nvml()
    for dev in dump["devices"]:
        dev["nvmlDeviceGetCudaComputeCapability"] = {"err": "NVMLError_NotSupported", "msg": "Not Supported"}
    rows = smi.parse_query_csv(h200x2.cmd("nvidia-smi-query.csv"))
    fact = _build(h200x2, nvml_dump=dump, smi_rows=rows)
    assert [g["compute_capability"] for g in fact["gpus"]] == ["9.0", "9.0"]


def test_narrow_link_p2p_and_split_numa_are_warned(h200x2):
    dump = h200x2.nvml()
    dump["devices"][1]["nvmlDeviceGetCurrPcieLinkWidth"] = {"ok": 8}
    dump["devices"][1]["mem_affinity_node"] = {"ok": [2, 0, 0, 0]}
    dump["devices"][0]["p2p_read"]["1"] = {"ok": 5}  # NVML_P2P_STATUS_NOT_SUPPORTED
    fact = _build(h200x2, nvml_dump=dump, smi_topo=None, smi_p2p=None)
    assert fact["p2p"] == {"0,1": "NS"}
    assert fact["gpus"][1]["pcie"]["downgraded"] is True
    assert fact["gpus"][1]["numa_node"] == 1
    text = " ".join(fact["warnings"])
    assert "x8 of its x16" in text and "peer-to-peer (NS)" in text and "different NUMA nodes" in text


def test_gpu_on_the_bus_but_not_in_the_driver_is_an_error(h200x2):
    dump = copy.deepcopy(h200x2.nvml())
    dump["devices"] = dump["devices"][:1]
    # the driver lost GPU 1: neither NVML nor nvidia-smi list it, sysfs still does
    fact = _build(h200x2, nvml_dump=dump, smi_topo=None, smi_p2p=None)
    assert any("0000:00:07.0 is on the PCI bus but the driver does not show it" in e for e in fact["errors"])
    assert len(fact["gpus"]) == 2


def test_nvml_mismatch_and_no_gpu():
    fact = topology.build(nvml_dump={"init": {"err": "NVMLError_LibRmVersionMismatch", "msg": "mismatch"}})
    assert fact["source"] == "none" and "mismatch" in fact["errors"][0]
    empty = topology.build()
    assert empty["gpus"] == [] and empty["arch_list"] is None and "no NVIDIA GPU" in empty["warnings"][0]


def test_arch_list_for_mixed_gpus():
    gpus = [{"compute_capability": "8.9"}, {"compute_capability": "8.6"}, {"compute_capability": "8.9"}, {}]
    assert topology.arch_list(gpus) == "8.6;8.9"


def test_err_cells_in_the_csv_are_errors():
    rows = [{"index": "0", "name": "NVIDIA A30", "pci.bus_id": "00000000:3B:00.0", "power.limit": "ERR!",
             "pcie.link.width.current": "ERR!"}]
    fact = topology.build(smi_rows=rows)
    assert fact["errors"] and "ERR! for pcie.link.width.current, power.limit" in fact["errors"][0]
    assert fact["gpus"][0]["power_limit_w"] is None
