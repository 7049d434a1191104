"""The quantize worker never replaces or removes a folder it did not write (it exits before any work); a finished
output replaces the one in place, which is kept as DEST.previous (one only) or deleted."""
import importlib.util
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


def _worker():
    spec = importlib.util.spec_from_file_location("llmhost_quantize", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("keep", [True, False])
def test_the_output_it_replaces_is_kept_as_previous_or_deleted(tmp_path, keep):
    dest, worker = tmp_path / "out", _worker()
    for name, text in (("out.partial", "new"), ("out", "in place"), ("out.previous", "older")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "stamp").write_text(text)
    worker.replace(str(dest) + ".partial", str(dest), keep)
    assert (dest / "stamp").read_text() == "new" and not (tmp_path / "out.partial").exists()
    if keep:
        assert (tmp_path / "out.previous" / "stamp").read_text() == "in place"
    else:
        assert (tmp_path / "out.previous" / "stamp").read_text() == "older"  # not its to touch without keep
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "out.previous"]
