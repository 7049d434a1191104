"""Fixture checks, not tests of code: the committed records of real runs (a lent GPU's, the sm_89 build's) are whole
and say what the documents built on them claim. No change to the collection's code can fail these; an edited,
cut or re-recorded record can. The code that produced each record is tested where it lives (test_vllm_ready.py,
test_sm89_build.py)."""
import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STRICT = ("_C", "_moe_C", "vllm_flash_attn_c")


def test_the_vllm_ready_record_says_what_the_module_answered_real_vllm():
    """tests/device/ready_proof.sh on a lent H200: real vLLM 0.25.0 (dummy weights, an API key), asked at once
    after its start. The module waited on /health through the model load, torch.compile and CUDA graph capture,
    then saw the model listed and a completion; a wrong key and a port with nothing behind it were refused."""
    record = FIXTURES / "device" / "vllm-ready-0.25.0-h200"
    starting = json.loads((record / "starting.json").read_text())
    (server,) = starting["servers"]
    assert not starting.get("failed") and server["health_seconds"] > 60
    assert server["models"] == ["qwen3-4b-shape"] and server["completion"].strip()
    assert starting["invocation"]["module_args"]["api_key"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    wrong_key = json.loads((record / "wrong_key.json").read_text())
    assert wrong_key["failed"] and "/v1/models (HTTP 401)" in wrong_key["msg"]
    nothing = json.loads((record / "nothing.json").read_text())
    assert nothing["failed"] and nothing["msg"] == "http://127.0.0.1:8001/health did not answer 200 within 5 s"
    assert [s["url"] for s in nothing["servers"]] == ["http://127.0.0.1:8000", "http://127.0.0.1:8001"]
    assert "Starting vLLM server on http://127.0.0.1:8000" in (record / "server-lines.txt").read_text()


def test_the_sm89_build_summary_counts_what_its_listings_hold():
    summary = json.loads((FIXTURES / "build" / "vllm-0.6.3-sm89" / "summary.json").read_text())
    for ext in STRICT:
        elf = (FIXTURES / "build" / "vllm-0.6.3-sm89" / ("%s.list-elf.txt" % ext)).read_text()
        cubins = len([line for line in elf.splitlines() if line.startswith("ELF file")])
        assert summary["extensions"][ext]["elf"] == {"sm_89": cubins}
    assert summary["conditions"]["torch_cuda_arch_list"] == "8.9"
    assert summary["wheel"]["bytes"] < summary["pypi_wheel"]["bytes"]


def test_the_sm89_rebuild_with_ccache_warm_took_a_tenth_of_the_cold_build_or_less():
    summary = json.loads((FIXTURES / "build" / "vllm-0.6.3-sm89" / "summary.json").read_text())
    cold, warm = summary["cold"], summary["warm"]
    assert cold["ccache"]["hits"] == 0 and warm["ccache"]["misses"] <= 1
    assert warm["role_seconds"] <= 0.1 * cold["role_seconds"]
    # the cold build's compile steps (job-seconds, every session of it) against the whole warm run of the role
    assert warm["role_seconds"] <= 0.1 * cold["ninja"]["job_seconds"]
    assert cold["ninja"]["steps"] == warm["ninja"]["steps"] == 104
