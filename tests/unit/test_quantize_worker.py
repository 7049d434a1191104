"""The quantize worker never replaces or removes a folder it did not write (it exits before any work)."""
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[2] / "roles" / "quantize" / "files" / "llmhost_quantize.py"


def run(source, dest):
    return subprocess.run([sys.executable, str(WORKER), "--tool", "autoawq", "--source", str(source), "--dest", str(dest),
                           "--calibration", "/nonexistent.jsonl", "--stamp", "/nonexistent.json"],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "models" / "tiny"
    src.mkdir(parents=True)
    (src / "config.json").write_text("{}")
    return src


def test_a_foreign_output_folder_is_refused_and_kept(source, tmp_path):
    dest = tmp_path / "models" / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    proc = run(source, dest)
    assert proc.returncode == 1 and "holds no llmhost-quantize.json" in proc.stderr
    assert (dest / "notes.txt").read_text() == "mine" and not Path(str(dest) + ".partial").exists()


@pytest.mark.parametrize("where", ["same", "inside", "above"])
def test_the_source_model_is_never_the_output(source, where):
    dest = {"same": source, "inside": source / "awq", "above": source.parent}[where]
    proc = run(source, dest)
    assert proc.returncode == 1 and "lies in the source model" in proc.stderr
    assert (source / "config.json").read_text() == "{}"


def test_a_partial_folder_without_the_workers_mark_is_kept(source, tmp_path):
    dest = tmp_path / "models" / "tiny-awq"
    partial = Path(str(dest) + ".partial")
    partial.mkdir()
    (partial / "notes.txt").write_text("mine")
    proc = run(source, dest)
    assert proc.returncode == 1 and "is not an interrupted run's folder" in proc.stderr
    assert (partial / "notes.txt").read_text() == "mine"


def test_an_earlier_output_and_an_interrupted_run_pass_the_check(source, tmp_path):
    dest = tmp_path / "models" / "tiny-awq"
    dest.mkdir()
    (dest / "llmhost-quantize.json").write_text("{}")
    partial = Path(str(dest) + ".partial")
    partial.mkdir()
    (partial / ".llmhost-quantize-partial").write_text("")
    proc = run(source, dest)
    # past the check, it fails on the missing calibration file: the earlier output is still there
    assert "nothing is" not in proc.stderr and proc.returncode != 0, proc.stderr
    assert (dest / "llmhost-quantize.json").exists()


def test_a_second_quantization_into_the_same_output_is_refused(source, tmp_path):
    """The first holds <output>.partial (an flock that dies with it); the second stops without touching it."""
    import fcntl
    import os
    dest = tmp_path / "models" / "tiny-awq"
    partial = Path(str(dest) + ".partial")
    partial.mkdir()
    (partial / ".llmhost-quantize-partial").write_text("")
    (partial / "model.safetensors").write_text("being written")
    fd = os.open(str(partial), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)          # what a running worker holds
    try:
        proc = run(source, dest)
    finally:
        os.close(fd)
    assert proc.returncode == 1 and "is being written by another quantization" in proc.stderr
    assert (partial / "model.safetensors").read_text() == "being written"
