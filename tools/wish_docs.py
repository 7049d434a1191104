# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the serving plan's wishes, from their one home (plugins/module_utils/wishes.py), into the three files that
repeat them for Ansible and for users: roles/vllm_service/meta/argument_specs.yml, defaults/main.yml and README.md.

Each file holds a block between a BEGIN and an END marker line; only the block is rewritten.
`make docs` runs this; `--check` says which file differs and exits 1 (tests/unit/test_wish_docs.py runs it)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ROLE = ROOT / "roles" / "vllm_service"
BEGIN = "BEGIN the plan's wishes: written by `make docs` from plugins/module_utils/wishes.py"
END = "END the plan's wishes"


def table():
    """wishes.py, read as a file: it imports nothing, so the tool runs without the collection installed."""
    spec = importlib.util.spec_from_file_location("wishes", ROOT / "plugins" / "module_utils" / "wishes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key, as yamllint and the rest of the file have them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def _doc(w, key):
    return " ".join(filter(None, [w.WISHES[key]["doc"], w.range_words(key)]))


def argument_specs_block(w):
    out = []
    for key, wish in w.WISHES.items():
        option = {"type": wish["type"], "default": wish["default"]}
        option.update({k: wish[k] for k in ("choices", "elements") if k in wish})
        option["description"] = re.sub(r"`([^`]*)`", r"C(\1)", _doc(w, key))
        text = yaml.dump({w.PREFIX + key: option}, Dumper=_Dumper, sort_keys=False, width=110,
                         default_flow_style=False)
        out += ["      " + line if line else line for line in text.splitlines()]
    return out


def defaults_block(w):
    return ["%s%s: %s" % (w.PREFIX, key, json.dumps(wish["default"])) for key, wish in w.WISHES.items()]


def _default_words(value):
    return value if isinstance(value, str) and value else json.dumps(value)


def readme_block(w):
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for key, wish in w.WISHES.items():
        meaning = _doc(w, key).replace("|", "\\|")
        rows.append("| `%s%s` | `%s` | %s |" % (w.PREFIX, key, _default_words(wish["default"]), meaning))
    return rows


FILES = {
    ROLE / "meta" / "argument_specs.yml": ("      # ", argument_specs_block),
    ROLE / "defaults" / "main.yml": ("# ", defaults_block),
    ROLE / "README.md": ("<!-- ", readme_block),
}


def render(text, lead, block):
    """``text`` with the lines between its BEGIN and END markers replaced by ``block``."""
    lines = text.split("\n")
    tail = " -->" if lead == "<!-- " else ""
    start = lines.index(lead + BEGIN + tail)
    end = lines.index(lead + END + tail, start)
    return "\n".join(lines[:start + 1] + block + lines[end:])


def main(argv):
    w, stale = table(), []
    for path, (lead, block) in FILES.items():
        text = path.read_text()
        new = render(text, lead, block(w))
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if "--check" not in argv:
                path.write_text(new)
    if stale and "--check" in argv:
        print("not written from plugins/module_utils/wishes.py (run `make docs`): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
