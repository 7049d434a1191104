"""The harness's own contract (tests/harness/run-layers.sh): budgets marked, skips only when
allowed, the exit status, and the table. Layers are replaced by stub scripts (LLMHOST_HARNESS_STUBS)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "harness" / "run-layers.sh"


def _run(tmp_path, stubs, **env):
    for name, body in stubs.items():
        f = tmp_path / name
        f.write_text("#!/bin/sh\n" + body + "\n")
        f.chmod(0o755)
    full = dict(os.environ, LLMHOST_HARNESS_STUBS=str(tmp_path), LLMHOST_LAYERS=" ".join(stubs),
                LLMHOST_TEST_CACHE=str(tmp_path / "cache"), TMPDIR=str(tmp_path), **env)
    for name in [k for k in full if k.startswith(("LLMHOST_ALLOW_SKIP", "LLMHOST_SERIAL", "LLMHOST_BUDGET_"))]:
        del full[name]  # the caller's own run (LLMHOST_SERIAL=1 make test) must not leak into these
    full.update(env)
    proc = subprocess.run(["bash", str(RUN)], capture_output=True, text=True, env=full, timeout=60, check=False)
    rows = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in stubs:
            rows[parts[0]] = line
    return proc, rows


def test_layers_pass_and_over_budget_is_marked_but_never_fails(tmp_path):
    proc, rows = _run(tmp_path, {"lint": "echo linted; sleep 2", "unit": "echo 3 passed"},
                      LLMHOST_BUDGET_lint="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in rows["lint"] and rows["lint"].endswith("OVER BUDGET")
    assert "PASS" in rows["unit"] and "OVER BUDGET" not in rows["unit"]
    assert "layers: 2 passed, 0 failed" in proc.stdout
    # each layer's output is printed whole, under its own heading
    assert "=============== layer: lint (rc 0" in proc.stdout and "linted" in proc.stdout


@pytest.mark.parametrize("allow,expect_rc,status", [("", 1, "FAIL (rc 77)"), ("unit", 0, "SKIP")])
def test_a_layer_that_cannot_run_fails_unless_allowed(tmp_path, allow, expect_rc, status):
    proc, rows = _run(tmp_path, {"lint": "true", "unit": "echo cannot run here; exit 77"}, LLMHOST_ALLOW_SKIP=allow)
    assert proc.returncode == expect_rc, proc.stdout
    assert status in rows["unit"]


def test_a_failing_layer_fails_the_run_and_the_other_lane_still_runs(tmp_path):
    # molecule-container (lane A) fails at once; molecule-vm (lane B) still runs to its end
    proc, rows = _run(tmp_path, {"molecule-container": "exit 3", "molecule-vm": "sleep 1; echo vm ran"})
    assert proc.returncode == 1
    assert "FAIL (rc 3)" in rows["molecule-container"] and "PASS" in rows["molecule-vm"]
    assert "vm ran" in proc.stdout
    assert "layers: 1 passed, 1 failed" in proc.stdout


def test_lanes_run_side_by_side(tmp_path):
    # lane A (molecule-container) and lane B (molecule-vm) each sleep 3 s: side by side the wall time stays near 3 s
    proc = _run(tmp_path, {"molecule-container": "sleep 3", "molecule-vm": "sleep 3"})[0]
    assert proc.returncode == 0, proc.stdout
    total = next(l for l in proc.stdout.splitlines() if l.startswith("total (wall)"))
    assert int(total.split()[2].rstrip("s")) < 6, total


def test_lane_b_runs_at_a_lower_cpu_priority(tmp_path):
    # each stub prints its own niceness: lane A's (molecule-container) the caller's, lane B's LLMHOST_LANE_B_NICE
    # (10: renice sets it; as root even from a higher one, e.g. when make test itself runs in a niced lane)
    show = "echo nice=$(ps -o ni= -p $$ | tr -d ' ')"
    own = int(subprocess.run(["ps", "-o", "ni=", "-p", str(os.getpid())], capture_output=True, text=True,
                             check=True).stdout)
    proc = _run(tmp_path, {"molecule-container": show, "molecule-vm": show, "unit": show})[0]
    assert proc.returncode == 0, proc.stdout
    layers = proc.stdout.split("=============== layer: ")
    seen = {part.split()[0]: line.split("=")[1] for part in layers[1:] for line in part.splitlines() if line.startswith("nice=")}
    lane_b = str(10 if os.geteuid() == 0 else max(own, 10))
    assert seen == {"molecule-container": str(own), "molecule-vm": lane_b, "unit": lane_b}, seen
