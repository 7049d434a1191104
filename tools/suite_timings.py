"""The per-step table of a `make test` run: where the seconds of each Molecule scenario go, step by step (destroy,
create, prepare, check, converge, idempotence, verify) and, inside verify, test file by test file, with what each
file proves (the first sentence of its docstring). docs/measurements.md keeps its output.

usage: make test 2>&1 | tee /var/tmp/make-test.out
       .venv/bin/python tools/suite_timings.py /var/tmp/make-test.out [--tests molecule/_shared/tests]

A step's seconds are read from the profile_tasks callback's timestamps (its first task to its recap); verify's from
pytest's own total, split by the `--durations` lines (the container scenario sets `durations: "0"`, so every
setup, call and teardown is listed: a module fixture's playbook runs count in the setup of its first test)."""
import argparse
import ast
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

LAYER = re.compile(r"^=============== layer: (\S+) \(rc (\d+), (\d+) s\) =+$")
TABLE_ROW = re.compile(r"^(setup|lint|sanity|unit|molecule-\w+|total \(wall\))\s+(PASS|FAIL \(rc \d+\)|SKIP|ok|"
                       r"incomplete \(\d+\)|not run)?\s*(\d+s)?\s+(\d+)s\s+(\d+)s")
STEP = re.compile(r"^INFO\s+\[\w+ > (\w+)\] Executing$")
STAMP = re.compile(r"^\w+ \d+ \w+ \d{4}\s+(\d\d:\d\d:\d\d) \+0000 \(")
DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+?)::")
TOTAL = re.compile(r"=+ (.*) in ([\d.]+)s(?: \([\d:]+\))? =+$")


def sections(lines):
    """{layer: its lines}, as run-layers.sh prints each layer's log whole when the layer ends."""
    out, name = {}, None
    for line in lines:
        match = LAYER.match(line)
        if match:
            name = match.group(1)
            out[name] = []
        elif line.startswith("=============== "):
            name = None
        elif name:
            out[name].append(line)
    return out


def seconds_between(first, last):
    """Seconds from one HH:MM:SS to a later one (a run past midnight wraps once)."""
    delta = (datetime.strptime(last, "%H:%M:%S") - datetime.strptime(first, "%H:%M:%S")).total_seconds()
    return delta + 86400 if delta < 0 else delta


def steps(lines):
    """[(step, seconds)] of one scenario: each Molecule action's playbook time, verify's pytest total."""
    out, step, stamps = [], None, []

    def close():
        if step and step != "verify":
            out.append((step, seconds_between(stamps[0], stamps[-1]) if stamps else 0.0))

    for line in lines:
        match = STEP.match(line)
        if match:
            close()
            step, stamps = match.group(1), []
            continue
        stamp = STAMP.match(line)
        if stamp:
            stamps.append(stamp.group(1))
        total = TOTAL.search(line)
        if step == "verify" and total:
            out.append(("verify (%s)" % total.group(1), float(total.group(2))))
            step = None
    close()
    return out


def per_file(lines):
    """{test file: {"setup"|"call"|"teardown": seconds, "items": n}} from pytest's --durations lines."""
    files = defaultdict(lambda: defaultdict(float))
    seen = defaultdict(set)
    for line in lines:
        match = DURATION.match(line)
        if match:
            secs, phase, path = match.groups()
            name = Path(path).name
            files[name][phase] += float(secs)
            seen[name].add(line.split("::", 1)[1].strip())
    for name, items in seen.items():
        files[name]["items"] = len(items)
    return files


def proves(test_dir, name):
    """The first sentence of a test file's docstring: what it proves."""
    path = Path(test_dir) / name
    if not path.exists():
        return ""
    doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split())
    cut = re.search(r"(?<=[a-z0-9)`])\. ", doc)
    first = doc[:cut.start() + 1] if cut else doc
    return first if len(first) <= 200 else first[:first.rfind(" ", 0, 197)] + " ..."


def render(text, test_dir):
    lines = text.splitlines()
    print("| layer | result | start | seconds | budget |\n| --- | --- | --- | --- | --- |")
    for line in lines:
        row = TABLE_ROW.match(line)
        if row:
            print("| %s | %s | %s | %s | %s |" % (row.group(1), row.group(2) or "", row.group(3) or "",
                                                  row.group(4), row.group(5)))
    for layer, body in sections(lines).items():
        if not layer.startswith("molecule-"):
            continue
        print("\n#### %s, step by step\n\n| step | seconds |\n| --- | --- |" % layer)
        for step, secs in steps(body):
            print("| %s | %.0f |" % (step, secs))
        files = per_file(body)
        if not files:
            continue
        print("\n#### %s verify, file by file (slowest first)\n" % layer)
        print("| test file | items timed | fixtures (setup) | calls | teardown | total | what it proves |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        ranked = sorted(files.items(), key=lambda kv: -(kv[1]["setup"] + kv[1]["call"] + kv[1]["teardown"]))
        for name, f in ranked:
            total = f["setup"] + f["call"] + f["teardown"]
            print("| `%s` | %d | %.0f | %.0f | %.0f | %.0f | %s |" % (name, f["items"], f["setup"], f["call"],
                                                                      f["teardown"], total, proves(test_dir, name)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("log", help="the whole output of `make test` (or of one layer's run-layers.sh)")
    parser.add_argument("--tests", default=str(Path(__file__).resolve().parents[1] / "molecule/_shared/tests"),
                        help="where the Molecule scenarios' test files are (for their docstrings)")
    args = parser.parse_args(argv)
    render(Path(args.log).read_text(errors="replace"), args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
