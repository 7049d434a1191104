"""The serving plan's wishes have one home (plugins/module_utils/wishes.py); the role's argument_specs, defaults and
README say them only inside the blocks that `make docs` (tools/wish_docs.py) writes from it."""
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("wish_docs", ROOT / "tools" / "wish_docs.py")
wish_docs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(wish_docs)


@pytest.mark.parametrize("path", sorted(wish_docs.FILES), ids=lambda p: p.name)
def test_each_file_says_the_wishes_as_the_table_does(path):
    lead, block = wish_docs.FILES[path]
    text = path.read_text()
    assert wish_docs.render(text, lead, block(wish_docs.table())) == text, "run `make docs`"


def test_a_changed_row_makes_the_files_stale_until_make_docs(tmp_path, monkeypatch):
    table = wish_docs.table()
    table.WISHES["max_num_seqs"] = dict(table.WISHES["max_num_seqs"], default=64, range=(1, 512))
    monkeypatch.setattr(wish_docs, "table", lambda: table)
    copies = {}
    for path, (lead, block) in wish_docs.FILES.items():
        copies[tmp_path / path.name] = (lead, block)
        (tmp_path / path.name).write_text(path.read_text())
    monkeypatch.setattr(wish_docs, "FILES", copies)
    monkeypatch.setattr(wish_docs, "ROOT", tmp_path)
    assert wish_docs.main(["--check"]) == 1
    assert wish_docs.main([]) == 0 and wish_docs.main(["--check"]) == 0
    spec = yaml.safe_load((tmp_path / "argument_specs.yml").read_text())["argument_specs"]
    option = spec["main"]["options"]["vllm_service_max_num_seqs"]
    assert option["default"] == 64 and option["description"].endswith("From 1 to 512.")
    assert spec["plan"]["options"]["vllm_service_max_num_seqs"] == option          # the entry points share them
    assert yaml.safe_load((tmp_path / "main.yml").read_text())["vllm_service_max_num_seqs"] == 64
    assert "| `vllm_service_max_num_seqs` | `64` |" in (tmp_path / "README.md").read_text()


def test_no_wish_is_declared_outside_the_blocks():
    names = ["vllm_service_" + k for k in wish_docs.table().WISHES]
    for path, (lead, _block) in wish_docs.FILES.items():
        text = path.read_text()
        outside = wish_docs.render(text, lead, [])
        declared = [n for n in names if re.search(r"^ *%s:" % n, outside, re.M) or "| `%s` |" % n in outside]
        assert not declared, (path.name, declared)
