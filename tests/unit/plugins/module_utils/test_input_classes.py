"""Inputs judged by their class (module_utils/input_classes.py): one table of good and bad values per class."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import input_classes as ic

CASES = [
    # unit names: the collection's prefix, or a system unit would be replaced
    ("gpu_tuning_unit", "llmhost-gpu-tuning.service", None),
    ("gpu_tuning_unit", "ssh.service", "does not start with the collection's prefix"),
    ("system_tuning_cpu_policy_unit", "cpufrequtils.service", "choose a name such as llmhost-cpufrequtils.service"),
    ("vllm_service_unit_name", "vllm", None),
    ("vllm_service_unit_name", "vllm-qwen", None),
    ("vllm_service_unit_name", "getty", "does not start with the collection's prefix"),
    # URLs others read: no credentials; pip's (a 0600 file) may carry them
    ("llmhost_stack_nvidia_repo_url", "https://mirror.lan/cuda/", None),
    ("llmhost_stack_nvidia_repo_url", "https://bob:hunter2@mirror.lan/cuda/", "holds credentials"),
    ("model_hf_endpoint", "https://token@hf-mirror.lan", "holds credentials"),
    ("vllm_install_git_mirrors", {"https://github.com/nvidia/cutlass.git": "https://u:p@git.lan/cutlass.git"},
     "holds credentials"),
    ("monitoring_alertmanager_urls", ["http://127.0.0.1:9093", "https://a:b@am.lan"], "holds credentials"),
    ("vllm_install_git_url", "https://git.lan/vllm.git?ref=a@b", None),
    ("vllm_install_index_url", "https://bob:hunter2@pypi.lan/simple", None),
    # an address a service binds: literal, as the service reads it
    ("gateway_listen_address", "0.0.0.0", None), ("gateway_listen_address", "::1", None),
    ("gateway_listen_address", "gw.lan", "is not a literal IPv4 or IPv6 address"),
    ("monitoring_listen_address", "127.0.0.1", None),
    ("monitoring_listen_address", "::1", "is not a literal IPv4 address"),
    ("monitoring_listen_address", "localhost", "is not a literal IPv4 address"),
    # an address other hosts dial
    ("vllm_service_advertise_address", "10.0.0.2", None),
    ("vllm_service_advertise_address", "gpu1.lan", None),
    ("vllm_service_advertise_address", "127.0.1.1", "names this host's loopback"),
    ("vllm_service_advertise_address", "::1", "names this host's loopback"),
    ("vllm_service_advertise_address", "LocalHost.", "names this host's loopback"),
    ("vllm_service_advertise_address", "gpu.localhost", "names this host's loopback"),
    ("vllm_service_advertise_address", "0.0.0.0", "or every address"),
    ("vllm_service_advertise_address", "", None),
    # folders the roles take (create, chown, chmod), whichever role or playbook: never shared or system ones
    ("benchmark_work_dir", "/dev/shm", "is a system folder"),
    ("monitoring_grafana_dashboards_dir", "/usr/local/bin", "is a system folder"),
    ("gateway_config_dir", "/etc/nginx", "is a system folder"),
    ("quantize_home", "/opt/llmhost/quantize", None),
    ("monitoring_grafana_dashboards_dir", "", None),
    # a log nginx appends to as root, and the uninstall removes
    ("gateway_access_log", "/var/log/nginx/llmhost-gateway.access.log", None),
    ("gateway_access_log", "/var/log/llmhost/gw.log", None),
    ("gateway_access_log", "/etc/passwd", "is not a log file of the collection's own"),
    ("gateway_access_log", "/var/log/syslog", "is not a log file of the collection's own"),
    ("gateway_access_log", "/var/log/nginx/access.log", "is not a log file of the collection's own"),
    ("gateway_access_log", "/var/log/../etc/llmhost.log", "is not a log file of the collection's own"),
    # folders named as the collection's working folders
    ("model_name", "qwen3-4b", None),
    ("model_name", "qwen3-4b.partial", "working folders"),
    ("vllm_service_cache_dir", "/var/cache/vllm.previous/", "working folders"),
    ("vllm_install_home", "/opt/llmhost/vllm.old", "working folders"),
    ("vllm_install_home", "/opt/llmhost/vllm.older", None),
]


@pytest.mark.parametrize("name,value,words", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_each_class_takes_the_good_and_names_the_bad(name, value, words):
    got = ic.errors({name: value}, path_names={"vllm_service_cache_dir", "vllm_install_home"})
    if words is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith(name + "=") and words in got[0], got


def test_hosts_of_one_network_namespace_may_advertise_loopback_when_they_say_so():
    assert ic.errors({"vllm_service_advertise_address": "127.0.0.2", "vllm_service_advertise_loopback": True}) == []
    assert ic.errors({"vllm_service_advertise_address": "127.0.0.2", "vllm_service_advertise_loopback": "true"}) == []
    assert ic.errors({"vllm_service_advertise_address": "127.0.0.2", "vllm_service_advertise_loopback": False})


def test_a_url_with_credentials_is_never_shown():
    got = ic.errors({"model_hf_endpoint": "https://token-of-the-test@hf.lan"})
    assert got and "token-of-the-test" not in got[0] and "(not shown)" in got[0]


def test_a_variable_of_no_class_is_not_read():
    assert ic.errors({"gateway_port": "ssh.service", "vllm_service_cache_dir": "/x/y.partial"}) == []


@pytest.mark.parametrize("name,value,secret", [
    ("HF_TOKEN", "x", True), ("OPENAI_API_KEY", "x", True), ("DB_PASSWORD", "x", True), ("HTTP_AUTHORIZATION", "x", True),
    ("AWS_CREDENTIALS_FILE", "/x", True), ("MY_PWD", "x", True),
    ("HTTPS_PROXY", "http://bob:hunter2@proxy.lan:3128", True), ("UPSTREAM", "sk-abcdef0123456789", True),
    ("X", "hf_abcdefABCDEF0123456789", True), ("BLOB", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7", True),
    ("VLLM_LOGGING_LEVEL", "DEBUG", False), ("OMP_NUM_THREADS", "8", False),
    ("HTTPS_PROXY", "http://proxy.lan:3128", False), ("VLLM_ATTENTION_BACKEND", "FLASH_ATTN", False),
    ("TRANSFORMERS_CACHE_DIR_FOR_SOMETHING_LONGER", "/var/cache/vllm/huggingface/transformers", False),
])
def test_a_secret_is_known_by_its_name_or_its_value(name, value, secret):
    assert ic.secret_shaped(name, value) is secret
    env = {name: value, "PLAIN": "1"}
    assert (name in ic.split_env(env, True)) is secret and "PLAIN" in ic.split_env(env, False)


@pytest.mark.parametrize("options,folders", [
    ({"a_dir": [{"type": "str"}], "b_home": [{}], "c_venv": [{"type": "str"}], "d_path": [{"type": "str"}]},
     {"a_dir", "b_home", "c_venv", "d_path"}),
    ({"x_file": [{"type": "path"}], "y": [{"type": "path"}], "z_port": [{"type": "int"}]}, {"y"}),
])
def test_declared_folders_are_found_by_type_or_name(options, folders):
    assert ic.folder_names(options) == folders


def test_folders_the_roles_take_are_read_from_defaults_and_the_hosts_values():
    merged = {"vllm_service_cache_dir": "/var/cache/vllm", "model_hf_cache": "{{ model_store }}/hf", "model_store": "",
              "quantize_home": "/dev/shm", "gateway_port": 8443}
    assert ic.taken_paths(merged) == {"vllm_service_cache_dir": "/var/cache/vllm"}


MINE = {"exists": True, "type": "directory", "owner": "vllm", "group": "vllm"}


@pytest.mark.parametrize("seen,words", [
    ({"exists": False}, None),
    (dict(MINE, mode="0750"), None),
    (dict(MINE, mode="1777"), "is a shared folder on the host (mode 1777"),
    (dict(MINE, mode="0777"), "is a shared folder on the host (mode 0777"),
    (dict(MINE, mode="1755"), "is a shared folder"),
    ({"exists": True, "type": "link", "mode": "0777"}, "is a symbolic link on the host"),
    ({"exists": True, "type": "file", "mode": "0644"}, "not a folder"),
    ({"exists": False, "error": "Permission denied"}, None),
])
def test_a_folder_the_roles_would_take_is_neither_shared_nor_a_link(seen, words):
    got = ic.shared_folder_errors({"/srv/x": seen}, {"vllm_service_cache_dir": "/srv/x"}, "vllm")
    if words is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith("vllm_service_cache_dir=/srv/x ") and words in got[0], got


ROOTS = {"exists": True, "type": "directory", "owner": "root", "group": "root", "mode": "0755"}


@pytest.mark.parametrize("name,seen,user,words", [
    # exactly as the role makes it: nothing is taken over, whoever made it
    ("model_store", ROOTS, "vllm", None),
    ("vllm_service_cache_dir", dict(ROOTS, owner="llm", group="llm", mode="0750"), "llm", None),
    ("model_hf_cache", dict(ROOTS, mode="0700"), "vllm", None),
    ("vllm_install_wheel_cache", dict(ROOTS, group="adm", mode="0750"), "vllm", None),
    # someone else's: the owner, the group or the mode differs from the role's
    ("model_store", dict(ROOTS, owner="alice"), "vllm",
     "is on the host already as alice:root 0755, not as its role makes it (root:root 0755)"),
    ("gateway_config_dir", dict(ROOTS, group="www-data"), "vllm", "as root:www-data 0755"),
    ("vllm_service_config_dir", dict(ROOTS, mode="0700"), "vllm", "make this one root:root 0755 yourself"),
    ("vllm_service_cache_dir", dict(ROOTS, mode="0750"), "vllm", "not as its role makes it (vllm:vllm 0750)"),
    ("vllm_service_cache_dir", dict(ROOTS, owner="1001", group="1001", mode="0750"), "vllm", "as 1001:1001 0750"),
    ("benchmark_work_dir", dict(ROOTS, owner="postgres"), "vllm", "(root:any group)"),
    # root writes in it: a group other than root's may not
    ("vllm_install_wheel_cache", dict(ROOTS, group="staff", mode="0775"), "vllm", "as root:staff 0775"),
])
def test_a_folder_already_there_is_taken_only_as_its_role_makes_it(name, seen, user, words):
    got = ic.shared_folder_errors({"/srv/x": seen}, {name: "/srv/x"}, user)
    assert got == [] if words is None else (len(got) == 1 and got[0].startswith(name + "=/srv/x ")
                                            and words in got[0]), got


def test_every_taken_folder_says_what_its_role_makes_it():
    assert set(ic.MADE_AS) == ic.TAKEN_FOLDERS
    assert ic.made_as("vllm_service_cache_dir", "llm") == ("llm", "llm", "0750")


@pytest.mark.parametrize("merged,user", [
    ({}, "vllm"), ({"vllm_install_user": "llm"}, "llm"), ({"vllm_service_user": "", "vllm_install_user": "llm"}, "llm"),
    ({"vllm_service_user": "svc", "vllm_install_user": "llm"}, "svc"),
])
def test_the_service_user_is_vllm_services_choice_else_vllm_installs(merged, user):
    assert ic.service_user(merged) == user


@pytest.mark.parametrize("cache,words", [
    ("/var/cache/vllm", None),
    ("/etc/llmhost/vllm", "vllm_service_cache_dir=/etc/llmhost/vllm and vllm_service_config_dir=/etc/llmhost/vllm overlap"),
    ("/opt/llmhost/vllm/cache", "and vllm_install_home=/opt/llmhost/vllm overlap"),
    ("/srv/llmhost", "and model_store=/srv/llmhost/models overlap"),
    ("/srv/llmhost-cache", None),
])
def test_a_folder_handed_to_a_service_user_stays_apart_from_what_root_reads(cache, words):
    taken = {"vllm_service_cache_dir": cache, "vllm_service_config_dir": "/etc/llmhost/vllm",
             "vllm_install_home": "/opt/llmhost/vllm", "model_store": "/srv/llmhost/models"}
    got = ic.shared_folder_errors({}, taken)
    assert got == [] if words is None else (len(got) == 1 and words in got[0]), got
