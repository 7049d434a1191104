"""tests/unit means unit: no test there starts a process, a server or a playbook; those live in tests/integration."""
import re
from pathlib import Path

UNIT = Path(__file__).resolve().parent
STARTS = re.compile(r"\bimport subprocess\b|\bsubprocess\.|\bPopen\b|HTTPServer|\bsocketserver\b|ansible-playbook|"
                    r"\bplaybook_batch\b|\bos\.system\(|\bmultiprocessing\b")


def starters(root):
    return sorted("%s: %s" % (p.relative_to(root), m.group(0)) for p in root.rglob("*.py") if p.name != Path(__file__).name
                  for m in [STARTS.search(p.read_text())] if m)


def test_no_unit_test_starts_a_process_a_server_or_a_playbook():
    assert starters(UNIT) == [], "move these to tests/integration"


def test_the_check_finds_what_starts_a_process(tmp_path):
    (tmp_path / "test_x.py").write_text("import subprocess\nsubprocess.run(['true'])\n")
    (tmp_path / "test_y.py").write_text("from playbook_batch import run_batch\n")
    assert starters(tmp_path) == ["test_x.py: import subprocess", "test_y.py: playbook_batch"]
