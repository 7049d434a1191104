"""The README reads on a screen: no line a person must scroll sideways for minutes (a table row of 3,973 characters
listed every filter); long lists are lists."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LONGEST = 1000


def test_no_readme_line_is_a_wall():
    long = [(n, len(line)) for n, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1)
            if len(line) > LONGEST]
    assert long == [], "README.md lines over %d characters (line, length): %s" % (LONGEST, long)
