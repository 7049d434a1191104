"""The Galaxy artifact: built from this checkout, it holds exactly the tracked files that matter (never
the venv, caches, reports or working folders), installs offline into an empty collections path, and
ansible-doc reads every module, filter and role from the installed copy. Also: the README's tables
name every role, module and filter, and meta/runtime.yml's requires_ansible admits the ansible-core
the tests run on."""
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Tracked files that are development tooling of the checkout, not part of the collection.
NOT_SHIPPED = {".ansible-lint", ".ansible-lint-ignore", ".ci/run", ".gitignore", ".pre-commit-config.yaml", ".shellcheckrc",
               ".yamllint", "galaxy.yml", "changelogs/.plugin-cache.yaml",
               "inventories/local/hosts.yml", "Makefile", "ansible.cfg", "pytest.ini", "site.yml"}
# The workshop: what tests and develops the collection, never what a user installs.
NOT_SHIPPED_FOLDERS = ("tests/", "molecule/", "requirements/", "tools/", "changelogs/fragments/")
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
FILTERS = sorted(p.stem for p in (ROOT / "plugins" / "filter").glob("*.py") if p.stem != "__init__")
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").exists())


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("galaxy")
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True)
    tarball = next(out.glob("llmhost-vllm-*.tar.gz"))
    colls = out / "collections"
    # an empty collections path of its own: the checkout's link must not count as "already installed"
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "-p", str(colls), str(tarball)],
                   check=True, capture_output=True, text=True, env=isolated(colls))
    assert (colls / "ansible_collections" / "llmhost" / "vllm" / "MANIFEST.json").is_file()
    return tarball, colls


def isolated(colls):
    return dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(colls), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false")


def tracked():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True, text=True).stdout
    return {f for f in out.split("\0") if f and (ROOT / f).exists()}


def test_the_artifact_holds_the_tracked_files_and_nothing_else(artifact, tmp_path):
    tarball = artifact[0]
    with tarfile.open(tarball) as tar:
        packed = {m.name for m in tar.getmembers() if m.isfile()} - {"MANIFEST.json", "FILES.json"}
    want = {f for f in tracked() - NOT_SHIPPED if not f.startswith(NOT_SHIPPED_FOLDERS)}
    assert packed == want, "missing: %s; extra: %s" % (sorted(want - packed), sorted(packed - want))
    # a shipped document that names a test file says where it is: the artifact holds no tests
    with tarfile.open(tarball) as tar:
        docs = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()
                if m.isfile() and m.name.endswith(".md") and m.name != "CONTRIBUTING.md"}
    pointing = [name for name, text in docs.items() if re.search(r"(^|[\s`(])(tests|molecule)/", text)]
    assert pointing and not [n for n in pointing if "in the source repository" not in docs[n]], pointing
    # the released changelog ships; unreleased fragments and antsibull-changelog's cache never do
    assert {"CHANGELOG.rst", "changelogs/changelog.yaml"} <= packed
    assert not [n for n in packed if n.startswith("changelogs/fragments/") or n.endswith(".plugin-cache.yaml")]
    assert {"roles/model/files/llmhost_fetch.py", "playbooks/site.yml", "inventories/example/hosts.yml",
            "docs/measurements.md", "README.md"} <= packed
    assert not [f for f in packed if f.startswith(NOT_SHIPPED_FOLDERS)]


def test_a_working_folder_never_reaches_the_artifact(tmp_path):
    """A copy of the checkout with the folders a developer leaves around: none of them is packed."""
    copy = tmp_path / "src"
    for name in tracked() | {"galaxy.yml"}:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((ROOT / name).read_bytes())
    for junk in (".whl/vllm-0.6.3-cp38-abi3-linux_x86_64.whl", ".dev/notes.txt", "reports/host-report-a.md",
                 "host-report-a.json", "roles/model/files/__pycache__/x.pyc", "tests/output/x.xml", ".venv/x"):
        (copy / junk).parent.mkdir(parents=True, exist_ok=True)
        (copy / junk).write_text("x")
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), str(copy)],
                   check=True, capture_output=True, text=True)
    with tarfile.open(next(tmp_path.glob("llmhost-vllm-*.tar.gz"))) as tar:
        names = tar.getnames()
    leaked = [n for n in names if n.split("/")[0] in (".whl", ".dev", "reports", ".venv", ".cache")
              or "__pycache__" in n or n.startswith("tests/output") or n.startswith("host-report-")]
    assert leaked == []


def doc(colls, kind, names):
    out = subprocess.run([str(BIN / "ansible-doc"), "--json", "-t", kind] + ["llmhost.vllm." + n for n in names],
                         check=True, capture_output=True, text=True, env=isolated(colls), cwd=str(colls)).stdout
    return json.loads(out)


def test_ansible_doc_reads_every_module_filter_and_role_from_the_installed_copy(artifact):
    colls = artifact[1]
    installed = colls / "ansible_collections" / "llmhost" / "vllm"
    for kind, names in (("module", MODULES), ("filter", FILTERS)):
        docs = doc(colls, kind, names)
        assert sorted(docs) == ["llmhost.vllm." + n for n in names]
        for name, entry in docs.items():
            assert entry["doc"]["short_description"] and entry["doc"]["filename"].startswith(str(installed)), name
    roles = doc(colls, "role", ROLES)
    assert sorted(roles) == ["llmhost.vllm." + n for n in ROLES]
    for name, entry in roles.items():
        assert entry["path"].startswith(str(installed)) and entry["entry_points"]["main"]["short_description"], name


def test_the_readme_tables_name_every_role_module_and_filter():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## What is in the collection"):readme.index("Measured results")]
    for role in ROLES:
        assert "`roles/%s`" % role in table, role
    for name in MODULES:
        assert "`llmhost.vllm.%s`" % name in table, name
    for name in FILTERS:
        assert "`llmhost.vllm.%s`" % name in table, name


def test_requires_ansible_admits_the_tested_ansible_core():
    from ansible.module_utils.compat.version import LooseVersion
    from ansible.release import __version__
    spec = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text())["requires_ansible"]
    lowest = spec.split(">=")[1].split(",")[0].strip()
    assert LooseVersion(__version__) >= LooseVersion(lowest)
    assert lowest.split(".")[:2] == __version__.split(".")[:2], "the lowest version admitted is the one tested"


@pytest.mark.parametrize("playbook, args, first_row", [
    ("llmhost.vllm.host_report", [], "| status | area | item | want | have | fix |"),
    ("llmhost.vllm.doctor", ["--check"], "| status | area | item | want | have | fix |"),
])
def test_the_reports_read_as_lines_from_the_installed_copy_with_no_project_config(artifact, tmp_path, playbook, args,
                                                                                  first_row):
    """Run as a Galaxy user does: the installed artifact, a folder of their own with no ansible.cfg, the default
    callback (JSON results). Each row of the report is a line of its own, not an escaped string."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    colls = artifact[1]
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all: {children: {vllm_hosts: {hosts: {localhost: {ansible_connection: local, "
                         "ansible_python_interpreter: %s}}}}}\n" % sys.executable)
    env = {k: v for k, v in isolated(colls).items() if not k.startswith("ANSIBLE_") or k.startswith("ANSIBLE_COLL")}
    env.update(ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), playbook, *args], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert '"msg": [' in out, out[-3000:]  # the default callback's JSON, as a user without our ansible.cfg sees it
    rows = [line.strip().rstrip(",") for line in out.splitlines() if line.strip().startswith('"| ')]
    assert '"%s"' % first_row in rows, out[-3000:]
    assert any(re.match(r'"\| (PASS|WARN|FAIL|INFO) \| ', row) for row in rows), rows[:5]
    assert "\\n|" not in out, "a report row inside an escaped string"
