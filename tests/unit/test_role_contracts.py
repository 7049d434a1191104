"""Every role keeps its contract: argument_specs equal to defaults, README naming every variable,
phase imports tagged with the role, role and phase tags."""
import re
from pathlib import Path

import pytest
import yaml

# The internal role (_common) has entry points instead of a main with phases and public variables:
# test_common_role.py holds it to its own contract.
ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p for p in (ROOT / "roles").iterdir()
               if (p / "tasks" / "main.yml").exists() and not p.name.startswith("_"))
PHASES = {"install", "configure", "service", "verify"}


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_argument_specs_match_defaults(role):
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text()) or {}
    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert set(defaults) == set(spec), "defaults and argument_specs list different variables"
    for name, value in defaults.items():
        assert name == role.name or name.startswith(role.name + "_"), "%s is not prefixed with the role name" % name
        assert spec[name].get("default") == value, "%s: default differs between defaults/ and argument_specs" % name
        assert spec[name].get("description"), "%s has no description" % name


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_readme_names_every_public_variable(role):
    readme = (role / "README.md").read_text()
    for name in yaml.safe_load((role / "defaults" / "main.yml").read_text()) or {}:
        assert "`%s`" % name in readme, "%s is not documented in the role README" % name


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_phase_imports_carry_role_and_phase_tags(role):
    for entry in yaml.safe_load((role / "tasks" / "main.yml").read_text()):
        tags = set(entry.get("tags") or [])
        assert role.name in tags, entry["name"]
        assert "ansible.builtin.import_tasks" in entry, "phases are imported so tags reach every task"
        if "always" in tags:
            continue  # loading profiles and facts must run whatever is selected
        phases = tags & PHASES
        assert phases, "%s: no phase tag" % entry["name"]
        for phase in phases:
            assert "%s_%s" % (role.name, phase) in tags, entry["name"]
        assert "ansible.builtin.import_tasks" in entry, "phases are imported so tags reach every task"


def test_stack_profile_choices_are_the_profiles_that_exist():
    role = [r for r in ROLES if r.name == "llmhost_stack"][0]
    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    files = sorted(p.stem for p in (role / "vars").glob("*.yml") if p.stem != "main")
    known = yaml.safe_load((role / "vars" / "main.yml").read_text())["__llmhost_stack_known"]
    assert sorted(spec["llmhost_stack"]["choices"]) == sorted(known) == files
    keys = None
    for name in files:
        data = yaml.safe_load((role / "vars" / (name + ".yml")).read_text())["__llmhost_stack_data"]
        assert data["name"] == name
        assert keys is None or set(data) == keys, "profiles must carry the same keys"
        keys = set(data)


def _lock(role, name):
    pins = {}
    for line in (role / "files" / "locks" / name).read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            k, v = line.split("==", 1)
            pins[k.strip().lower()] = v.split(";")[0].strip()
    return pins


@pytest.mark.parametrize("profile", ["seed", "current"])
def test_profile_pins_agree_with_their_locks(profile):
    """The profile's top pins and its venv locks are one truth (make locks regenerates the locks)."""
    role = [r for r in ROLES if r.name == "llmhost_stack"][0]
    data = yaml.safe_load((role / "vars" / (profile + ".yml")).read_text())["__llmhost_stack_data"]
    vllm = _lock(role, data["vllm"]["lock"])
    assert vllm["vllm"] == data["vllm"]["version"]
    assert vllm["torch"] == data["vllm"]["torch"]
    assert vllm["transformers"] == data["vllm"]["transformers"]
    quant = _lock(role, data["quantizer"]["lock"])
    assert quant[{"autoawq": "autoawq", "llm-compressor": "llmcompressor"}[data["quantizer"]["tool"]]] == data["quantizer"]["version"]
    assert quant["torch"] == data["quantizer"]["torch"]
    assert quant["transformers"] == data["quantizer"]["transformers"]


def test_the_standin_torch_is_the_quantizer_locks_torch():
    """The container scenario's stand-in vllm starts up with real torch, and fetches the model with real
    huggingface_hub: the very versions of the quantizer's lock, whose wheels the harness holds offline
    (molecule/_shared/files/standin-vllm-lock.txt). The unit tests of the fetch worker use the same
    huggingface_hub (requirements/dev.txt)."""
    def pins(path):
        lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
        return dict(line.split("==") for line in lines if "==" in line)
    root = Path(__file__).resolve().parents[2]
    standin = pins(root / "molecule/_shared/files/standin-vllm-lock.txt")
    quantizer = pins(root / "roles/llmhost_stack/files/locks/current-llm-compressor-py311.txt")
    assert standin.pop("vllm") == "0.33.0" and "torch" in standin and "huggingface-hub" in standin
    assert {name: quantizer.get(name) for name in standin} == standin
    dev = {k.lower().replace("_", "-"): v for k, v in pins(root / "requirements/dev.txt").items()}
    assert dev["huggingface-hub"] == standin["huggingface-hub"]


def test_the_standin_cluster_lock_is_the_standin_lock_and_the_profile_s_ray():
    """The container's Ray cluster host holds the stand-in lock plus Ray and what it needs
    (molecule/_shared/files/ray-lock.txt), at the versions of the current profile's cluster lock for Python 3.11."""
    def pins(path):
        lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
        return dict(line.split("==") for line in lines if "==" in line)
    files = ROOT / "molecule/_shared/files"
    ray, standin = pins(files / "ray-lock.txt"), pins(files / "standin-vllm-lock.txt")
    profile = pins(ROOT / "roles/llmhost_stack/files/locks/current-vllm-ray-py311.txt")
    assert pins(files / "standin-vllm-ray-lock.txt") == dict(standin, **ray)
    assert not set(ray) & set(standin) and {name: profile[name] for name in ray} == ray
    current = yaml.safe_load((ROOT / "roles/llmhost_stack/vars/current.yml").read_text())["__llmhost_stack_data"]
    assert ray["ray"] == current["vllm"]["ray"]["version"] == profile["ray"]


def test_a_profile_s_ray_is_the_one_its_cluster_lock_pins():
    for name in ("seed", "current"):
        data = yaml.safe_load((ROOT / ("roles/llmhost_stack/vars/%s.yml" % name)).read_text())["__llmhost_stack_data"]
        ray = data["vllm"]["ray"]
        for lock in [ray["lock"]] + list(ray["locks_by_python"].values()):
            lines = (ROOT / "roles/llmhost_stack/files/locks" / lock).read_text().splitlines()
            assert "ray==%s" % ray["version"] in lines, (name, lock)


# An input check anchored with `$` lets a value through with a newline at its end (Python's `$` matches
# before a final newline), and that newline then starts a line of its own in a pin, a unit or a script.
_MATCH_DOLLAR = re.compile(r"""is (?:not )?match\(\s*(['"])(?:(?!\1).)*\$\1""")


def test_input_checks_anchor_at_the_very_end():
    found = ["%s:%d: %s" % (path.relative_to(ROOT), n, line.strip())
             for path in sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/vars/*.yml"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if _MATCH_DOLLAR.search(line) or re.search(r"_re: '[^']*\$'", line)]
    assert not found, "use \\Z, not $, at the end of a pattern that checks an input:\n" + "\n".join(found)


def _boolean_inputs():
    names = set()
    for spec_file in ROOT.glob("roles/*/meta/argument_specs.yml"):
        for spec in yaml.safe_load(spec_file.read_text())["argument_specs"].values():
            names |= {n for n, o in (spec.get("options") or {}).items()
                      if o.get("type") == "bool" and not n.startswith("_common_")}
    return names


# A boolean given on the command line (-e nvidia_driver_replace=true, as the roles' messages say) passes the
# argument spec as the string "true", and Ansible 2.19 refuses a string where a condition needs a boolean.
def test_boolean_inputs_are_read_through_bool():
    names = _boolean_inputs()
    assert {"nvidia_driver_replace", "kernel_reboot_ok", "vllm_service_allow_unauthenticated"} <= names
    raw = re.compile(r"\b(%s)\b(?!\s*\|\s*bool)(?!\s*[:=])" % "|".join(sorted(names, key=len, reverse=True)))
    found = []
    for path in sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/vars/*.yml")):
        in_msg = False
        for n, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if re.match(r"(fail_)?msg:", stripped):
                in_msg = True            # a message and its folded lines: prose, not a condition
            elif re.match(r"(- )?[a-z_]+:", stripped):
                in_msg = False
            if not stripped.startswith("#") and not in_msg and raw.search(line):
                found.append("%s:%d: %s" % (path.relative_to(ROOT), n, stripped))
    assert not found, "read boolean inputs with | bool:\n" + "\n".join(found)


ALL_ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks").is_dir())


@pytest.mark.parametrize("role", sorted((ROOT / "roles").iterdir()), ids=lambda p: p.name)
def test_a_role_reads_no_other_roles_private_names(role):
    """`__<role>_*` names are the role's own: another role reads what the owner declares as an output."""
    others = [name for name in ALL_ROLES if name != role.name]
    prefixes = sorted((name.lstrip("_") for name in others), key=len, reverse=True)
    private = re.compile(r"\b__(%s)_\w+" % "|".join(prefixes))
    found = ["%s: %s" % (path.relative_to(ROOT), match.group(0))
             for path in sorted(role.rglob("*")) if path.suffix in (".yml", ".j2") and path.is_file()
             for match in private.finditer(path.read_text())]
    assert not found, found


# Writes that stay with the builtin modules: a copy of a folder on the host.
BUILTIN_WRITES = {("model", "install.yml", "copy")}


def test_roles_write_files_in_one_round_trip():
    """A file's content and attributes are settled by files_and_folders in one module run: template and copy
    reach the host twice even when nothing changed (a re-run's cost)."""
    found = set()
    for path in sorted((ROOT / "roles").glob("*/tasks/*.yml")):
        for module in re.findall(r"^\s*(?:- )?ansible\.builtin\.(template|copy):", path.read_text(), re.M):
            found.add((path.parts[-3], path.name, module))
    assert found == BUILTIN_WRITES


# A folder task right before a files_and_folders task that does not write in it: they cannot be one run.
UNRELATED_FOLDERS = {
    ("benchmark", "run.yml", "Create the run's folder"),  # the key is written in benchmark_home, not in the run's folder
    ("model", "install.yml", "Create the model store"),  # made whether or not the token (the next task) is written
}


def flat_tasks(items):
    """The tasks of a task file in their order, those inside block, rescue and always included."""
    for task in items or []:
        if "block" in task:
            for part in ("block", "rescue", "always"):
                yield from flat_tasks(task.get(part))
        else:
            yield task


def test_a_folder_is_made_in_the_run_that_writes_in_it():
    """files_and_folders's directories: a folder task followed by the write of a file in it is a second
    round trip on every re-run."""
    found = set()
    for path in sorted((ROOT / "roles").glob("*/tasks/*.yml")):
        tasks = list(flat_tasks(yaml.safe_load(path.read_text())))
        for task, after in zip(tasks, tasks[1:]):
            made = task.get("ansible.builtin.file") or {}
            if made.get("state") == "directory" and "llmhost.vllm.files_and_folders" in after:
                found.add((path.parts[-3], path.name, task["name"]))
    assert found == UNRELATED_FOLDERS


# Roles that write to the hosts; host_report, doctor and llmhost_stack only read them (the doctor's stress-ng, which
# it installs when asked to burn in, is a distribution package the user may keep).
READ_ONLY = {"host_report", "doctor", "llmhost_stack"}
UNINSTALL = yaml.safe_load((ROOT / "playbooks" / "uninstall.yml").read_text())


@pytest.mark.parametrize("role", [r for r in ROLES if r.name not in READ_ONLY], ids=lambda p: p.name)
def test_every_role_that_writes_to_a_host_can_be_uninstalled(role):
    """A declared uninstall entry point, which hands its footprint to _common, is called by playbooks/uninstall.yml
    with the role's own tags, and the role's README says what it removes and keeps."""
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    assert "uninstall" in specs, "meta/argument_specs.yml declares no uninstall entry point"
    tasks = yaml.safe_load((role / "tasks" / "uninstall.yml").read_text())
    tags = {role.name, "uninstall", role.name + "_uninstall"}
    includes = [t["ansible.builtin.include_role"] for t in tasks if "ansible.builtin.include_role" in t]
    assert [i.get("tasks_from") for i in includes] == ["uninstall"]
    # --tags <role> reaches every task, _common's included ones through apply
    assert all(set(t.get("tags") or []) == tags for t in tasks) and set(includes[0]["apply"]["tags"]) == tags
    calls = [t for play in UNINSTALL for t in play.get("tasks") or []
             if (t.get("ansible.builtin.include_role") or {}).get("name") == "llmhost.vllm." + role.name]
    assert len(calls) == 1 and calls[0]["ansible.builtin.include_role"]["tasks_from"] == "uninstall"
    assert set(calls[0]["tags"]) == tags == set(calls[0]["ansible.builtin.include_role"]["apply"]["tags"])
    assert "## Uninstall" in (role / "README.md").read_text()


def _tasks(node):
    """Every task of a task list, blocks unrolled."""
    for task in node or []:
        if isinstance(task, dict):
            yield task
            for key in ("block", "rescue", "always"):
                yield from _tasks(task.get(key))


def _task_files():
    for path in sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/handlers/*.yml")):
        yield path, yaml.safe_load(path.read_text()) or []
    for path in sorted(ROOT.glob("playbooks/*.yml")):
        plays = yaml.safe_load(path.read_text()) or []
        yield path, [t for play in plays for key in ("pre_tasks", "tasks", "post_tasks", "handlers")
                     for t in play.get(key) or []]


def test_a_role_is_entered_only_through_a_declared_entry_point():
    """tasks_from into another role's file that its argument_specs do not declare is a phase file used as an
    interface: its inputs are never checked, and the callee cannot change it without breaking the caller."""
    found = []
    for path, tasks in _task_files():
        for task in _tasks(tasks):
            for module in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
                args = task.get(module)
                if not isinstance(args, dict) or "{{" in args["name"]:
                    continue
                role = args["name"].rsplit(".", 1)[-1]
                entry = args.get("tasks_from", "main")
                declared = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())
                if entry not in declared["argument_specs"]:
                    found.append("%s: %s tasks_from=%s" % (path.relative_to(ROOT), role, entry))
    assert not found, "declare these entry points in the role's meta/argument_specs.yml:\n" + "\n".join(found)


def _templated(node, where=""):
    """(where, value) of every string of a parsed YAML node that holds Jinja."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _templated(value, "%s.%s" % (where, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _templated(value, "%s[%d]" % (where, i))
    elif isinstance(node, str) and ("{{" in node or "{%" in node):
        yield where, node


def _yaml_files():
    return (sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/handlers/*.yml"))
            + sorted(ROOT.glob("roles/*/vars/*.yml")) + sorted(ROOT.glob("playbooks/*.yml")))


def test_no_jinja_value_spans_more_than_four_lines():
    """A decision longer than that belongs in Python (module_utils, a filter), where a test can reach it; the
    YAML wires it. Counted as the value is read (a folded >- block's lines joined), as the design issue counted."""
    found = ["%s%s: %d lines" % (path.relative_to(ROOT), where, len(value.strip().splitlines()))
             for path in _yaml_files() for where, value in _templated(yaml.safe_load(path.read_text()))
             if len(value.strip().splitlines()) > 4]
    assert not found, "\n".join(found)


def test_no_jinja_programs_in_task_files():
    """{% set %} and {% for %} build values step by step: a function with a test does that (templates keep theirs)."""
    program = re.compile(r"\{%-?\s*(set|for)\b")
    found = ["%s:%d" % (path.relative_to(ROOT), n) for path in _yaml_files()
             for n, line in enumerate(path.read_text().splitlines(), 1) if program.search(line)]
    assert not found, found


# What the stack profile role publishes besides the profile itself, by the word a role's include names it with.
PROFILE_EXTRAS = {"python": "llmhost_stack_python", "locks": "llmhost_stack_locks_dir",
                  "nvidia_repo": "llmhost_stack_nvidia_repo"}
READS_ALL = "to set all of it against the host"


def unrolled(tasks):
    """Every task of a task list, the tasks of its blocks in their place."""
    for task in tasks:
        if isinstance(task, dict) and any(k in task for k in ("block", "rescue", "always")):
            for key in ("block", "rescue", "always"):
                yield from unrolled(task.get(key) or [])
        elif isinstance(task, dict):
            yield task


def profile_reads(role):
    """The profile's keys (and PROFILE_EXTRAS' words) the role's own files read."""
    text = "".join(p.read_text() for p in sorted(role.rglob("*")) if p.is_file() and p.suffix in (".yml", ".j2"))
    reads = set(re.findall(r"llmhost_stack_profile\.([a-z_]+)", text))
    return sorted(reads | {w for w, name in PROFILE_EXTRAS.items() if re.search(r"\b%s\b" % name, text)})


def profile_includes(role):
    """The names of the role's tasks that load the stack profile."""
    found = []
    for path in sorted((role / "tasks").glob("*.yml")):
        for task in unrolled(yaml.safe_load(path.read_text()) or []):
            if (task.get("ansible.builtin.include_role") or {}).get("name") == "llmhost.vllm.llmhost_stack":
                found.append("%s: %s" % (path.name, task.get("name", "")))
    return found


@pytest.mark.parametrize("role", [r for r in ROLES if r.name != "llmhost_stack"], ids=lambda p: p.name)
def test_a_role_loads_the_stack_profile_only_where_it_reads_it_and_says_what(role):
    """Each include is named 'Load the stack profile for its <what>', <what> being exactly what the role reads of it
    (or 'to set all of it against the host'); a role that reads nothing of it does not load it."""
    reads, includes = profile_reads(role), profile_includes(role)
    if not reads:
        assert all(i.endswith(READS_ALL) for i in includes), "%s reads nothing of the stack profile" % role.name
    for include in includes:
        said = re.fullmatch(r"[a-z_]+\.yml: Load the stack profile (for its (.+)|%s)" % READS_ALL, include)
        assert said, "%s: say what the role reads of the profile, as 'Load the stack profile for its ...'" % include
        assert said.group(1) == READS_ALL or said.group(2).split(", ") == reads, (include, reads)


def test_the_profile_check_sees_an_include_that_says_nothing(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "main.yml").write_text(
        "- name: Load the stack profile\n  ansible.builtin.include_role:\n    name: llmhost.vllm.llmhost_stack\n"
        "- ansible.builtin.debug:\n    msg: \"{{ llmhost_stack_profile.vllm.version }} {{ llmhost_stack_python }}\"\n")
    assert profile_reads(tmp_path) == ["python", "vllm"]
    assert profile_includes(tmp_path) == ["main.yml: Load the stack profile"]


def _play_includes():
    for path in sorted(ROOT.glob("playbooks/*.yml")):
        for play in yaml.safe_load(path.read_text()) or []:
            for task in _tasks([t for key in ("pre_tasks", "tasks", "post_tasks") for t in play.get(key) or []]):
                args = task.get("ansible.builtin.include_role")
                if isinstance(args, dict):
                    yield path.relative_to(ROOT), set(play.get("tags") or []), task, args


def test_a_tagged_include_in_a_play_hands_its_tags_down():
    """A role's tags, and the tags of the play, reach the tasks an include_role brings in; the tags of an include_role
    in a play's task list reach only the include (checked with ansible-core 2.19: under `--tags x`, an include tagged
    x runs, and its untagged tasks are skipped, so what they publish is missing). Such an include hands its tags down
    through `apply`."""
    found = ["%s: %s" % (path, task.get("name")) for path, play_tags, task, args in _play_includes()
             if not set(task.get("tags") or []) <= play_tags and "apply" not in args]
    assert not found, "add apply: {tags: [...]} (the include's tags) to:\n" + "\n".join(found)
