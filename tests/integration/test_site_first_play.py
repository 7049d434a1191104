"""Bad inputs of any role stop the real site playbook in its first play, before anything on the host changes,
naming the variable; no secret's value is shown. All cases in one run (tests/integration/playbook_batch.py): each case
is an inventory host of its own, or shares one with the cases of its group (a third element: cases the same check of
the first play refuses together, each named in its message), since a host costs the first play's tasks up to its
refusal."""
import os
import sys
from pathlib import Path

import pytest
from playbook_batch import ROOT, merged_vars, run_batch, said_in

# A hub model pinned as a pair: the repository and its commit (a commit alone is refused)
PINNED = {"model_repo": "Qwen/Qwen3-4B-Instruct-2507", "model_revision": "0" * 40}
# (the host's values, words its refusal must say[, group]): a group's cases stop at the same task (typos and types;
# classes; the folders on the host; one role's check) and are refused there together, so they share a host.
FIRST_PLAY = [
    ({"vllm_service_extra_args": ["--definitely-not-a-vllm-flag"], **PINNED},
     "vllm_service_extra_args: --definitely-not-a-vllm-flag is not an option of vllm serve in vLLM 0.33.0", "options"),
    ({"vllm_service_extra_args": ["--max-model-len=4096"], **PINNED},
     "--max-model-len is set by the serving plan; use vllm_service_max_model_len", "options"),
    ({"vllm_service_extra_args": ["--max-num-batched-tokens", "4096", "--max-num-batched-tokens=8192"], **PINNED},
     "vllm_service_extra_args: --max-num-batched-tokens is given more than once (vLLM keeps only the last", "options"),
    ({"vllm_service_cache_dir": "/etc/systemd/system/vllm@.service.d/cache", **PINNED},
     "vllm_service_cache_dir='/etc/systemd/system/vllm@.service.d/cache' lies inside systemd's unit folder", "classes"),
    ({"quantize_home": "/srv/models/qwen.previous/quantize", **PINNED},
     "quantize_home='/srv/models/qwen.previous/quantize' lies inside qwen.previous", "classes"),
    ({"gateway_max_body_kib": 1048576, **PINNED},
     "gateway_max_body_kib=1048576 lets a few clients take the host's memory", "classes"),
    ({"vllm_service_env": {"NCCL_P2P_DISABLE": "0"}, **PINNED},
     "vllm_service_env sets NCCL_P2P_DISABLE", "service"),
    ({}, "model_repo=Qwen/Qwen3-4B-Instruct-2507 / model_revision=: a hub download needs"),
    # a commit pinned without its repository: a profile switch would fetch it from another model's repository
    ({"model_revision": "0" * 40}, "model_revision=%s is pinned without model_repo" % ("0" * 40)),
    ({"model_source": "local", "model_local_path": "models/tiny"}, "model_local_path=models/tiny"),
    ({"llmhost_stack": "legacy", **PINNED}, "llmhost_stack", "types"),
    # every other role's types and choices (its validate entry point's argument spec) and pure checks
    ({"kernel_reboot_ok": "perhaps", **PINNED}, "kernel_reboot_ok", "types"),
    ({"nvidia_driver_replace": "maybe", **PINNED}, "nvidia_driver_replace", "types"),
    ({"cuda_toolkit_state": "maybe", **PINNED}, "cuda_toolkit_state must be one of: auto, present, skip", "types"),
    ({"system_tuning_thp": "sometimes", **PINNED}, "system_tuning_thp", "types"),
    ({"gpu_tuning_graphics_clocks": "fast", **PINNED}, "gpu_tuning_graphics_clocks=fast"),
    ({"vllm_install_method": "conda", **PINNED}, "vllm_install_method=conda; choose one of wheel, source", "install"),
    ({"vllm_install_git_mirrors": {"https://github.com/nvidia/cutlass.git": "file:///srv/git/cut lass"},
      **PINNED}, "vllm_install_git_mirrors: 'file:///srv/git/cut lass' is not a URL", "install"),
    ({"vllm_install_git_mirrors": {"https://github.com/nvidia/cutlass.git": "https://git.lan/$(id)"},
      **PINNED}, "vllm_install_git_mirrors: 'https://git.lan/$(id)' is not a URL"),
    # a source written into the 0600 pip.conf: a newline would add a setting of its own
    ({"vllm_install_index_url": "https://pypi.lan/simple\ntrusted-host = evil", **PINNED},
     "vllm_install_index_url: 'https://pypi.lan/simple\\ntrusted-host = evil' is not a URL", "install"),
    ({"quantize_find_links": ["wheels"], **PINNED},
     "quantize_find_links=(not shown) is not an https:// or http:// URL, a file:// URL or an absolute path", "classes"),
    ({"llmhost_stack_nvidia_repo_url": "https://mirror.lan/cuda/\nTrusted: yes", **PINNED},
     "llmhost_stack_nvidia_repo_url: 'https://mirror.lan/cuda/\\nTrusted: yes' is not a URL", "stack"),
    ({"vllm_install_build_poll": 0, **PINNED}, "vllm_install_build_poll=0", "install"),
    # offline sources are only read: a system folder would do, a relative or odd path would not
    ({"vllm_install_flash_attn_src": "sources/flash-attention", **PINNED},
     "vllm_install_flash_attn_src='sources/flash-attention' is not an absolute path", "install"),
    ({"vllm_install_cuda_home": "/usr/local/cuda 12.1", **PINNED},
     "vllm_install_cuda_home='/usr/local/cuda 12.1' has characters other than", "install"),
    # the current profile's build names no CUTLASS clone for the role to tag
    ({"vllm_install_cutlass_src": "/srv/src/cutlass-v3.5.1.tar.gz", **PINNED},
     "vllm_install_cutlass_src=/srv/src/cutlass-v3.5.1.tar.gz: stack profile current names no CUTLASS clone",
     "install"),
    # a valid token passes model's check, so the refusal is quantize's, which comes after it
    ({"quantize_state": "present", "quantize_group_size": 256, **PINNED,
      "model_hf_token": "hf_ValidTokenOfTheTest0123456789"},
     "quantize_group_size=256: vLLM's AWQ kernels take group sizes 32, 64, 128 or -1"),
    # values checked for what they become, one case per format they land in: a root shell script, an apt pin,
    # the unit's argument list, a user in the unit, apt's own source list, a clock range
    ({"system_tuning_cpu_governor": 'performance"; id #', **PINNED},
     "system_tuning_cpu_governor: 'performance\"; id #' must be one plain name"),
    ({"nvidia_driver_version": "580.159.04\n", **PINNED},
     "nvidia_driver_version: '580.159.04\\n' is not a Debian version"),
    ({"vllm_service_host": "127.0.0.1\nLD_PRELOAD=/tmp/x.so", **PINNED},
     "vllm_service_host: '127.0.0.1\\nLD_PRELOAD=/tmp/x.so' is not a host name or an IP address", "service"),
    ({"vllm_service_served_model_name": "qwen\nLD_PRELOAD=/tmp/x.so", **PINNED},
     "vllm_service_served_model_name: 'qwen\\nLD_PRELOAD=/tmp/x.so' cannot be one argument of the unit", "service"),
    ({"vllm_install_user": "vllm\nroot", **PINNED},
     "vllm_install_user: 'vllm\\nroot' is not a user or group name", "install"),
    ({"llmhost_stack_nvidia_repo_sources_file": "/etc/apt/sources.list", **PINNED},
     "llmhost_stack_nvidia_repo_sources_file='/etc/apt/sources.list' must be a file directly in /etc/apt/sources.list.d",
     "stack"),
    ({"gpu_tuning_graphics_clocks": "2100,1000", **PINNED},
     "gpu_tuning_graphics_clocks=2100,1000 / gpu_tuning_memory_clocks=none / gpu_tuning_power_limit_w=0: clocks are "
     "\"min,max\" (min not above max)"),
    # a token written alone into its 0600 file: a trailing backslash or a newline is refused, its value never shown
    ({"model_hf_token": "hf_SecretValueOfTheTest\\", **PINNED},
     "model_hf_token holds whitespace, a newline, a backslash"),
    # TORCH_CUDA_ARCH_LIST in the build's environment: refused in the first play, not only in the build's preflight
    ({"vllm_install_arch_list": "8.9;sm_90", **PINNED},
     "vllm_install_arch_list=\"8.9;sm_90\": give the GPUs' compute capabilities as TORCH_CUDA_ARCH_LIST", "install"),
    # monitoring: a choice, a duration that lands on Prometheus's command line, a watched path of the disk alert
    ({"monitoring_prometheus": "remote", **PINNED},
     "monitoring_prometheus must be one of: managed, external", "types"),
    ({"monitoring_retention": "15 days", **PINNED},
     "monitoring_retention must be a Prometheus duration", "monitoring"),
    ({"monitoring_alert_disk_paths": ["/srv/models", "data"], **PINNED},
     "monitoring_alert_disk_paths item data='data' is not an absolute path", "monitoring"),
    # ways around the plan, code from outside vLLM, and loader variables in the replicas' environment
    ({"vllm_service_extra_args": ["--uds", "/run/vllm.sock"], **PINNED},
     "vllm_service_extra_args: --uds is set by the serving plan; use vllm_service_host and vllm_service_base_port",
     "options"),
    ({"vllm_service_extra_args": ["--trust-remote-code"], **PINNED},
     "vllm_service_extra_args: --trust-remote-code loads and runs code from outside vLLM", "options"),
    ({"vllm_service_env": {"LD_PRELOAD": "/tmp/x.so"}, **PINNED},
     "vllm_service_env: 'LD_PRELOAD' makes the process load code of its choosing", "service"),
    ({"vllm_service_env": {"PYTHONWARNINGS": "ignore::evil.Warning"}, **PINNED},
     "vllm_service_env: 'PYTHONWARNINGS' makes the process load code of its choosing", "service"),
    ({"vllm_install_index_url": "ftp://mirror.lan/simple", **PINNED},
     "vllm_install_index_url=(not shown) is not an https:// or http:// URL, a file:// URL or an absolute path",
     "classes"),
    # "loopback" is an address, not a name
    ({"vllm_service_host": "localhost", **PINNED},
     "vllm_service_host=localhost is not a loopback address (a name, even localhost, is not taken)"),
    # a client's key is not vLLM's own; a fleet of every host
    ({"gateway_clients": [{"name": "alice", "key": "vllm-key-0123456789abcdef"}],
      "vllm_service_api_key": "vllm-key-0123456789abcdef", **PINNED},
     "gateway_clients client alice: its key is the one the gateway presents to vLLM", "gateway"),
    ({"gateway_backends_group": "all", **PINNED},
     "gateway_backends_group=all: name an inventory group of the GPU hosts", "gateway"),
    # one host, one port each: the gateway on every address against Prometheus on loopback
    ({"gateway_clients": [{"name": "alice", "key": "alice-secret-key-0123456789"}], "gateway_port": 9090,
      "vllm_service_api_key": "vllm-key-0123456789abcdef", **PINNED},
     "gateway_port=9090 and monitoring_prometheus_port=9090 would listen on the same port of this host"),
    # monitoring's alerting: a webhook's URL is a secret (often a token in it), named and never shown
    ({"monitoring_alert_webhook_url": "hooks.example.org/T0KEN-of-the-test", **PINNED},
     "monitoring_alert_webhook_url=(not shown) is not an https:// or http:// URL: another scheme", "classes"),
    ({"monitoring_alertmanager": "external", **PINNED},
     "monitoring_alertmanager=external needs monitoring_alertmanager_urls"),
    # gateway: a port, a client without a key of its own (the keys are never shown), a vLLM key nginx cannot carry
    ({"gateway_port": 70000, **PINNED}, "gateway_port=70000 must be a number from 1 to 65535", "gateway"),
    ({"gateway_clients": [{"name": "alice", "key": "alice-secret-key-0123456789"},
                          {"name": "bob", "key": "alice-secret-key-0123456789"}], **PINNED},
     "gateway_clients: two clients share a key (the keys are not shown)", "gateway-again"),
    ({"gateway_clients": [{"name": "carol", "key": "carol-brief-k3y"}], **PINNED},
     "gateway_clients client carol: key must be 20 to 256 letters"),
    ({"vllm_service_api_key": "vllm-key; proxy_pass http://evil", **PINNED},
     "vllm_service_api_key=(not shown) must be 20 to 256 letters, digits or '. _ ~ + / = -'", "classes"),
    # a fleet upstream from a group the inventory does not have; an advertised address that is not one
    ({"gateway_backends_group": "gpu_boxes", **PINNED},
     "gateway_backends_group: 'gpu_boxes' is no group of the inventory (groups: vllm_hosts)", "gateway-again"),
    ({"vllm_service_advertise_address": "10.0.0.2 evil", **PINNED},
     "vllm_service_advertise_address: '10.0.0.2 evil'", "service"),
    # typos Ansible itself ignores: a variable with a role's prefix that no role knows, named with the right one
    ({"vllm_service_max_model_length": 8192, **PINNED},
     "vllm_service_max_model_length is not a variable of any role of llmhost.vllm (did you mean "
     "vllm_service_max_model_len?)", "types"),
    ({"gateway_client": [{"name": "alice", "key": "alice-secret-key-0123456789"}], **PINNED},
     "gateway_client is not a variable of any role of llmhost.vllm (did you mean gateway_clients?)", "types"),
    # a wrong type or choice: one line with what it got and what it needs, not Ansible's dump of the whole spec
    ({"vllm_install_build_poll": "abc", **PINNED},
     "vllm_install_build_poll: got 'abc' (a string); needs a whole number", "types"),
    ({"gateway_clients": "alice", **PINNED},
     "gateway_clients: got 'alice' (a string); needs a list of mappings", "types"),
    # one reading of each value: what the argument spec takes but a role would read otherwise
    ({"system_tuning_reboot_ok": "True ", **PINNED},
     "system_tuning_reboot_ok: got 'True ' (a string); needs true or false (a real boolean, or exactly one of",
     "types"),
    ({"gateway_port": 8080.0, **PINNED},
     "gateway_port: got 8080.0 (a number); needs a whole number (digits only: no spaces, no decimal point)", "types"),
    ({"monitoring_alert_kv_cache_usage": "nan", **PINNED},
     "monitoring_alert_kv_cache_usage: got 'nan' (a string); needs a finite number (not NaN, not infinity)", "types"),
    # a name of the user's own under a role's prefix passes with the opt-in, a real boolean; the next check still runs
    # inputs judged by their class, whatever role reads them (module_utils/input_classes.py): a unit name that could
    # replace the system's, credentials in a URL that others read, an advertised loopback, a working folder's name
    ({"gpu_tuning_unit": "ssh.service", **PINNED},
     "gpu_tuning_unit='ssh.service' does not start with the collection's prefix (llmhost- or vllm)", "classes"),
    ({"system_tuning_cpu_policy_unit": "cpufrequtils.service", **PINNED},
     "system_tuning_cpu_policy_unit='cpufrequtils.service' does not start with the collection's prefix", "classes"),
    ({"vllm_service_unit_name": "getty", **PINNED},
     "vllm_service_unit_name='getty' does not start with the collection's prefix", "classes"),
    ({"llmhost_stack_nvidia_repo_url": "https://bob:hunter2@mirror.lan/cuda/", **PINNED},
     "llmhost_stack_nvidia_repo_url=(not shown) holds credentials", "classes"),
    ({"model_hf_endpoint": "https://hunter2@hf.lan", **PINNED},
     "model_hf_endpoint=(not shown) holds credentials", "classes"),
    ({"gateway_nginx_repo_url": "https://bob:hunter2@nginx.lan/debian", **PINNED},
     "gateway_nginx_repo_url=(not shown) holds credentials", "classes"),
    ({"vllm_install_git_mirrors": {"https://github.com/nvidia/cutlass.git": "https://bob:hunter2@git.lan/c.git"},
      **PINNED}, "vllm_install_git_mirrors=(not shown) holds credentials", "classes"),
    ({"monitoring_alertmanager_urls": ["https://bob:hunter2@am.lan"], **PINNED},
     "monitoring_alertmanager_urls=(not shown) holds credentials", "classes"),
    ({"benchmark_url": "https://bob:hunter2@gw.lan", **PINNED},
     "benchmark_url=(not shown) holds credentials", "classes"),
    ({"vllm_service_advertise_address": "127.0.0.1", **PINNED},
     "vllm_service_advertise_address='127.0.0.1' is what other hosts would dial, and it names this host's loopback",
     "classes"),
    ({"model_name": "qwen3.partial", **PINNED},
     "model_name='qwen3.partial' ends as the collection's own working folders do", "classes"),
    ({"vllm_service_cache_dir": "/var/cache/vllm.previous", **PINNED},
     "vllm_service_cache_dir='/var/cache/vllm.previous' ends as the collection's own working folders do",
     "classes-again"),
    ({"monitoring_config_dir": "/etc/llmhost/monitoring.old", **PINNED},
     "monitoring_config_dir='/etc/llmhost/monitoring.old' ends as", "classes"),
    ({"benchmark_work_dir": "/var/lib/llmhost/bench.partial", **PINNED},
     "benchmark_work_dir='/var/lib/llmhost/bench.partial' ends as", "classes"),
    ({"gateway_clients": [{"name": "alice", "key": "Password-Password-123456"}], **PINNED},
     "gateway_clients client alice: key is a guess's first tries"),
    # a folder handed to a service user that is shared memory, or a key store root reads
    ({"vllm_service_cache_dir": "/dev/shm", **PINNED},
     "vllm_service_cache_dir='/dev/shm' is a system folder or too close to one"),
    ({"benchmark_work_dir": "/etc/ssl/private", **PINNED},
     "benchmark_work_dir='/etc/ssl/private' is a system folder or too close to one", "classes-again"),
    ({"gateway_access_log": "/etc/passwd", **PINNED},
     "gateway_access_log='/etc/passwd' is not a log file of the collection's own", "classes"),
    # a folder already on the host that anyone may write in (sticky, as /tmp), or a link ({shared}, {link}: made by
    # the fixture on this machine)
    ({"vllm_service_cache_dir": "{shared}", **PINNED},
     "vllm_service_cache_dir={shared} is a shared folder on the host (mode 1777", "folders"),
    ({"model_store": "{link}", **PINNED}, "model_store={link} is a symbolic link on the host", "folders"),
    # a folder already on the host as someone else's ({theirs}: uid 4242's, 0700), or not as the role makes it
    # ({roots}: root's 0755, where the service user's 0750 cache would be)
    ({"model_store": "{theirs}", **PINNED},
     "model_store={theirs} is on the host already as 4242:4242 0700, not as its role makes it (root:root 0755)",
     "folders-again"),
    ({"benchmark_work_dir": "{theirs}", **PINNED},
     "benchmark_work_dir={theirs} is on the host already as 4242:4242 0700", "folders"),
    ({"vllm_service_cache_dir": "{roots}", "vllm_service_user": "llm", **PINNED},
     "vllm_service_cache_dir={roots} is on the host already as root:root 0755, not as its role makes it (llm:llm 0750)",
     "folders-again"),
    # keys a server accepts: the form and strength of a gateway client's key (class 9)
    ({"vllm_service_api_key": "a" * 24, **PINNED},
     "vllm_service_api_key=(not shown) is a guess's first tries", "classes-again"),
    ({"gateway_upstream_api_key": "short-key", **PINNED},
     "gateway_upstream_api_key=(not shown) must be 20 to 256 letters", "classes"),
    # URL schemes (class 12): endpoints over HTTP only, mirrors also file://, nothing else
    ({"model_hf_endpoint": "ftp://hub.lan", **PINNED},
     "model_hf_endpoint=(not shown) is not an https:// or http:// URL: another scheme (ftp://, ssh://...)",
     "classes-again"),
    ({"benchmark_url": "file:///etc/passwd", **PINNED},
     "benchmark_url=(not shown) is not an https:// or http:// URL: another scheme", "classes-again"),
    ({"vllm_install_git_url": "ssh://mirror.lan/vllm.git", **PINNED},
     "vllm_install_git_url=(not shown) is not an https:// or http:// URL, a file:// URL or an absolute path",
     "classes"),
    # short forms and families of the plan's options (class 6)
    ({"vllm_service_extra_args": ["-asc", "4"], **PINNED},
     "vllm_service_extra_args: -asc is set by the serving plan", "options"),
    ({"vllm_service_extra_args": ["--data-parallel-start-rank", "1"], **PINNED},
     "vllm_service_extra_args: --data-parallel-start-rank is set by the serving plan", "options"),
    # addresses a service binds, as nginx and Prometheus read them: literal, IPv4 for Prometheus's flags
    ({"gateway_listen_address": "gateway.lan", **PINNED},
     "gateway_listen_address='gateway.lan' is not a literal IPv4 or IPv6 address", "classes"),
    ({"monitoring_listen_address": "::1", **PINNED},
     "monitoring_listen_address='::1' is not a literal IPv4 address", "classes"),
    # a folder handed to the service user that root reads configuration from
    ({"vllm_service_cache_dir": "/etc/llmhost/vllm", **PINNED},
     "vllm_service_cache_dir=/etc/llmhost/vllm and vllm_service_config_dir=/etc/llmhost/vllm overlap"),
    ({"vllm_service_my_note": "x", "llmhost_allow_unknown_vars": True, "vllm_install_method": "conda",
      **PINNED}, "vllm_install_method=conda; choose one of wheel, source"),
    ({"vllm_service_my_note": "x", "llmhost_allow_unknown_vars": "True ", **PINNED},
     "vllm_service_my_note is not a variable of any role of llmhost.vllm"),
    ({"llmhost_allow_unknown_vars": "y", **PINNED},
     "llmhost_allow_unknown_vars: got 'y' (a string); needs true or false"),
]
# Inputs whose values must never reach the output, whatever is refused.
SECRETS = ("model_hf_token", "vllm_service_api_key", "vllm_service_hf_token", "gateway_upstream_api_key",
           "monitoring_alert_webhook_url")


TMP = {}


def _placed(extra, tmp):
    """The case's values with {shared}, {link}, {theirs} and {roots} put in: folders of this machine the fixture
    made."""
    def put(text):
        for name in ("shared", "link", "theirs", "roots"):
            text = text.replace("{%s}" % name, str(tmp / name))
        return text
    return {k: put(v) if isinstance(v, str) else v for k, v in extra.items()}


@pytest.fixture(scope="module")
def first_play_refusals(tmp_path_factory):
    """Every FIRST_PLAY entry at once, through the real site playbook: a real run (not --check) with no GPU and no
    model. `--tags never` (Ansible's own tag, which no task here carries) keeps every role's work out of it even if
    a check were lost; the checks are tagged `always`, so they run whatever tags are chosen."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    tmp = TMP["dir"] = tmp_path_factory.mktemp("first-play")
    (tmp / "shared").mkdir()
    (tmp / "shared").chmod(0o1777)
    (tmp / "link").symlink_to(tmp / "shared")
    (tmp / "theirs").mkdir(mode=0o700)
    os.chown(tmp / "theirs", 4242, 4242)
    (tmp / "roots").mkdir()
    (tmp / "roots").chmod(0o755)
    return _run_table(tmp)


def _host_of(i):
    """The inventory host that carries FIRST_PLAY's case i: its group's, or one of its own."""
    return "group-%s" % FIRST_PLAY[i][2] if len(FIRST_PLAY[i]) > 2 else "case-%d" % i


# Under --check, a spread of the table (every fifth case) and every case that reads a folder on the host: the first
# play's only reads of the host (path_info) run under --check too, so those are the cases check mode could change.
IN_CHECK = [i for i, (extra, *_rest) in enumerate(FIRST_PLAY)
            if i % 5 == 0 or any(isinstance(v, str) and "{" in v for v in extra.values())]


def _run_table(tmp, *options):
    """One host per group of cases (or per case without one), each case's values put in; under options (--check),
    only the hosts of IN_CHECK's cases."""
    cases = {}
    for i, (extra, *_rest) in enumerate(FIRST_PLAY):
        if not options or _host_of(i) in {_host_of(c) for c in IN_CHECK}:
            cases.setdefault(_host_of(i), []).append(_placed(extra, tmp))
    hosts = {host: dict({"llmhost_stack": "current"}, **merged_vars(values), ansible_connection="local",
                        ansible_python_interpreter=sys.executable) for host, values in cases.items()}
    site = (ROOT / "playbooks" / "site.yml").read_text()
    where = tmp / ("check" if options else "real")
    where.mkdir()
    return run_batch(where, {"vllm_hosts": {"hosts": hosts}}, site, "--tags", "never", *options)


def test_check_mode_refuses_the_same_values_with_the_same_words(first_play_refusals):
    """IN_CHECK's cases again under --check: each refused in the first play, changed=0, in the same words as the real
    run."""
    _rc, _out, real = first_play_refusals
    rc, out, checked = _run_table(TMP["dir"], "--check")
    assert rc == 2, out[-3000:]
    assert sorted(checked) == sorted({_host_of(i) for i in IN_CHECK})
    for host, got in sorted((h, real[h]) for h in checked):
        assert checked[host]["failed"] == got["failed"] and checked[host]["changed"] == 0, host
        assert len(checked[host]["plays"]) == 1, host


@pytest.mark.parametrize("case", FIRST_PLAY, ids=["first-play-%d" % i for i in range(len(FIRST_PLAY))])
def test_site_refuses_bad_input_in_its_first_play(first_play_refusals, request, case):
    """Each case stops in the first play, 0 changed, and no secret's value is shown anywhere in the run."""
    extra, words = case[:2]
    rc, out, hosts = first_play_refusals
    host = _host_of(request.node.callspec.indices["case"])
    assert rc == 2, out[-3000:]
    got = hosts.get(host)
    assert got and got["failed"], "%s (%s) was not refused: %s" % (host, extra, got)
    words = _placed({"words": words}, TMP["dir"])["words"]
    assert said_in(words, got["failed"]), (words, got["failed"])
    assert len(got["plays"]) == 1 and "before changing anything" in got["plays"][0], got["plays"]
    assert got["changed"] == 0
    for name in set(SECRETS) & set(extra):
        assert extra[name].strip("\\") not in out, "the value of %s is shown" % name
    assert "hunter2" not in out, "a URL's credentials are shown"
    for client in [c for c in extra.get("gateway_clients", []) if isinstance(c, dict)]:
        assert client["key"] not in out, "the key of gateway client %s is shown" % client["name"]


def test_no_refusal_prints_a_whole_argument_spec(first_play_refusals):
    """Ansible's own spec check would print every option of the role after its one useful line."""
    rc, out, hosts = first_play_refusals
    assert "argument_spec_data" not in out


@pytest.mark.parametrize("option,tag,words", [
    ("--tags", "vllm_serivce", "--tags vllm_serivce: no task of llmhost.vllm carries this tag (did you mean vllm_service?)"),
    ("--skip-tags", "gpu_tunning", "--skip-tags gpu_tunning: no task of llmhost.vllm carries this tag (did you mean "
     "gpu_tuning?)"),
])
def test_a_tag_no_task_carries_stops_the_first_play(tmp_path, option, tag, words):
    """Ansible runs a tag nobody carries as nothing at all, with rc 0: the site refuses it instead."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    host = {"llmhost_stack": "current", **PINNED, "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable}
    rc, out, hosts = run_batch(tmp_path, {"vllm_hosts": {"hosts": {"typo": host}}},
                               (ROOT / "playbooks" / "site.yml").read_text(), "--check", option, tag)
    assert rc == 2 and said_in(words, hosts["typo"]["failed"]), (hosts, out[-2000:])
    assert hosts["typo"]["changed"] == 0 and len(hosts["typo"]["plays"]) == 1


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "playbooks").glob("*.yml") if p.name != "site.yml"))
def test_every_playbook_refuses_typos_and_wrong_types_first(tmp_path, name):
    """The other playbooks call the same check (roles/_common, inputs) before their roles: a typo or a wrong type
    stops them in their first play, named, before anything runs."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    host = {"llmhost_stack": "current", **PINNED, "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable, "vllm_service_max_model_length": 8192}
    rc, out, hosts = run_batch(tmp_path, {"vllm_hosts": {"hosts": {"typo": host}}},
                               (ROOT / "playbooks" / name).read_text(), "--check")
    failed = hosts["typo"]["failed"]
    assert rc == 2 and said_in("vllm_service_max_model_length is not a variable of any role of llmhost.vllm (did you "
                               "mean vllm_service_max_model_len?)", failed), (hosts, out[-2000:])
    assert hosts["typo"]["changed"] == 0 and len(hosts["typo"]["plays"]) == 1


TUNE_CASES = {
    "slo": ({"tune_slo_p95_ttft_ms": 0}, "tune_slo_p95_ttft_ms=0 must be a finite number from 1 to 3600000"),
    "goal": ({"tune_goal": "cheap"}, "tune_goal must be one of: throughput, latency; got 'cheap'"),
    "owned": ({"tune_candidates": [{"name": "x", "extra_args": ["--max-num-seqs=8"]}]},
              "tune_candidates[0] (x): --max-num-seqs is the plan's own option (vllm_service_max_num_seqs): give it as a wish"),
    "unserved": ({}, "tune: the host serves no model yet (no replica list from vllm_service): run site.yml first"),
}


def test_tune_refuses_its_settings_by_name_in_its_first_play(tmp_path):
    """playbooks/tune.yml's first play: each bad setting named (filter tune_settings), and a host serving nothing yet
    (no replica list from vllm_service here), before anything runs."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    hosts = {name: {"llmhost_stack": "current", **PINNED, **given, "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable} for name, (given, _words) in TUNE_CASES.items()}
    rc, out, seen = run_batch(tmp_path, {"vllm_hosts": {"hosts": hosts}}, (ROOT / "playbooks" / "tune.yml").read_text())
    assert rc == 2, out[-3000:]
    for name, (_given, words) in TUNE_CASES.items():
        assert said_in(words, seen[name]["failed"]) and len(seen[name]["plays"]) == 1, (name, seen[name])
        assert seen[name]["changed"] == 0
