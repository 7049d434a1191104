"""Each role's input table (module_utils/role_inputs.py): the role's defaults pass, and each bad value is named."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import role_inputs

ROOT = Path(__file__).resolve().parents[4]


# What a user must give (no default can): the model's pinned commit with its repository; and what the validate hands in
# beside the role's own variables.
REQUIRED = {"model": {"model_repo": "Qwen/Qwen3-4B-Instruct-2507", "model_revision": "0" * 40,
                      "model_profile_repo": "Qwen/Qwen3-4B-Instruct-2507"},
            "llmhost_stack": {"known_profiles": ["seed", "current"], "key_name": "3bf863cc.pub"},
            "vllm_install": {"method": "source", "methods": ["wheel", "source"],
                             "arch_list_pattern": yaml.safe_load((ROOT / "roles/vllm_install/vars/main.yml").read_text())
                             ["__vllm_install_arch_list_pattern"]}}


def defaults(role):
    """The role's own defaults, with what the roles' vars would template filled in for the table's names."""
    values = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()) or {}
    return dict({name: values.get(name, "") for name in role_inputs.names(role)}, **REQUIRED.get(role, {}))


@pytest.mark.parametrize("role", sorted(role_inputs.TABLES))
def test_a_roles_defaults_pass_its_own_table(role):
    assert role_inputs.errors(role, defaults(role)) == []


@pytest.mark.parametrize("role", sorted(role_inputs.TABLES))
def test_every_name_the_table_reads_is_a_declared_variable_of_the_role(role):
    spec = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())
    declared = set(spec["argument_specs"]["main"]["options"])
    assert set(role_inputs.names(role)) <= declared


CASES = [
    # system_tuning: the sysctl settings are mappings, numa_balancing and thp the words the role reads
    ("system_tuning", {"system_tuning_thp": "sometimes"}, "got numa_balancing=auto, thp=sometimes"),
    ("system_tuning", {"system_tuning_sysctl": ["vm.swappiness=10"]}, "must be dicts (key: value)"),
    ("system_tuning", {"system_tuning_numa_balancing": "off"}, "got numa_balancing=off"),
    ("system_tuning", {"system_tuning_numa_balancing": False, "system_tuning_thp": "never"}, None),
    # gpu_tuning: clocks as gpu_clocks takes them, GPU indexes as a list of plain names
    ("gpu_tuning", {"gpu_tuning_graphics": "2100,1000"}, "gpu_tuning_graphics_clocks=2100,1000 / gpu_tuning_memory"),
    ("gpu_tuning", {"gpu_tuning_memory": "fast"}, "gpu_tuning_memory_clocks=fast / gpu_tuning_power_limit_w"),
    ("gpu_tuning", {"gpu_tuning_graphics": "0"}, "in MHz above 0"),
    ("gpu_tuning", {"gpu_tuning_graphics": "1000,2100", "gpu_tuning_memory": "9501"}, None),
    ("gpu_tuning", {"gpu_tuning_gpus": "0,1"}, "gpu_tuning_gpus"),
    ("gpu_tuning", {"gpu_tuning_gpus": ["0", "0"]}, "gpu_tuning_gpus"),
    ("gpu_tuning", {"gpu_tuning_power_limit_w": 5000}, "gpu_tuning_power_limit_w=5000"),
    # vllm_install: a build wait that counts its time; an offline CUTLASS only where the profile's build clones one
    ("vllm_install", {"vllm_install_build_poll": 0}, "vllm_install_build_poll=0, vllm_install_build_timeout="),
    ("vllm_install", {"vllm_install_build_poll": 60, "vllm_install_build_timeout": 30}, "the timeout at least one poll"),
    ("vllm_install", {"vllm_install_cutlass_src": "/srv/src/cutlass", "profile_name": "current",
                      "profile_build_clones": {}}, "stack profile current names no CUTLASS clone"),
    ("vllm_install", {"vllm_install_cutlass_src": "/srv/src/cutlass", "profile_build_clones": {"cutlass": "v3.5.1"}},
     None),
    # quantize: a group size vLLM's AWQ kernels run, only where this host quantizes; pip's sources as a list
    ("quantize", {"quantize_group_size": 256, "quantize_wanted": True}, "(256 is larger than the kernels tile)"),
    ("quantize", {"quantize_group_size": 96, "quantize_wanted": True}, "quantize_group_size=96: vLLM's AWQ kernels"),
    ("quantize", {"quantize_group_size": 256, "quantize_wanted": False}, None),
    ("quantize", {"quantize_group_size": -1, "quantize_wanted": True}, None),
    ("quantize", {"quantize_find_links": "https://mirror.lan/wheels"}, "quantize_find_links"),
    ("quantize", {"quantize_samples": 0}, "quantize_samples=0 must be a number from 1 up"),
    # vllm_service: secrets the quoted file carries as they are; no address beyond loopback without a key
    ("vllm_service", {"vllm_service_hf_token": "hf_x\nVLLM_ARGS=--port 1"}, "vllm_service_hf_token holds a newline"),
    ("vllm_service", {"vllm_service_host": "0.0.0.0"}, "vllm_service_host=0.0.0.0 is not a loopback address"),
    ("vllm_service", {"vllm_service_host": "localhost"}, "vllm_service_host=localhost is not a loopback address"),
    ("vllm_service", {"vllm_service_host": "0.0.0.0", "vllm_service_allow_unauthenticated": True}, None),
    ("vllm_service", {"vllm_service_host": "::", "vllm_service_api_key": "k3Q9x-Vw7Lp2Zr8Tn4Yb6Hc1"}, None),
    ("vllm_service", {"vllm_service_host": "::1"}, None),
    # the model: a pinned hub download, a local folder by its absolute path, a token of one plain word
    ("model", {"model_revision": "main"}, "model_repo=Qwen/Qwen3-4B-Instruct-2507 / model_revision=main: a hub download"),
    ("model", {"model_repo": "not a repo"}, "model_repo=not a repo / model_revision=" + "0" * 40),
    # a commit pinned without its repository would follow whichever repository the profile names (llmhost_stack=...)
    ("model", {"model_repo": ""}, "model_revision=%s is pinned without model_repo: a commit belongs to one repository, "
                                  "and with model_repo empty the repository is the stack profile's (now "
                                  "Qwen/Qwen3-4B-Instruct-2507; another profile names another)" % ("0" * 40)),
    ("model", {"model_repo": "", "model_profile_repo": "Qwen/Qwen2.5-3B-Instruct"}, "Pin the pair: model_repo=Qwen/Qwen2.5-3B-Instruct"),
    ("model", {"model_repo": "", "model_source": "local", "model_local_path": "/srv/models/tiny"}, None),
    ("model", {"model_source": "local", "model_local_path": "models/tiny"}, "model_local_path=models/tiny: model_source"),
    ("model", {"model_source": "local", "model_local_path": "/srv/models/tiny", "model_revision": ""}, None),
    ("model", {"model_hf_token": "hf_abc def"}, "model_hf_token holds whitespace"),
    ("model", {"model_hf_token": "hf_abc\\"}, "model_hf_token holds whitespace"),
    ("model", {"model_hf_token": "hf_TokenOfOneWord0123"}, None),
    ("model", {"model_download_poll": 0}, "model_download_poll"),
    # the gateway's fleet group against the inventory's groups, and its clients (never their keys)
    ("gateway", {"gateway_backends_group": "gpu_boxes", "groups": {"all": ["a"], "vllm_hosts": ["a"]}},
     "gateway_backends_group: 'gpu_boxes' is no group of the inventory (groups: vllm_hosts)"),
    ("gateway", {"gateway_backends_group": "all", "groups": {"all": ["a"]}}, "gateway_backends_group=all: name"),
    ("gateway", {"gateway_backends_group": "empty", "groups": {"all": ["a"], "empty": []}}, "not a group without hosts"),
    ("gateway", {"gateway_backends_group": "gpus", "groups": {"all": ["a"], "gpus": ["a"]}}, None),
    ("gateway", {"gateway_clients": [{"name": "a", "key": "k3Q9x-Vw7Lp2Zr8Tn4Yb6Hc1"}],
                 "vllm_service_api_key": "k3Q9x-Vw7Lp2Zr8Tn4Yb6Hc1"}, "its key is the one the gateway presents to vLLM"),
    ("vllm_service", {"vllm_service_base_port": 80}, "vllm_service_base_port=80 must be a number from 1024 to 65535"),
    ("vllm_service", {"vllm_service_gpu_memory_utilization": float("nan")}, "must be a number from 0.1 to 0.98"),
    ("vllm_service", {"vllm_service_host": "a b"}, "vllm_service_host: 'a b' is not a host name or an IP address"),
    ("vllm_service", {"vllm_service_advertise_address": "10.0.0.2 evil"}, "vllm_service_advertise_address: '10.0.0.2 evil'"),
    ("vllm_service", {"vllm_service_after": "network.target"}, "vllm_service_after must be a list"),
    ("vllm_service", {"vllm_service_after": ["x.target", "x.target"]}, "lists an item twice"),
    ("vllm_service", {"vllm_service_after": ["a\nb.service"]}, "is not a systemd unit name"),
    ("vllm_service", {"vllm_service_gpus": [0, 0]}, "vllm_service_gpus=[0, 0] lists an item twice"),
    ("vllm_service", {"vllm_service_gpus": "all"}, None),
    ("vllm_service", {"vllm_service_env": ["A=1"]}, "vllm_service_env must be a dict"),
    ("vllm_service", {"vllm_service_env": {"1A": "x"}}, "is not an environment variable name"),
    ("vllm_service", {"vllm_service_env": {"A": "x\"\nB=y"}}, "vllm_service_env: the value of A holds a newline"),
    ("vllm_service", {"vllm_service_env": {"LD_PRELOAD": "/tmp/x.so"}}, "vllm_service_env: 'LD_PRELOAD' makes the process"),
    ("vllm_service", {"vllm_service_env": {"CUDA_VISIBLE_DEVICES": "1"}},
     "vllm_service_env sets CUDA_VISIBLE_DEVICES, which the serving plan or the unit sets"),
    ("vllm_service", {"vllm_service_extra_args": ["--served-model-name", "a b"]},
     "vllm_service_extra_args: arguments with spaces, quotes, $ or backslashes cannot be passed safely"),
    ("vllm_service", {"vllm_service_trial": {"name": "x", "extra_args": ["--seed", "1;id"]}}, None),
    ("vllm_service", {"vllm_service_trial": {"name": "x", "extra_args": ["--seed", "$(id)"]}},
     "vllm_service_trial (x): arguments with spaces, quotes, $ or backslashes cannot be passed safely"),
    ("vllm_service", {"vllm_service_trial": {"wishes": {}}}, "vllm_service_trial must be a candidate of playbooks/tune.yml"),
    ("vllm_service", {"vllm_service_cache_dir": "/"}, "vllm_service_cache_dir='/' is a system folder"),
    ("vllm_service", {"vllm_service_model_path": ""}, None),
    ("gateway", {"gateway_port": 0}, "gateway_port=0 must be a number from 1 to 65535"),
    ("gateway", {"gateway_tls_certificate": "/etc/ssl/llmhost/gw.crt"}, "go together"),
    ("gateway", {"gateway_access_log": "relative.log"}, "gateway_access_log='relative.log' is not an absolute path"),
    ("monitoring", {"monitoring_alert_disk_paths": ["/srv/models", "data"]},
     "monitoring_alert_disk_paths item data='data' is not an absolute path"),
    ("monitoring", {"monitoring_gpu_exporter_find_links": "wheels"}, "monitoring_gpu_exporter_find_links must be a list"),
    ("monitoring", {"monitoring_gpu_exporter_index_url": "ftp://x"}, "is not a URL"),
    ("nvidia_driver", {"nvidia_driver_packages": "nvidia-driver"}, "nvidia_driver_packages must be a list"),
    ("nvidia_driver", {"nvidia_driver_version": "580.159.04\n"}, "nvidia_driver_version: '580.159.04\\n' is not a Debian"),
    ("nvidia_driver", {"nvidia_driver_pin_file": "/etc/apt/preferences"}, "must be a file directly in /etc/apt/preferences.d"),
    ("kernel", {"kernel_packages": ["Linux"]}, "kernel_packages: 'Linux' is not a Debian package name"),
    ("kernel", {"kernel_release": ""}, None),
    ("cuda_toolkit", {"cuda_toolkit_home": "/usr/local/cuda 12"}, "has characters other than"),
    ("system_tuning", {"system_tuning_cpu_governor": "performance; id"}, "must be one plain name"),
    ("system_tuning", {"system_tuning_cpu_governor": ""}, None),
    ("system_tuning", {"system_tuning_sysctl_file": "/etc/sysctl.conf"}, "must be a file directly in /etc/sysctl.d"),
    ("vllm_install", {"vllm_install_git_mirrors": {"https://github.com/a/b.git": "https://x/$(id)"}}, "is not a URL"),
    ("vllm_install", {"vllm_install_cuda_home": "/usr"}, None),
    ("vllm_install", {"vllm_install_home": "/opt"}, "vllm_install_home='/opt' is a system folder"),
    ("vllm_install", {"vllm_install_user": "Vllm"}, "is not a user or group name"),
    ("vllm_install", {"method": "conda"}, "vllm_install_method=conda; choose one of wheel, source."),
    ("vllm_install", {"vllm_install_arch_list": "8.9;9.0a+PTX"}, None),
    ("vllm_install", {"vllm_install_arch_list": "sm_89"}, 'vllm_install_arch_list="sm_89": give the GPUs\' compute'),
    ("vllm_install", {"vllm_install_arch_list": "8.9 9.0"}, "as TORCH_CUDA_ARCH_LIST, ;-separated"),
    ("benchmark", {"benchmark_client": "wrk"}, "benchmark_client: wrk is none of vllm, script"),
    ("benchmark", {"benchmark_poll": 0}, "benchmark_poll=0 must be a number from 1 to 3600"),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "/srv/mirror/cuda"}, "is not an http://, https:// or file:// URL"),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "https://m.lan/cuda/\nTrusted: yes"}, "is not a URL"),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_keyring": "/etc/apt/trusted.gpg"}, "must be a file directly in"),
    ("llmhost_stack", {"llmhost_stack": "sid"}, "llmhost_stack=sid is not a stack profile; choose one of seed, current"),
    ("llmhost_stack", {"llmhost_stack_overrides": ["vllm"]}, "must be a dict of profile keys to override, got list"),
    # the key over plain http, named as given or as the repository's, and neither when the key is inline
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "http://m.lan/cuda/"},
     "from http://m.lan/cuda/3bf863cc.pub (llmhost_stack_nvidia_repo_url, whose <url>/3bf863cc.pub is the key)"),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "http://m.lan/cuda", "llmhost_stack_nvidia_repo_key_url":
                       "http://m.lan/k.pub"}, "from http://m.lan/k.pub (llmhost_stack_nvidia_repo_key_url)"),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "http://m.lan/cuda",
                       "llmhost_stack_nvidia_repo_key_url": "https://m.lan/k.pub"}, None),
    ("llmhost_stack", {"llmhost_stack_nvidia_repo_url": "http://m.lan/cuda",
                       "llmhost_stack_nvidia_repo_key": "-----BEGIN PGP PUBLIC KEY BLOCK-----"}, None),
    ("doctor", {"doctor_burnin_minutes": 0}, "doctor_burnin_minutes=0 must be a number from 0.1 to 1440"),
]


@pytest.mark.parametrize("role,bad,words", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_each_bad_value_is_named_and_the_rest_still_pass(role, bad, words):
    got = role_inputs.errors(role, dict(defaults(role), **bad))
    if words is None:
        assert got == []
    else:
        assert len(got) == 1 and words in got[0], got


@pytest.mark.parametrize("overrides,words", [
    ({"vllm": {"version": "0.7.0"}}, []),
    ({"vllm": "0.7.0", "vlm": {}}, ["vlm is not a key of the profile", "vllm must be a dict of the keys to change"]),
    ({"name": "mine"}, []),
])
def test_an_override_is_a_key_of_the_profile_in_its_shape(overrides, words):
    profile = {"vllm": {"version": "0.6.3"}, "name": "seed"}
    assert role_inputs.override_errors(overrides, profile) == [w + ("" if "not a key" in w else ", as in the profile")
                                                               for w in words]
