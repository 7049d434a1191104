"""tune_report as tune.yml runs it: the report, the summary and the charts of a tuning run written into its folder,
from the real vLLM 0.25 runs measured on a 4090's budget (tests/fixtures/bench/vllm-0.25.0-h200-4090budget)."""
import json
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.llmhost.vllm.plugins.module_utils import tune
from ansible_collections.llmhost.vllm.plugins.modules import tune_report

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "bench" / "vllm-0.25.0-h200-4090budget"
PHASE = {"name": "mixed_c128", "input_len": [512, 2048], "output_len": 512, "concurrency": 128, "requests": 256}


def test_the_run_is_written_with_its_charts_and_nothing_half_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    results = dict((d.name, json.loads((d / "mixed_c128.json").read_text())) for d in RUNS.iterdir() if d.is_dir())
    choice = dict(tune.choose(results, "throughput", 10000), record=None)
    kept = [{"name": n, "reason": "r", "plan": {}} for n in sorted(results)]
    args = {"run_dir": str(tmp_path / "run"), "info": {"host": "gpu1", "started": "20261207T120000Z"},
            "candidates": kept, "results": results, "phase": PHASE, "choice": choice}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            tune_report.main()
    out = json.loads(capsys.readouterr().out)
    assert out["changed"] and out["files"] == ["summary.json", "report.md", "throughput.png", "ttft.png", "itl.png"]
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted(out["files"])  # no temporary left
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["winner"] == "plan_kvfp8" and len(summary["phases"]) == 5
    assert (tmp_path / "run" / "report.md").read_text() == out["markdown"]
