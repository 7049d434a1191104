"""The internal role llmhost.vllm._common: its contract (every entry point declared, inputs in step
with defaults/), its refusals (run on its own; an entry point called without a required input), and
what its hold step writes for unattended-upgrades, read back as the regular expressions
unattended-upgrades makes of it. The entry points' apt and venv work runs for real in the container
scenario, through kernel, nvidia_driver, cuda_toolkit, vllm_install and quantize."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "_common"
SPECS = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
# task files imported by entry points, never called from outside
PARTS = {"nvidia_repo_settle", "package_state"}


def test_every_entry_point_is_declared_and_every_file_is_one_or_a_part():
    files = {p.stem for p in (ROLE / "tasks").glob("*.yml")}
    assert files - PARTS == set(SPECS)
    for part in PARTS:
        assert any("import_tasks: %s.yml" % part in (ROLE / "tasks" / (f + ".yml")).read_text() for f in SPECS)


def test_the_readme_names_every_entry_point():
    readme = (ROLE / "README.md").read_text()
    for entry in set(SPECS) - {"main"}:
        assert "| `%s` |" % entry in readme, entry


PLAY_SWITCHES = {("inputs", "llmhost_allow_unknown_vars"), ("uninstall_reports", "llmhost_uninstall_reports")} | {
    ("uninstall", "llmhost_uninstall_" + what) for what in ("models", "reports", "holds", "packages")}


def test_optional_inputs_are_the_defaults_and_required_ones_have_none():
    seen = {}
    for entry, spec in SPECS.items():
        for name, opt in (spec.get("options") or {}).items():
            # play-wide switches of the user's, not inputs of a calling role
            assert name.startswith("_common_") or (entry, name) in PLAY_SWITCHES, \
                "%s: %s lacks the role's prefix" % (entry, name)
            assert opt.get("description"), "%s: %s has no description" % (entry, name)
            if opt.get("required") or "default" not in opt:
                assert name not in DEFAULTS or not opt.get("required"), "%s: defaults/ would satisfy %s" % (entry, name)
            else:
                assert DEFAULTS.get(name, object()) == opt.get("default"), "%s: %s's default differs" % (entry, name)
                seen[name] = True
    assert set(DEFAULTS) == set(seen), "defaults/ holds inputs no entry point declares optional"


def test_callers_use_only_declared_inputs_of_the_entry_point_they_call():
    """Every include of the internal role passes inputs its entry point declares, and all it requires."""
    calls = 0
    for path in (ROOT / "roles").glob("*/tasks/*.yml"):
        for task in yaml.safe_load(path.read_text()) or []:
            inc = task.get("ansible.builtin.include_role") or {}
            if inc.get("name") != "llmhost.vllm._common":
                continue
            calls += 1
            options = SPECS[inc["tasks_from"]]["options"]
            given = set(task.get("vars") or {})
            assert given <= set(options), "%s: %s passes %s" % (path, task["name"], given - set(options))
            required = {n for n, o in options.items() if o.get("required")}
            assert required <= given, "%s: %s misses %s" % (path, task["name"], required - given)
    assert calls >= 9


def _play(tmp_path, tasks, check=True, extra=()):
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_DEPRECATION_WARNINGS="0")
    argv = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=" + sys.executable, str(play)] + (["--check"] if check else []) + list(extra)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split())


def test_the_role_refuses_to_run_on_its_own(tmp_path):
    rc, out = _play(tmp_path, [{"name": "x", "ansible.builtin.include_role": {"name": "llmhost.vllm._common"}}])
    assert rc == 2 and "llmhost.vllm._common is internal" in out, out[-2000:]


@pytest.mark.parametrize("entry,given,missing", [
    ("packages", {"_common_owner": "test"}, "_common_packages"),
    # optional for packages (the distribution's archive), required here: defaults/ must not satisfy it
    ("nvidia_repo_versions", {"_common_packages": ["x"], "_common_packages_version": "1",
                              "_common_packages_version_var": "v=1"}, "_common_nvidia_repo"),
])
def test_an_entry_point_without_a_required_input_is_refused_by_name(tmp_path, entry, given, missing):
    rc, out = _play(tmp_path, [{"name": "x", "ansible.builtin.include_role": {
        "name": "llmhost.vllm._common", "tasks_from": entry}, "vars": given}])
    assert rc == 2 and "missing required arguments: %s" % missing in out, out[-2000:]


@pytest.mark.skipif(not Path("/usr/bin/dpkg").exists(), reason="dpkg_selections needs a Debian-family host")
def test_the_blacklist_anchors_names_and_escapes_what_a_regex_would_read(tmp_path):
    """hold, in check mode with --diff: the blacklist it would write, compiled as unattended-upgrades does."""
    names = ["libstdc++6", "linux-image-6.1.0-28-cloud-amd64"]
    rc, out = _play(tmp_path, [{"name": "x", "ansible.builtin.include_role": {
        "name": "llmhost.vllm._common", "tasks_from": "hold"}, "vars": {
        "_common_owner": "test", "_common_hold": names[:1], "_common_hold_patterns": names + ["/^(lib)?nvidia-/"],
        "_common_hold_blacklist_file": str(tmp_path / "51test")}}], extra=["--diff"])
    assert rc == 0, out[-2000:]
    entries = re.findall(r'\+ "([^"]+)";', out)
    assert entries == ["^libstdc[+][+]6$", "^linux-image-6[.]1[.]0-28-cloud-amd64$", "^(lib)?nvidia-"], out[-2000:]
    compiled = [re.compile(e) for e in entries]
    for name in names + ["nvidia-driver-580", "libnvidia-compute-580"]:
        assert any(c.match(name) for c in compiled), name
    for other in ["libstdc++6-dbg", "linux-image-6x1x0-28-cloud-amd64", "xserver-xorg-video-nvidia-580"]:
        assert not any(c.match(other) for c in compiled), other
    assert not (tmp_path / "51test").exists()
