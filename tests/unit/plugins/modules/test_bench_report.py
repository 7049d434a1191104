"""bench_report as the benchmark role runs it, on a real vLLM 0.25 run measured on a 4090's budget
(tests/fixtures/bench/vllm-0.25.0-h200-4090budget/plan): the report, the summary, the plan, the profile and the
charts written into the run's folder, nothing half-written left."""
import json
import shutil
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.modules import bench_report

RUN = Path(__file__).resolve().parents[3] / "fixtures" / "bench" / "vllm-0.25.0-h200-4090budget" / "plan"
PHASES = [{"name": "prefill_2048", "input_len": 2048, "output_len": 1, "concurrency": 1, "requests": 32},
          {"name": "decode_c1", "input_len": 10, "output_len": 1024, "concurrency": 1, "requests": 4},
          {"name": "decode_c32", "input_len": 10, "output_len": 1024, "concurrency": 32, "requests": 64},
          {"name": "mixed_c128", "input_len": [512, 2048], "output_len": 512, "concurrency": 128, "requests": 256}]


def test_a_run_is_reported_beside_its_results(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    with patch_module_args({"run_dir": str(run), "phases": PHASES, "info": {"host": "gpu1", "when": "20261207T1200Z"}}):
        with pytest.raises(SystemExit):
            bench_report.main()
    out = json.loads(capsys.readouterr().out)
    assert out["files"] == ["summary.json", "report.md", "plan.json", "profile.json", "throughput.png", "ttft.png",
                            "itl.png"], out
    written = sorted(p.name for p in run.iterdir())
    assert written == sorted(out["files"] + [p.name for p in RUN.iterdir()])  # no temporary file or folder left
    assert [r["phase"] for r in json.loads((run / "summary.json").read_text())["phases"]] == [p["name"] for p in PHASES]
