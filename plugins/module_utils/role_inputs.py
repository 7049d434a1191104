# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each role's input checks as one table: the role's values in, its sentences out (filter role_input_errors).

A role's validate.yml reads its variables (``query('ansible.builtin.vars', *names)``) and hands them here in one
call; what each variable becomes decides its check, through the shared checks of value_checks.py and paths.py:

- ``ranges``: name to (lowest, highest) (highest None: no upper bound);
- ``names``: name to (kind, optional) for value_checks.name_errors (an optional one may be empty: the role's default);
- ``lists``: names that must be lists, ``unique`` ones without repeats; a list's names are checked only once it is
  one (a string would be read character by character);
- ``paths``: names checked by paths.errors, with ``optional``, ``dropins`` and ``read_only`` as it takes them;
- ``extra``: a function of the values for what a table cannot say, returning more sentences;
- ``also``: more of the role's own variables ``extra`` reads;
- ``given``: values the validate hands in beside the role's variables (the inventory's groups, the stack
  profile's choices, a fact another task settled), never read from the host's variables by name."""

from __future__ import annotations

import json
import re

from ansible_collections.llmhost.vllm.plugins.module_utils import bench, gateway, paths, ray_cluster, serving_plan, value_checks, wishes

# A value an environment file carries as one plain double-quoted value.
SAFE_ENV_VALUE = re.compile(r"[^\n\"'\\$`]*\Z")
# A duration as Prometheus reads it on its command line and in its configuration.
DURATION = re.compile(r"[1-9][0-9]*(ms|s|m|h|d|w|y)\Z")
# Set by the serving plan (per replica) or by the unit, or the secrets' own: vllm_service_env may not override them.
VLLM_OWNED_ENV = ["CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "VLLM_ARGS", "VLLM_CACHE_ROOT",
                  "HF_HOME", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "FLASHINFER_WORKSPACE_BASE",
                  "XDG_CACHE_HOME", "VLLM_API_KEY", "HF_TOKEN"]


def _vllm_env_owned(env):
    owned = [k for k in env if k in VLLM_OWNED_ENV]
    if not owned:
        return []
    return ["vllm_service_env sets %s, which the serving plan or the unit sets (GPU selection, NCCL without P2P, the "
            "argument list, the cache folders the sandbox lets it write, the secrets). Change them through the plan's "
            "variables (vllm_service_gpus, vllm_service_tensor_parallel_size, vllm_service_extra_args, "
            "vllm_service_cache_dir) or the secret ones (vllm_service_api_key, vllm_service_hf_token) instead. Owned "
            "names: %s." % (", ".join(owned), ", ".join(VLLM_OWNED_ENV))]


def _vllm_service_trial_errors(trial):
    """tune.yml's candidate: a name, the plan's wishes, and arguments a unit can carry."""
    if not isinstance(trial, dict) or not trial:
        return []
    args = trial.get("extra_args") or []
    if not trial.get("name") or not isinstance(trial.get("wishes") or {}, dict) or not isinstance(args, list):
        return ["vllm_service_trial must be a candidate of playbooks/tune.yml (name, wishes, extra_args); got %r" % trial]
    unsafe = [str(a) for a in args if not serving_plan.UNIT_ARG.match(str(a))]
    return ["vllm_service_trial (%s): arguments with spaces, quotes, $ or backslashes cannot be passed safely through "
            "the unit: %s" % (trial["name"], unsafe)] if unsafe else []


def _vllm_service_extra(v):
    out = []
    args = v["vllm_service_extra_args"]
    unsafe = [str(a) for a in args if not serving_plan.UNIT_ARG.match(str(a))] if isinstance(args, list) else []
    if unsafe:
        out.append("vllm_service_extra_args: arguments with spaces, quotes, $ or backslashes cannot be passed safely "
                   "through the unit: %s" % unsafe)
    gpus = v["vllm_service_gpus"]
    if gpus != "all":
        out += value_checks.list_errors({"vllm_service_gpus": gpus}, ints=["vllm_service_gpus"])
    out += _vllm_service_trial_errors(v.get("vllm_service_trial") or {})
    only = v["vllm_service_restart_only"]
    if isinstance(only, list) and not all(re.match(r"[0-9]+\Z", str(name)) for name in only):
        out.append("vllm_service_restart_only=%s must name replicas as the plan does (0, 1, ...)" % only)
    env = v["vllm_service_env"]
    if not isinstance(env, dict):
        return out + ["vllm_service_env must be a dict"]
    out += value_checks.name_errors({"vllm_service_env names": list(env)}, "env_name")
    out += value_checks.name_errors({"vllm_service_env": list(env)}, "not_loader") + _vllm_env_owned(env)
    bad = [k for k, val in env.items() if isinstance(val, str) and not SAFE_ENV_VALUE.match(val)]
    if bad:
        out.append("vllm_service_env: the value of %s holds a newline, a quote, a backslash, $ or a backquote, which an "
                   "environment file cannot carry as one plain value" % ", ".join(bad))
    return out + _vllm_service_secret_errors(v) + _vllm_service_open_errors(v)


def _vllm_service_secret_errors(v):
    """The secrets file quotes its values: a newline, quote, backslash, $ or backquote would change what systemd reads
    (or inject another variable). The values are never in the sentence."""
    bad = [n for n in ("vllm_service_api_key", "vllm_service_hf_token")
           if not isinstance(v[n], str) or not SAFE_ENV_VALUE.match(v[n])]
    if not bad:
        return []
    return ["%s holds a newline, a quote, a backslash, $ or a backquote (the value is not shown); choose one without "
            "them." % " and ".join(bad)]


def _vllm_service_open_errors(v):
    """No way onto the network without a key: a replica on an address other than loopback answers anyone."""
    host = v["vllm_service_host"]
    if value_checks.name_errors({"vllm_service_host": host}, "host") or value_checks.is_loopback(host):
        return []  # not a host at all: said by the names check
    if v["vllm_service_api_key"] or value_checks.is_on(v["vllm_service_allow_unauthenticated"]):
        return []
    return ["vllm_service_host=%s is not a loopback address (a name, even localhost, is not taken) and "
            "vllm_service_api_key is empty: anyone who reaches the host could use its GPUs. Set vllm_service_api_key "
            "(from Ansible Vault), keep the host on 127.0.0.1, or set vllm_service_allow_unauthenticated=true if that "
            "is really wanted." % v["vllm_service_host"]]


def _monitoring_extra(v):
    out = []
    bad = [n for n in ("monitoring_retention", "monitoring_scrape_interval")
           if not (isinstance(v[n], str) and DURATION.match(v[n]))]
    if bad:
        out.append("%s must be a Prometheus duration: a whole number and one unit of ms, s, m, h, d, w, y (such as 15s "
                   "or 30d)" % ", ".join(bad))
    disks = v["monitoring_alert_disk_paths"]
    if isinstance(disks, list):
        out += paths.errors({"monitoring_alert_disk_paths item %s" % d: d for d in disks})
    return out


def _fleet_group_errors(group, groups):
    """A fleet group (gateway_backends_group) the inventory has, of some hosts, and not all of them."""
    if not group:
        return []
    if group not in groups:
        return ["gateway_backends_group: %r is no group of the inventory (groups: %s)"
                % (group, ", ".join(sorted(g for g in groups if g not in ("all", "ungrouped"))))]
    if group in ("all", "ungrouped") or not groups[group]:
        return ["gateway_backends_group=%s: name an inventory group of the GPU hosts whose replicas go behind this "
                "gateway; not all or ungrouped, and not a group without hosts." % group]
    return []


def _gateway_extra(v):
    out = gateway.nginx_repo_errors(v["gateway_nginx_repo_url"], v["gateway_nginx_repo_key_url"])
    if bool(v["gateway_tls_certificate"]) != bool(v["gateway_tls_key"]):
        out.append("gateway_tls_certificate and gateway_tls_key go together: set both (TLS) or neither (plain HTTP)")
    out += _fleet_group_errors(v["gateway_backends_group"], v.get("groups") or {})
    # the sentences name a client, never its key
    upstream_key = v["gateway_upstream_api_key"] or v.get("vllm_service_api_key") or ""
    out += gateway.weight_errors(v["gateway_backend_weights"])
    return out + gateway.client_errors(v["gateway_clients"], upstream_key=str(upstream_key))


# A Hugging Face token is written alone into a 0600 file the hub client reads back: one word of printable ASCII
# other than a backslash. A hub download is pinned: a repo id and a 40-hex commit, never a branch that moves.
_HF_TOKEN = re.compile(r"[!-\[\]-~]+\Z")
_HF_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_COMMIT = re.compile(r"[0-9a-f]{40}\Z")


def _model_extra(v):
    out = []
    token = v["model_hf_token"]
    if not isinstance(token, str) or (token and not _HF_TOKEN.match(token)):
        out.append("model_hf_token holds whitespace, a newline, a backslash or a character beyond printable ASCII (the "
                   "value is not shown); a Hugging Face token is one word such as hf_....")
    repo, revision = v["model_repo"] or v.get("model_profile_repo") or "", v["model_revision"]
    if v["model_source"] == "hub" and not (_HF_REPO.match(str(repo)) and _COMMIT.match(str(revision))):
        out.append("model_repo=%s / model_revision=%s: a hub download needs a repo id like Qwen/Qwen2.5-3B-Instruct and a "
                   "pinned commit (40 hex digits; see https://huggingface.co/%s/commits/main), never a branch that "
                   "moves. Or set model_source=local and model_local_path." % (repo, revision, repo))
    elif v["model_source"] == "hub" and not v["model_repo"]:
        # a commit is one repository's: left to the profile, the repository would change under it with llmhost_stack
        out.append("model_revision=%s is pinned without model_repo: a commit belongs to one repository, and with "
                   "model_repo empty the repository is the stack profile's (now %s; another profile names another). "
                   "Pin the pair: model_repo=%s beside it, if the commit is one of that repository." % (revision, repo, repo))
    if v["model_source"] == "local" and not str(v["model_local_path"]).startswith("/"):
        out.append("model_local_path=%s: model_source=local needs the absolute path of a model folder on the host."
                   % v["model_local_path"])
    return out


# The group sizes vLLM's AWQ kernels take (-1: per channel).
AWQ_GROUP_SIZES = (32, 64, 128, -1)


def _quantize_extra(v):
    size = v["quantize_group_size"]
    if not value_checks.is_on(v.get("quantize_wanted")) or (isinstance(size, int) and size in AWQ_GROUP_SIZES):
        return []
    return ["quantize_group_size=%s: vLLM's AWQ kernels take group sizes 32, 64, 128 or -1 (per channel); %s is not one "
            "of them%s." % (size, size, " (256 is larger than the kernels tile)" if size == 256 else "")]


# A clock setting as gpu_clocks takes it: "min,max" or one value, in MHz above 0 (or "none").
_CLOCKS = re.compile(r"([1-9][0-9]*)(,[1-9][0-9]*)?\Z")


def _clocks_ok(text):
    return text == "none" or bool(_CLOCKS.match(text)) and sorted(int(x) for x in text.split(",")) == [
        int(x) for x in text.split(",")]


def _gpu_tuning_extra(v):
    graphics, memory = str(v.get("gpu_tuning_graphics") or "none"), str(v.get("gpu_tuning_memory") or "none")
    if _clocks_ok(graphics) and _clocks_ok(memory):
        return []
    return ["gpu_tuning_graphics_clocks=%s / gpu_tuning_memory_clocks=%s / gpu_tuning_power_limit_w=%s: clocks are "
            "\"min,max\" (min not above max) or one value, in MHz above 0 (or \"none\"), the power limit a number of "
            "watts (0 leaves it)." % (graphics, memory, v["gpu_tuning_power_limit_w"])]


def _system_tuning_extra(v):
    """The shapes argument_specs admits too loosely here: the sysctl settings are mappings, numa_balancing auto or
    a boolean, thp one of the kernel's words or empty (leave it)."""
    numa, thp = v["system_tuning_numa_balancing"], v["system_tuning_thp"]
    sysctl = ("system_tuning_sysctl_defaults", "system_tuning_sysctl", "system_tuning_sysctl_overrides")
    if all(isinstance(v[n], dict) for n in sysctl) and (numa == "auto" or isinstance(numa, bool)) and \
            thp in ("", "always", "madvise", "never"):
        return []
    return ["system_tuning_sysctl_defaults, system_tuning_sysctl and system_tuning_sysctl_overrides must be dicts "
            "(key: value), system_tuning_numa_balancing one of auto, true, false, system_tuning_thp one of always, "
            "madvise, never or \"\" (leave); got numa_balancing=%s, thp=%s." % (numa, thp)]


def _ray_cluster_extra(v):
    ports = v["ray_cluster_ports"]
    errors = ray_cluster.port_errors(ports if isinstance(ports, dict) else {}, v["ray_cluster_worker_ports"])
    address = v["ray_cluster_node_address"]
    if address not in ("", None) and ray_cluster.address_problem(address):
        errors.append("ray_cluster_node_address: %s" % ray_cluster.address_problem(address))
    gpus = str(v["ray_cluster_num_gpus"] if v["ray_cluster_num_gpus"] is not None else "")
    if gpus and not (gpus.isdigit() and int(gpus) <= 64):
        errors.append("ray_cluster_num_gpus=%r: a whole number from 0 to 64, or empty (every GPU gpu_facts reads)"
                      % (v["ray_cluster_num_gpus"],))
    return errors


def _benchmark_extra(v):
    out = []
    if v["benchmark_client"] not in ("", "vllm", "script"):
        out.append("benchmark_client: %s is none of vllm, script (or empty: the stack profile's)" % v["benchmark_client"])
    return out + bench.phase_errors(v["benchmark_phases"], "benchmark_phases")


def _vllm_install_choice_errors(v):
    """The method settled (the role's, else the profile's) is one the role has; an arch list given is
    TORCH_CUDA_ARCH_LIST's form (``arch_list_pattern``, the role's vars), as it lands in the build's environment."""
    out = []
    if v["method"] not in v["methods"]:
        out.append("vllm_install_method=%s; choose one of %s." % (v["method"], ", ".join(v["methods"])))
    arch = v["vllm_install_arch_list"]
    if arch and not (isinstance(arch, str) and re.match(v["arch_list_pattern"], arch)):
        out.append("vllm_install_arch_list=%s: give the GPUs' compute capabilities as TORCH_CUDA_ARCH_LIST, "
                   ";-separated (like 8.9 for an RTX 4090, 9.0 for H100/H200, 8.9+PTX), or leave it empty for the "
                   "GPUs found on the host." % json.dumps(arch))
    return out


def _vllm_install_extra(v):
    out = _vllm_install_choice_errors(v)
    mirrors = v["vllm_install_git_mirrors"]
    spec = {"vllm_install_git_mirrors": list(mirrors) + list(mirrors.values())} if isinstance(mirrors, dict) else {}
    out += value_checks.name_errors(spec, "source")
    poll, timeout = v["vllm_install_build_poll"], v["vllm_install_build_timeout"]
    if not (isinstance(poll, int) and isinstance(timeout, int) and 1 <= poll <= timeout):
        out.append("vllm_install_build_poll=%s, vllm_install_build_timeout=%s: the poll must be at least 1 second and "
                   "the timeout at least one poll." % (poll, timeout))
    # an offline CUTLASS becomes a repository tagged as the profile's build clones it (vllm.build_clones)
    if v["vllm_install_cutlass_src"] and "cutlass" not in (v.get("profile_build_clones") or {}):
        out.append("vllm_install_cutlass_src=%s: stack profile %s names no CUTLASS clone for its source build "
                   "(vllm.build_clones), so the role cannot tag it; leave it empty and set vllm_install_git_mirrors "
                   "instead." % (v["vllm_install_cutlass_src"], v.get("profile_name")))
    return out


def _stack_choice_errors(v):
    """A profile that exists, and overrides that are a dict (their keys are checked against the profile once read)."""
    out = []
    if v["llmhost_stack"] not in v["known_profiles"]:
        out.append("llmhost_stack=%s is not a stack profile; choose one of %s."
                   % (v["llmhost_stack"], ", ".join(v["known_profiles"])))
    if not isinstance(v["llmhost_stack_overrides"], dict):
        out.append("llmhost_stack_overrides must be a dict of profile keys to override, got %s."
                   % type(v["llmhost_stack_overrides"]).__name__)
    return out


def _stack_key_errors(v):
    """apt trusts the repository because of its key: a key fetched over plain http:// is whatever the network hands
    out. The repository itself may be plain http (apt checks its signature) when the key comes over https://, from a
    file, or inline."""
    key_url, repo = v["llmhost_stack_nvidia_repo_key_url"], v["llmhost_stack_nvidia_repo_url"]
    if v["llmhost_stack_nvidia_repo_key"] or not isinstance(key_url, str) or not isinstance(repo, str):
        return []
    source = key_url or (repo.rstrip("/") + "/" + v["key_name"] if repo else "")
    if not re.match(r"(?i)http://", source):
        return []
    named = ("llmhost_stack_nvidia_repo_key_url" if key_url
             else "llmhost_stack_nvidia_repo_url, whose <url>/%s is the key" % v["key_name"])
    return ["The NVIDIA repository's signing key would be fetched over plain http:// from %s (%s), and apt would trust "
            "whatever the network serves there. Set llmhost_stack_nvidia_repo_key_url to an https:// or file:// URL, "
            "or llmhost_stack_nvidia_repo_key to the armored key itself." % (source, named)]


def _stack_extra(v):
    """An apt source is a URL: an absolute path, which pip and git would take, is not one for apt."""
    out = _stack_choice_errors(v)
    out += ["%s is not an http://, https:// or file:// URL; an apt source needs one" % n
            for n in ("llmhost_stack_nvidia_repo_url", "llmhost_stack_nvidia_repo_key_url")
            if isinstance(v[n], str) and v[n] and not re.match(r"(?i)(https?|file)://", v[n])]
    return out + _stack_key_errors(v)


def override_errors(overrides, profile):
    """An override replaces a key of the profile: a dict where the profile has a dict (merged into it), a value of the
    same kind where it has a value. Anything else would be merged into nonsense and crash later."""
    out = ["%s is not a key of the profile" % k for k in overrides if k not in profile]
    out += ["%s must be a dict of the keys to change, as in the profile" % k for k, val in overrides.items()
            if isinstance(profile.get(k), dict) and not isinstance(val, dict)]
    return out


APT_DROPINS = ["/etc/apt/preferences.d"]
APT_CONF = ["/etc/apt/apt.conf.d"]

TABLES = {
    "vllm_service": {
        # the plan's wishes from their one home (module_utils/wishes.py), the role's own beside them
        "ranges": dict({wishes.PREFIX + k: (low, high) for k, (_kind, low, high) in wishes.WISH_RANGES.items()},
                       vllm_service_restart_settle=(0, 300), vllm_service_ready_timeout=(1, 86400)),
        "names": {"vllm_service_host": ("host", False), "vllm_service_advertise_address": ("host", True),
                  "vllm_service_served_model_name": ("arg", True), "vllm_service_user": ("user", True),
                  "vllm_service_after": ("unit", False), "vllm_service_unit_name": ("unit_prefix", False)},
        "lists": {"vllm_service_after": True, "vllm_service_extra_args": False, "vllm_service_restart_only": True},
        "paths": {"names": ["vllm_service_config_dir", "vllm_service_cache_dir", "vllm_service_model_path",
                            "vllm_service_venv"],
                  "optional": ["vllm_service_model_path", "vllm_service_venv"]},
        "extra": _vllm_service_extra,
        "also": ["vllm_service_gpus", "vllm_service_env", "vllm_service_api_key", "vllm_service_hf_token",
                 "vllm_service_allow_unauthenticated"],
    },
    "gateway": {
        "ranges": {"gateway_port": (1, 65535), "gateway_rate": (1, 100000), "gateway_burst": (0, 100000),
                   "gateway_max_body_kib": (1, None), "gateway_max_tokens": (0, 10000000),
                   "gateway_read_timeout": (1, 86400), "gateway_connect_timeout": (1, 600),
                   "gateway_fail_timeout": (1, 3600), "gateway_max_conns_per_replica": (0, 100000),
                   "gateway_retry_after": (1, 3600)},
        "names": {"gateway_listen_address": ("host", False), "gateway_packages": ("apt_name", False)},
        "paths": {"names": ["gateway_config_dir", "gateway_access_log", "gateway_tls_certificate", "gateway_tls_key"],
                  "optional": ["gateway_tls_certificate", "gateway_tls_key"]},
        "extra": _gateway_extra,
        "also": ["gateway_nginx_repo_url", "gateway_nginx_repo_key_url", "gateway_backends_group", "gateway_clients",
                 "gateway_upstream_api_key", "gateway_backend_weights"],
        # read by the role's validate beside its own: the inventory's groups, vllm_service's key ("" without it)
        "given": ["groups", "vllm_service_api_key"],
    },
    "model": {
        "ranges": {"model_min_free_gib": (0, None), "model_download_poll": (1, None)},
        "names": {"model_name": ("path_part", True), "model_hf_endpoint": ("source", True)},
        "paths": {"names": ["model_store", "model_hf_cache", "model_python"], "optional": ["model_python"]},
        "extra": _model_extra,
        "also": ["model_hf_token", "model_repo", "model_revision", "model_source", "model_local_path"],
        # read by the role's validate beside its own: the stack profile's model repo (model_repo's default)
        "given": ["model_profile_repo"],
    },
    "quantize": {
        "ranges": {"quantize_samples": (1, None), "quantize_seq_len": (1, None), "quantize_min_free_gib": (0, None),
                   "quantize_timeout": (1, None), "quantize_poll": (1, None)},
        "names": {"quantize_index_url": ("source", True), "quantize_find_links": ("source", False)},
        "lists": {"quantize_find_links": False},
        "paths": {"names": ["quantize_home", "quantize_output", "quantize_python"],
                  "optional": ["quantize_output", "quantize_python"]},
        "extra": _quantize_extra,
        "also": ["quantize_group_size"],
        # read by the role's validate beside its own: whether this host quantizes at all (state and profile)
        "given": ["quantize_wanted"],
    },
    "gpu_tuning": {
        "ranges": {"gpu_tuning_power_limit_w": (0, 2000)},
        "names": {"gpu_tuning_gpus": ("path_part", False), "gpu_tuning_unit": ("unit", False)},
        "lists": {"gpu_tuning_gpus": True},
        "paths": {"names": ["gpu_tuning_state_file"]},
        "extra": _gpu_tuning_extra,
        # read by the role's validate beside its own: the clocks wanted, the profile's where the variable is empty
        "given": ["gpu_tuning_graphics", "gpu_tuning_memory"],
    },
    "monitoring": {
        "ranges": {"monitoring_prometheus_port": (1024, 65535), "monitoring_node_exporter_port": (1024, 65535),
                   "monitoring_gpu_exporter_port": (1024, 65535), "monitoring_alertmanager_port": (1024, 65535),
                   "monitoring_alert_ttft_p95_seconds": (0.001, 3600), "monitoring_alert_kv_cache_usage": (0.01, 1),
                   "monitoring_alert_waiting_minutes": (1, 1440),
                   "monitoring_alert_gpu_temperature_celsius": (30, 120),
                   "monitoring_alert_disk_free_ratio": (0.01, 0.9)},
        "names": {"monitoring_listen_address": ("host", False), "monitoring_gpu_exporter_user": ("user", False),
                  "monitoring_gpu_exporter_find_links": ("source", False),
                  "monitoring_gpu_exporter_index_url": ("source", True)},
        "lists": {"monitoring_gpu_exporter_find_links": False, "monitoring_alert_disk_paths": True},
        "paths": {"names": ["monitoring_config_dir", "monitoring_gpu_exporter_home", "monitoring_gpu_exporter_python",
                            "monitoring_grafana_dashboards_dir"],
                  "optional": ["monitoring_gpu_exporter_python", "monitoring_grafana_dashboards_dir"]},
        "extra": _monitoring_extra,
        "also": ["monitoring_retention", "monitoring_scrape_interval"],
    },
    "nvidia_driver": {
        "ranges": {"nvidia_driver_reboot_timeout": (1, None)},
        "names": {"nvidia_driver_packages": ("apt_name", False), "nvidia_driver_pin_packages": ("apt_pattern", False),
                  "nvidia_driver_dkms_kernels": ("apt_version", False),
                  "nvidia_driver_version": ("apt_version", True),
                  "nvidia_driver_package_version": ("apt_version", True)},
        "lists": {"nvidia_driver_packages": True, "nvidia_driver_pin_packages": True,
                  "nvidia_driver_dkms_kernels": True},
        "paths": {"names": ["nvidia_driver_pin_file", "nvidia_driver_modprobe_file", "nvidia_driver_modules_load_file",
                            "nvidia_driver_unattended_blacklist_file"],
                  "dropins": {"nvidia_driver_pin_file": APT_DROPINS, "nvidia_driver_modprobe_file": ["/etc/modprobe.d"],
                              "nvidia_driver_modules_load_file": ["/etc/modules-load.d"],
                              "nvidia_driver_unattended_blacklist_file": APT_CONF}},
    },
    "kernel": {
        "ranges": {"kernel_reboot_timeout": (1, None)},
        "names": {"kernel_packages": ("apt_name", False), "kernel_release": ("apt_version", True)},
        "lists": {"kernel_packages": True},
        "paths": {"names": ["kernel_grub_dropin", "kernel_unattended_blacklist_file"],
                  "dropins": {"kernel_grub_dropin": ["/etc/default/grub.d"],
                              "kernel_unattended_blacklist_file": APT_CONF}},
    },
    "cuda_toolkit": {
        "names": {"cuda_toolkit_package": ("apt_name", True), "cuda_toolkit_package_version": ("apt_version", True)},
        "paths": {"names": ["cuda_toolkit_home", "cuda_toolkit_pin_file", "cuda_toolkit_unattended_blacklist_file",
                            "cuda_toolkit_profile_d_file"],
                  "optional": ["cuda_toolkit_home"],
                  "dropins": {"cuda_toolkit_pin_file": APT_DROPINS, "cuda_toolkit_unattended_blacklist_file": APT_CONF,
                              "cuda_toolkit_profile_d_file": ["/etc/profile.d"]}},
    },
    "system_tuning": {
        "ranges": {"system_tuning_reboot_timeout": (1, None)},
        "names": {"system_tuning_cpu_governor": ("path_part", True),
                  "system_tuning_platform_profile": ("path_part", True),
                  "system_tuning_cpu_policy_unit": ("unit", False)},
        "lists": {"system_tuning_kernel_cmdline": True, "system_tuning_kernel_cmdline_extra_known": False},
        "paths": {"names": ["system_tuning_sysctl_file", "system_tuning_grub_dropin"],
                  "dropins": {"system_tuning_sysctl_file": ["/etc/sysctl.d"],
                              "system_tuning_grub_dropin": ["/etc/default/grub.d"]}},
        "extra": _system_tuning_extra,
        "also": ["system_tuning_sysctl_defaults", "system_tuning_sysctl", "system_tuning_sysctl_overrides",
                 "system_tuning_numa_balancing", "system_tuning_thp"],
    },
    "vllm_install": {
        "ranges": {"vllm_install_build_min_free_gib": (0, None), "vllm_install_max_jobs": (0, None)},
        "names": {"vllm_install_user": ("user", False), "vllm_install_group": ("user", False),
                  "vllm_install_git_tag": ("path_part", True), "vllm_install_git_url": ("source", False),
                  "vllm_install_index_url": ("source", True), "vllm_install_extra_index_urls": ("source", False),
                  "vllm_install_find_links": ("source", False)},
        "paths": {"names": ["vllm_install_home", "vllm_install_build_dir", "vllm_install_wheel_cache",
                            "vllm_install_python", "vllm_install_cuda_home", "vllm_install_vllm_src",
                            "vllm_install_flash_attn_src", "vllm_install_flash_attn_cutlass_src",
                            "vllm_install_cutlass_src"],
                  "read_only": ["vllm_install_cuda_home", "vllm_install_vllm_src", "vllm_install_flash_attn_src",
                                "vllm_install_flash_attn_cutlass_src", "vllm_install_cutlass_src"]},
        "extra": _vllm_install_extra,
        "also": ["vllm_install_git_mirrors", "vllm_install_build_poll", "vllm_install_build_timeout",
                 "vllm_install_arch_list"],
        # read by the role's validate beside its own: the stack profile's name and its build's clones, the method
        # settled and the role's methods, the arch list's form
        "given": ["profile_name", "profile_build_clones", "method", "methods", "arch_list_pattern"],
    },
    "ray_cluster": {
        "ranges": {"ray_cluster_ready_timeout": (1, 86400)},
        "names": {"ray_cluster_unit": ("unit", False), "ray_cluster_firewall_unit": ("unit", False),
                  "ray_cluster_interface": ("path_part", True), "ray_cluster_group": ("path_part", True),
                  "ray_cluster_head": ("path_part", True)},
        "paths": {"names": ["ray_cluster_dir", "ray_cluster_firewall_file"]},
        "extra": _ray_cluster_extra,
        "also": ["ray_cluster_node_address", "ray_cluster_ports", "ray_cluster_worker_ports", "ray_cluster_num_gpus"],
    },
    "benchmark": {
        "ranges": {"benchmark_phase_timeout": (1, None), "benchmark_poll": (1, 3600)},
        "extra": _benchmark_extra,
        "also": ["benchmark_client", "benchmark_phases"],
    },
    "llmhost_stack": {
        "names": {"llmhost_stack_nvidia_repo_url": ("source", True),
                  "llmhost_stack_nvidia_repo_key_url": ("source", True)},
        "paths": {"names": ["llmhost_stack_nvidia_repo_sources_file", "llmhost_stack_nvidia_repo_keyring"],
                  "dropins": {"llmhost_stack_nvidia_repo_sources_file": ["/etc/apt/sources.list.d"],
                              "llmhost_stack_nvidia_repo_keyring": ["/etc/apt/keyrings", "/usr/share/keyrings"]}},
        "extra": _stack_extra,
        "also": ["llmhost_stack", "llmhost_stack_overrides", "llmhost_stack_nvidia_repo_key"],
        "given": ["known_profiles", "key_name"],
    },
    "doctor": {
        "ranges": {"doctor_bandwidth_size_mib": (1, 4096), "doctor_bandwidth_seconds": (10, 3600),
                   "doctor_burnin_minutes": (0.1, 1440), "doctor_burnin_gpu_memory_fraction": (0.05, 0.95),
                   "doctor_burnin_host_workers": (1, 256), "doctor_burnin_host_memory_percent": (1, 90),
                   "doctor_min_free_gib": (0, None)},
    },
}
# vllm_install's read-only paths may be empty (the build then clones, or finds the toolkit itself).
TABLES["vllm_install"]["paths"]["optional"] = TABLES["vllm_install"]["paths"]["read_only"] + ["vllm_install_python"]


def names(role):
    """Every variable the role's table reads, in a stable order."""
    table = TABLES[role]
    found = list(table.get("ranges", {})) + list(table.get("names", {})) + list(table.get("lists", {}))
    found += table.get("paths", {}).get("names", []) + table.get("also", [])
    return sorted(set(found))


def _name_checks(table, v):
    out = []
    for name, (kind, optional) in sorted(table.get("names", {}).items()):
        value = v[name]
        if name in table.get("lists", {}) and not isinstance(value, list):
            continue  # said by the list check
        if optional and not isinstance(value, list):
            value = [value] if value not in ("", None) else []
        out += value_checks.name_errors({name: value}, kind)
    return out


def errors(role, v):
    """Sentences naming each of the role's bad variables; ``v`` maps each of names(role) to its value."""
    table = TABLES[role]
    out = value_checks.range_errors({n: [v[n], low, high] for n, (low, high) in table.get("ranges", {}).items()})
    lists = table.get("lists", {})
    out += value_checks.list_errors({n: v[n] for n in lists}, unique=[n for n, unique in lists.items() if unique])
    out += _name_checks(table, v)
    spec = table.get("paths")
    if spec:
        out += paths.errors({n: v[n] for n in spec["names"]}, spec.get("optional", ()), spec.get("dropins", {}),
                            spec.get("read_only", ()))
    if table.get("extra"):
        out += table["extra"](v)
    return out
