"""One check per class of input, and no variable outside it: every declared variable whose name or default says its
class is held to that class's shared check (issue: every input judged by what it becomes). A new role or variable
that skips its class fails here."""
import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import (input_classes, input_types, listeners, role_inputs,
                                                                   vllm_options)

ROOT = Path(__file__).resolve().parents[2]


def _options():
    return input_types.options_by_name(yaml.safe_load(p.read_text())
                                       for p in sorted(ROOT.glob("roles/*/meta/argument_specs.yml")))


def _defaults():
    out = {}
    for path in sorted(ROOT.glob("roles/*/defaults/main.yml")):
        out.update(yaml.safe_load(path.read_text()) or {})
    return out


OPTIONS = _options()
PUBLIC = {n: specs for n, specs in OPTIONS.items() if not n.startswith("_")}


def test_booleans_are_declared_bool_so_the_first_play_reads_them_once():
    """Class 2: type_errors refuses every boolean that is not a real one or a word both readings share; it reads the
    declared type, so every default that is a boolean must be declared bool."""
    found = [n for n, v in _defaults().items() if isinstance(v, bool)
             and not all(s.get("type") == "bool" for s in OPTIONS.get(n, [{}]))]
    assert not found


def test_numbers_are_declared_int_or_float_so_nan_and_8080_0_are_refused():
    """Class 3: finiteness and whole numbers are type_errors' for every declared int and float."""
    found = [n for n, v in _defaults().items() if isinstance(v, (int, float)) and not isinstance(v, bool)
             and not all(s.get("type") in ("int", "float") for s in OPTIONS.get(n, [{}]))]
    assert not found


def test_every_port_is_a_listener_the_first_play_compares():
    """Class 4: port_clashes compares what module_utils/listeners.py lists; a port outside it would go unchecked."""
    merged = dict(_defaults(), monitoring_alertmanager="managed", gateway_state="present",
                  monitoring_node_exporter=True, monitoring_gpu_exporter=True, monitoring_prometheus="managed")
    compared = {item[0] for item in listeners.listeners(merged)}
    assert {n for n in PUBLIC if n.endswith("_port")} == compared


def test_every_unit_name_a_user_chooses_carries_the_collections_prefix():
    """Class 5."""
    declared = {n for n in PUBLIC if re.search(r"_unit(_name)?\Z", n)}
    assert declared == input_classes.UNITS
    for name in declared:
        assert input_classes.errors({name: "ssh.service"}), name


def test_every_url_is_in_one_class():
    """Class 8 and 12: a URL lands where others read it (no credentials), in pip's 0600 file, or is a secret."""
    classes = input_classes.SHOWN_URLS | input_classes.PRIVATE_URLS | input_classes.SECRET_URLS
    declared = {n for n in PUBLIC if re.search(r"_(url|urls|endpoint|links|mirrors)\Z", n)}
    assert declared == classes, (declared - classes, classes - declared)
    for name in input_classes.SECRET_URLS:
        assert all(s.get("no_log") for s in OPTIONS[name]), name


# Named like a secret, but public by nature: the path of a key file, a repository's public signing key, its URL.
NOT_SECRETS = {"gateway_tls_key": "the path of nginx's key file, not the key",
               "nvidia_driver_mok_key": "the path of the MOK key file, not the key",
               "llmhost_stack_nvidia_repo_key": "NVIDIA's public signing key",
               "llmhost_stack_nvidia_repo_key_url": "where NVIDIA's public key is",
               "gateway_nginx_repo_key_url": "where nginx.org's public key is"}


def test_a_variable_named_as_a_secret_is_never_shown():
    """Class 8: by shape, not by a list of known names: *_key, *_token, *_secret, *password..."""
    shaped = {n for n in PUBLIC if re.search(r"(_key|_token|_secret|password|passwd|_credentials?)(_|\Z)", n)}
    assert set(NOT_SECRETS) <= shaped
    shown = [n for n in shaped - set(NOT_SECRETS) if not all(s.get("no_log") for s in OPTIONS[n])]
    assert not shown, "declare these no_log: true: %s" % shown


def test_every_declared_folder_is_refused_under_a_working_name():
    """Class 10: the collection's working folders (x.partial, x.previous, x.old) are never a folder of the user's."""
    folders = input_classes.folder_names(OPTIONS)
    declared = {n for n in PUBLIC if re.search(r"_(dir|home|venv|path)\Z", n)}
    assert declared <= folders and "vllm_service_cache_dir" in folders
    for name in sorted(folders | input_classes.FOLDER_NAMES):
        assert input_classes.errors({name: "/srv/llmhost/x.partial"}, folders), name
    # inside another role's rollback folder (the model's or the quantizer's kept .previous): moved or removed whole
    for name in sorted(folders):
        errors = input_classes.errors({name: "/srv/models/qwen.previous/out"}, folders)
        assert errors and "lies inside qwen.previous" in errors[0], (name, errors)
        assert not input_classes.errors({name: "/srv/models/qwen.previously/out"}, folders), name


def test_every_declared_folder_is_taken_or_says_why_not():
    """Class 1: a folder a role creates, chowns or chmods goes through the one folder check in the first play of every
    playbook; any other declared path says why it is not one (read only, on the controller, a file)."""
    folders = {n for n in input_classes.folder_names(OPTIONS) if not n.startswith("_")}
    assert folders == input_classes.TAKEN_FOLDERS | set(input_classes.NOT_TAKEN), (
        folders - input_classes.TAKEN_FOLDERS - set(input_classes.NOT_TAKEN))
    assert not input_classes.TAKEN_FOLDERS & set(input_classes.NOT_TAKEN)
    for name in input_classes.TAKEN_FOLDERS:
        assert "system folder" in " ".join(input_classes.errors({name: "/dev/shm"})), name


@pytest.mark.parametrize("folder", ["/etc/systemd/system/vllm@.service.d/cache", "/run/systemd/system/x.service.d",
                                    "/lib/systemd/system/llmhost-ray.service.d/tmp", "/etc/systemd/user/a/b"])
def test_a_folder_handed_over_inside_a_unit_folder_is_refused(folder):
    """A folder a role creates or hands to a service user, inside systemd's unit folders: a drop-in written there runs
    as root. Every taken folder goes through the one folder check, so each refuses it."""
    for name in input_classes.TAKEN_FOLDERS:
        errors = input_classes.errors({name: folder})
        assert errors and "lies inside systemd's unit folder" in errors[0], (name, errors)
        assert not input_classes.errors({name: "/var/lib/llmhost/systemd/system/x.service.d"}), name


def test_every_log_a_service_appends_to_is_the_collections_own():
    """Class 1: a log file named by a variable goes through the log check."""
    declared = {n for n in PUBLIC if re.search(r"_log\Z", n)}
    assert declared == input_classes.LOG_FILES


def test_the_advertised_address_is_checked():
    """Class 7."""
    declared = {n for n in PUBLIC if n.endswith("_advertise_address")}
    assert declared == input_classes.ADVERTISED


def test_every_address_a_service_binds_is_a_literal_one():
    """Class 11: a name nginx or Prometheus cannot resolve at start fails only after the install."""
    declared = {n for n in PUBLIC if n.endswith("_listen_address")}
    assert declared == set(input_classes.LISTEN_ADDRESSES)


_HOST_IN_PATH = re.compile(r"""(/|-)\{\{ inventory_hostname \}\}|(/|-)['"] ~ inventory_hostname ~""")


def test_an_inventory_name_becomes_a_file_name_only_through_file_part():
    """Class 10: a host named ../../x would write outside the report folder."""
    files = sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/vars/*.yml"))
    found = ["%s: %s" % (path.relative_to(ROOT), line.strip()) for path in files
             for line in path.read_text().splitlines() if _HOST_IN_PATH.search(line)]
    assert not found, found


def _tasks(role):
    """Every task of a role's task files, blocks unrolled, as YAML text (one string per task)."""
    out = []

    def walk(items):
        for task in items or []:
            if isinstance(task, dict) and "block" in task:
                walk(task["block"])
                walk(task.get("rescue"))
                walk(task.get("always"))
            elif isinstance(task, dict):
                out.append(yaml.safe_dump(task, width=10000))
    for path in sorted(ROOT.glob("roles/%s/tasks/*.yml" % role)):
        walk(yaml.safe_load(path.read_text()))
    return out


def _role_of(name):
    return next(p.parent.parent.name for p in sorted(ROOT.glob("roles/*/meta/argument_specs.yml"))
                if re.search(r"^ +%s:$" % name, p.read_text(), re.M))


def test_every_taken_folder_is_made_as_the_first_play_expects():
    """Class 1: the first play takes a folder already there only if it is exactly what its role makes it (MADE_AS);
    a role that made it otherwise would refuse its own folder on the next run. Each folder with a mode in MADE_AS is
    made by a task of its role that names the variable and that mode (or by _common's venv home, made 0755)."""
    common_venv = "\n".join(_tasks("_common"))
    assert "path: '{{ _common_venv_home }}'" in common_venv and "mode: '0755'" in common_venv
    for name, (owner, group, mode) in sorted(input_classes.MADE_AS.items()):
        if mode is None:
            continue
        made = [t for t in _tasks(_role_of(name)) if "_common_venv_home: '{{ %s }}'" % name in t and mode == "0755"
                or name in t and "'%s'" % mode in t and ("directory" in t or "directories" in t)]
        assert made, "no task of %s makes %s with mode %s" % (_role_of(name), name, mode)


def test_every_option_input_goes_through_its_check():
    """Class 6: a variable that becomes a program's options or environment is named in OPTION_INPUTS, and its
    role's validate hands it to that check."""
    declared = {n for n in PUBLIC if re.search(r"_(args|argv|env|flags|options|opts)\Z", n)}
    assert declared == set(input_classes.OPTION_INPUTS)
    validate = (ROOT / "roles/vllm_service/tasks/validate.yml").read_text()
    assert "vllm_service_extra_args | llmhost.vllm.vllm_option_errors(" in validate
    assert "vllm_service_env" in role_inputs.names("vllm_service")


def _vllm_service_values(**over):
    defaults = yaml.safe_load((ROOT / "roles/vllm_service/defaults/main.yml").read_text())
    return dict({n: defaults.get(n) for n in role_inputs.names("vllm_service")}, **over)


@pytest.mark.parametrize("env", [{"LD_PRELOAD": "/tmp/x.so"}, {"PYTHONPATH": "/tmp"}, {"ld_library_path": "/tmp"},
                                 {"CUDA_VISIBLE_DEVICES": "0"}, {"VLLM_API_KEY": "x"}])
def test_an_environment_that_loads_code_or_undoes_the_plan_is_refused(env):
    assert any("vllm_service_env" in e for e in role_inputs.errors("vllm_service", _vllm_service_values(
        vllm_service_env=env)))


TABLES = sorted((ROOT / "roles/vllm_service/files/vllm-options").glob("*.json"))


@pytest.mark.parametrize("table", TABLES, ids=[t.stem for t in TABLES])
def test_every_short_form_of_vllm_serve_is_owned_or_reviewed(table):
    """Class 6: argparse takes short forms (-tp, -asc, -dpl...); one that sets what the plan owns is refused as its
    long form is, and a short form a new table brings fails here until it is classed."""
    options = json.loads(table.read_text())["options"]
    short = {n for n in options if not n.startswith("--")}
    unclassed = sorted(n for n in short if not vllm_options.owner(n) and n not in vllm_options.FREE_SHORT_FORMS)
    assert not unclassed
    for args in (["--config", "/etc/x.yaml"], ["-tp", "8"], ["-pp", "2"], ["-asc", "4"], ["-dpl", "2"],
                 ["--data-parallel-size-local", "2"], ["--uds", "/run/x.sock"], ["--port=1"]):
        if args[0].split("=", maxsplit=1)[0] in options:
            assert vllm_options.validate(args, json.loads(table.read_text()), "x", refuse_owned=True), args
    assert vllm_options.validate(["--trust-remote-code"], json.loads(table.read_text()), "x", allow_foreign=False)


def test_every_key_a_server_accepts_is_held_to_the_key_check():
    """Class 9: a key a client sends to vLLM or to the gateway: printable, 20 to 256 characters, not guessable."""
    declared = {n for n in PUBLIC if n.endswith("_api_key")} - {"benchmark_api_key"}  # the benchmark only sends it
    assert declared == input_classes.KEYS
    for name in input_classes.KEYS:
        for bad in ("short", "a" * 24, "password-1234567890-password", "key with spaces in it 12345", "ключ" * 6):
            got = input_classes.errors({name: bad})
            assert got and got[0].startswith(name + "=(not shown) ") and bad not in got[0], (name, bad)
        assert not input_classes.errors({name: "k3Q9x-Vw7Lp2Zr8Tn4Yb6Hc1"}), name


def _as_declared(name, url):
    kind = {s.get("type") for s in OPTIONS[name]}
    if "dict" in kind:
        return {"https://github.com/vllm-project/vllm.git": url}
    return [url] if "list" in kind else url


def test_every_url_takes_only_the_schemes_of_its_class():
    """Class 12: mirrors and indexes take https://, http:// and file:// (offline); endpoints https:// and http://;
    every other scheme is refused in the first play, whatever role declares the URL."""
    urls = input_classes.SHOWN_URLS | input_classes.PRIVATE_URLS | input_classes.SECRET_URLS
    for name in sorted(urls):
        for bad in ("ftp://mirror.lan/x", "ssh://git@mirror.lan/x", "gopher://x", "mirror.lan/x"):
            assert input_classes.errors({name: _as_declared(name, bad)}), (name, bad)
        assert not input_classes.errors({name: _as_declared(name, "https://mirror.lan/x")}), name
        file_ok = not input_classes.errors({name: _as_declared(name, "file:///srv/mirror/x")})
        assert file_ok == (name not in input_classes.ENDPOINT_URLS), name


ROLES_WITH_VARIABLES = sorted({path.parts[-3] for path in ROOT.glob("roles/*/defaults/main.yml")} - {"_common"})


@pytest.mark.parametrize("role", ROLES_WITH_VARIABLES)
def test_a_role_used_alone_runs_the_class_checks_over_its_own_variables(role):
    """A role in a user's own playbook runs no first play: its validate.yml (which its preflight runs) must run the
    first play's type and class checks over its own variables, skipped where the first play ran them."""
    validate = ROOT / "roles" / role / "tasks" / "validate.yml"
    if role in ("llmhost_stack", "host_report"):
        pytest.skip("%s is loaded or run by the first play itself, never alone in a serving run" % role)
    text = validate.read_text()
    call = "llmhost.vllm.role_alone_errors('%s', _common_inputs_checked is defined)" % role
    assert call in text, "%s does not call %s" % (validate.relative_to(ROOT), call)
    preflight = ROOT / "roles" / role / "tasks" / "preflight.yml"
    runs_validate = "import_tasks: validate.yml" in (preflight.read_text() if preflight.exists() else "") \
        or "import_tasks: validate.yml" in (ROOT / "roles" / role / "tasks" / "main.yml").read_text()
    assert runs_validate, "%s's preflight (or main.yml) does not run validate.yml" % role


def test_no_pattern_lets_a_final_newline_through():
    """`$` matches before a final newline, so `re.match(r"^name$", "name\n")` passes a name that then breaks a file or
    a command line: every pattern of the collection's Python that is matched whole ends in \\Z (or uses fullmatch)."""
    found = []
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"re\.(compile|match)\(r[\"'][^\"']*\$[\"']", line):
                found.append("%s:%d: %s" % (path.relative_to(ROOT), number, line.strip()))
    assert not found


def test_a_name_with_a_final_newline_is_refused():
    from ansible_collections.llmhost.vllm.plugins.module_utils import bench
    phase = {"name": "mixed\n", "input_len": 8, "output_len": 8, "concurrency": 1, "requests": 1}
    assert bench.phase_errors([phase], "benchmark_phases") == [
        "benchmark_phases[0] (mixed\n): name must be 1 to 40 of a-z, 0-9 and _, starting with a letter or digit (it "
        "names the result file)"]
    assert bench.phase_errors([dict(phase, name="mixed")], "benchmark_phases") == []


def test_no_service_runs_as_root():
    """Every user or group a service of the collection runs as, or that owns its files, is held to one check."""
    not_users = {"gateway_backends_group": "an inventory group of hosts, not a user group",
                 "ray_cluster_group": "an inventory group of hosts, not a user group"}
    declared = {n for n in PUBLIC if re.search(r"_(user|group)\Z", n)} - set(not_users)
    assert declared == input_classes.SERVICE_USERS
    for name in declared:
        assert input_classes.errors({name: "root"}), name
        assert not input_classes.errors({name: "vllm"}), name


@pytest.mark.parametrize("value", ["qwen\u200b", "qwen\u202e", "qwen\u00a0x", "qwen\x07", "qwen\ue000"])
def test_a_served_name_with_a_character_no_one_sees_is_refused(value):
    values = {n: _defaults()[n] for n in role_inputs.names("vllm_service")}
    errors = role_inputs.errors("vllm_service", dict(values, vllm_service_served_model_name=value))
    assert any("vllm_service_served_model_name" in e and "no one sees" in e for e in errors), errors
    assert not [e for e in role_inputs.errors("vllm_service", dict(values, vllm_service_served_model_name="qwen-é"))
                if "vllm_service_served_model_name" in e]


def test_a_folder_name_longer_than_linux_takes_is_refused_for_every_taken_folder():
    for name in input_classes.TAKEN_FOLDERS:
        errors = input_classes.errors({name: "/srv/llmhost/" + "a" * 256})
        assert errors and "longer than 255 bytes" in errors[0], (name, errors)
        assert not input_classes.errors({name: "/srv/llmhost/" + "a" * 255}), name


def test_a_request_body_size_that_would_let_a_few_clients_take_the_memory_is_refused():
    """Every declared request-body size is held to the body-size class: the body is buffered in memory up to it."""
    declared = {n for n in PUBLIC if re.search(r"_body_", n)}
    assert declared == set(input_classes.BODY_SIZES)
    for name, most in input_classes.BODY_SIZES.items():
        errors = input_classes.errors({name: most + 1})
        assert errors and "lets a few clients take the host's memory" in errors[0] and str(most) in errors[0], errors
        assert not input_classes.errors({name: most}) and not input_classes.errors({name: _defaults()[name]}), name
