"""The user's controller (requirements/controller.txt, make host-report): ansible-core and what it needs, at the
development lock's versions, with nothing for tests; and the Makefile builds the report's venv from it."""
import ast
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEV_TOOLS = {"ansible", "ansible-lint", "molecule", "molecule-plugins", "pytest", "pytest-xdist", "pytest-testinfra",
             "mitogen", "antsibull-changelog", "matplotlib", "huggingface-hub"}


def pins(name):
    """{lower-cased name: version} of a requirements file, and the lines that are not `name==version`."""
    got, other = {}, []
    for line in (ROOT / "requirements" / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line)
        if match:
            assert match.group(1).lower() not in got, "%s pinned twice in %s" % (match.group(1), name)
            got[match.group(1).lower()] = match.group(2)
        elif line:
            other.append(line)
    return got, other


def make_rule(target):
    """The prerequisites and recipe lines of a Makefile rule."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^%s:([^\n]*)\n((?:\t[^\n]*\n)*)" % re.escape(target), text, re.M)
    assert match, "no rule for %s in the Makefile" % target
    return match.group(1).split(), match.group(2).splitlines()


def test_the_controller_lock_is_ansible_core_and_its_requirements_at_the_dev_lock_versions():
    controller, other = pins("controller.txt")
    dev = pins("dev.txt")[0]
    direct = pins("controller.in")[0]
    assert other == [] and direct == {name: dev[name] for name in ("ansible-core", "distlib", "nvidia-ml-py")}
    assert set(direct) <= set(controller)
    assert {name: dev.get(name) for name in controller} == controller, "the two locks disagree"
    assert not set(controller) & DEV_TOOLS and len(controller) <= 12, sorted(controller)


def test_make_host_report_uses_the_controller_venv_and_make_test_the_development_one():
    needs, recipe = make_rule("host-report")
    assert "controller" in needs and "venv" not in needs
    assert recipe[0].startswith("\t$(CONTROLLER_BIN)/") and "playbooks/host_report.yml" in recipe[0], recipe
    install = make_rule("$(CONTROLLER_VENV)/.stamp")[1]
    assert any("-r requirements/controller.txt" in line and " -q" not in line for line in install), install
    assert "venv" in make_rule("test")[0]
    dev = make_rule("$(VENV)/.stamp")[1]
    assert any("-r requirements/dev.txt" in line for line in dev)


def _top_level_imports(path):
    """The first part of every module a file imports when it is loaded: its module-level imports, outside a try block
    (an optional import is guarded) and outside functions (matplotlib is imported by the chart function, which only the
    benchmark's module runs, in the benchmark's venv on the host)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_execution_environment_needs_nothing_beyond_ansible_core():
    """meta/execution-environment.yml declares no dependency: the controller side of the collection (its filters,
    lookups, callback, action and the module_utils they import) imports only the standard library, ansible-core and
    PyYAML (which ansible-core requires), and the controller lock holds those."""
    ee = yaml.safe_load((ROOT / "meta" / "execution-environment.yml").read_text())
    assert ee == {"version": 1, "dependencies": {}}
    allowed = set(sys.stdlib_module_names) | {"ansible", "ansible_collections", "yaml", "__future__"}
    kinds = ("filter", "lookup", "callback", "action", "plugin_utils", "module_utils")
    found = {str(p.relative_to(ROOT)): sorted(_top_level_imports(p) - allowed)
             for kind in kinds for p in sorted((ROOT / "plugins" / kind).glob("*.py"))}
    assert {path: names for path, names in found.items() if names} == {}
    assert {"ansible-core", "pyyaml"} <= set(pins("controller.txt")[0])
