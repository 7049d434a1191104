"""Bad role inputs fail in the role's preflight, before any change, with the variable named.

The real roles run with ansible-playbook against this machine (local connection, check mode), so what is
tested is Ansible's own evaluation of the role's checks: all cases in one run, each case an inventory host of
its own with its inputs as host variables (tests/integration/playbook_batch.py), or one it shares with the cases of its
group (a fourth element: cases one task of the role refuses together, each named in its message), since a host costs
the role's tasks up to its refusal. The driver and toolkit cases read a
stand-in of NVIDIA's repository (tests/harness/nvrepo.py) served on loopback."""
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pytest
from playbook_batch import SENTINEL_PLAY, merged_vars, run_batch, said_in

ROOT = Path(__file__).resolve().parents[2]
PLAY = """
- hosts: all
  gather_facts: false
  roles:
    - role: llmhost.vllm.{role}
"""

# vllm_service: a Qwen2.5-3B-shaped config.json and the design card's two RTX 4090 (no P2P)
SERVE = {
    "vllm_service_model_path": "{model}",
    "vllm_service_plan_gpus": [{"index": i, "compute_capability": "8.9", "memory_total_mib": 24564, "numa_node": 0}
                               for i in (0, 1)],
    "vllm_service_plan_p2p": {"0,1": "NS"},
}
QWEN25_3B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 36,
             "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 11008,
             "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}

# Refused after the role's own install phase (in --check: "would change"), before its real work:
# the disk check needs the quantizer's stamp, which needs its lock installed.
AFTER_INSTALL = {"plus quantize_min_free_gib=1000000"}

# A hub model pinned as a pair: the repository and its commit (a commit alone is refused)
PINNED = {"model_repo": "Qwen/Qwen3-4B-Instruct-2507", "model_revision": "0" * 40}
# (role, the host's values, words its refusal must say[, group]): a group's cases are refused by the same task of the
# role (the first play's class checks, run by the role alone; its own table; one check of its preflight) and share a
# host. Class checks mask the table's, and most preflight checks stop at their first error, so those stay apart.
CASES = [
    ("system_tuning", {"system_tuning_sysctl": {"vm.no_such_knob": 1}}, "unknown sysctl key(s) vm.no_such_knob", "sysctl-a"),
    ("system_tuning", {"system_tuning_sysctl": {"vm.swappiness": "low"}}, "sysctl vm.swappiness=low", "sysctl-b"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["mmu_notifier_invalidate_range=on"]},
     "mmu_notifier_invalidate_range: no such kernel parameter exists", "sysctl-a"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["quiet splash"]}, "not of the form name or name=value", "sysctl-b"),
    ("system_tuning", {"system_tuning_thp": "sometimes"}, "system_tuning_thp"),
    ("system_tuning", {"system_tuning_thp": "always"}, "system_tuning_thp=always contradicts transparent_hugepage=never"),
    ("llmhost_stack", {"llmhost_stack": "legacy"}, "llmhost_stack"),
    ("kernel", {"kernel_packages": ["vim"]}, "kernel_packages"),
    ("kernel", {"kernel_release": "6.5.0-41-generic"}, "is not a Debian kernel"),
    ("gpu_tuning", {"gpu_tuning_graphics_clocks": "fast"}, "gpu_tuning_graphics_clocks=fast", "inputs"),
    ("nvidia_driver", {"nvidia_driver_version": "535.129.03"}, "belong to the profile's driver branch 580"),
    ("nvidia_driver", {"nvidia_driver_version": "580.95.05"},
     "nvidia_driver_version=580.95.05: {repo} (llmhost_stack_nvidia_repo_url) has no nvidia-driver-cuda, "
     "nvidia-kernel-open-dkms at 580.95.05-1. It offers: nvidia-driver-cuda 580.172.08-1, 580.159.04-1;"),
    ("nvidia_driver", {"nvidia_driver_secure_boot_efivar": "{secure_boot_on}"}, "Secure Boot is on"),
    ("nvidia_driver", {"nvidia_driver_mok_key": "/nonexistent/mok.key", "nvidia_driver_mok_cert": "/nonexistent/mok.pub"},
     "name files that do not exist on the host: /nonexistent/mok.key, /nonexistent/mok.pub"),
    ("nvidia_driver", {"llmhost_stack_nvidia_repo_url": "http://127.0.0.1:9/debian12/x86_64/"},
     "could not be read or its signature verified"),
    # no way onto the network without a key: the key would come over plain http from <url>3bf863cc.pub
    ("nvidia_driver", {"llmhost_stack_nvidia_repo_key": ""},
     "signing key would be fetched over plain http:// from {repo}3bf863cc.pub (llmhost_stack_nvidia_repo_url"),
    ("cuda_toolkit", {"cuda_toolkit_state": "present", "llmhost_stack_nvidia_repo_key": "",
                      "llmhost_stack_nvidia_repo_key_url": "http://keys.lan/nvidia.pub"},
     "from http://keys.lan/nvidia.pub (llmhost_stack_nvidia_repo_key_url)"),
    ("cuda_toolkit", {"cuda_toolkit_state": "present", "cuda_toolkit_package": "cuda"}, "never cuda or cuda-drivers"),
    ("cuda_toolkit", {"cuda_toolkit_state": "present", "cuda_toolkit_package_version": "13.0.1-1"},
     "cuda_toolkit_package_version=13.0.1-1: {repo} (llmhost_stack_nvidia_repo_url) has no cuda-toolkit-13-0 at 13.0.1-1. "
     "It offers: cuda-toolkit-13-0 13.0.2-1;"),
    ("vllm_install", {"vllm_install_method": "conda"}, "vllm_install_method=conda; choose one of wheel, source"),
    # paths, checked for what they become (module_utils/paths.py; one case per way in)
    ("vllm_service", dict(SERVE, vllm_service_cache_dir="/"), "vllm_service_cache_dir='/' is a system folder", "alone-a"),
    ("vllm_service", dict(SERVE, vllm_service_cache_dir="/var/cache/vllm\nExecStartPre=+/bin/sh"),
     "ExecStartPre=+/bin/sh' has characters other than letters", "alone-b"),
    ("system_tuning", {"system_tuning_sysctl_file": "/etc/sysctl.conf"},
     "system_tuning_sysctl_file='/etc/sysctl.conf' must be a file directly in /etc/sysctl.d", "plain"),
    ("model", {"model_store": "/srv/../etc", **PINNED}, "model_store='/srv/../etc' has an empty, . or .. part", "classes"),
    # ranges, lists, names and the network key (module_utils/value_checks.py; one case per class and way in)
    ("vllm_service", dict(SERVE, vllm_service_base_port=80), "vllm_service_base_port=80 must be a number from 1024 to 65535", "inputs-a"),
    ("vllm_service", dict(SERVE, vllm_service_tensor_parallel_size=-1),
     "vllm_service_tensor_parallel_size=-1 must be a number from 0 to 64", "inputs-a"),
    ("vllm_service", dict(SERVE, vllm_service_gpus=[0, 0]), "vllm_service_gpus=[0, 0] lists an item twice", "inputs-a"),
    ("vllm_service", dict(SERVE, vllm_service_after=["network-online.target\nExecStartPre=+/bin/sh -c id"]),
     "is not a systemd unit name", "inputs-a"),
    # the first play's words, also when the role runs alone (its own table would say "is not the start of a unit name")
    ("vllm_service", dict(SERVE, vllm_service_unit_name="../vllm"),
     "vllm_service_unit_name='../vllm' does not start with the collection's prefix", "alone-a"),
    ("vllm_service", dict(SERVE, vllm_service_env={"OMP_NUM_THREADS": "4\"\nLD_PRELOAD=/tmp/x.so"}),
     "vllm_service_env: the value of OMP_NUM_THREADS holds a newline", "inputs-a"),
    ("vllm_service", dict(SERVE, vllm_service_host="0.0.0.0"), "vllm_service_host=0.0.0.0 is not a loopback address", "inputs-a"),
    ("vllm_service", dict(SERVE, vllm_service_host="localhost"), "vllm_service_host=localhost is not a loopback address", "inputs-b"),
    # the first play's key rule, also when the role runs alone (its own table: "holds a newline, a quote, a backslash")
    ("vllm_service", dict(SERVE, vllm_service_api_key="sk-abc\nHF_TOKEN=stolen"),
     "vllm_service_api_key=(not shown) must be 20 to 256", "alone-a"),
    ("model", {"model_name": "..", **PINNED}, "model_name: '..' must be one plain name", "names"),
    ("quantize", {"quantize_state": "present", "quantize_min_free_gib": 1000000, "model_path": "{fetched}",
                  "quantize_python": "/usr/bin/python3", "quantize_home": "{store}/quantize"},
     "plus quantize_min_free_gib=1000000"),
    ("quantize", {"quantize_state": "present", "quantize_samples": 0, "model_path": "{tiny}"},
     "quantize_samples=0 must be a number from 1 up", "numbers"),
    ("quantize", {"quantize_state": "present", "quantize_poll": 0, "model_path": "{tiny}"},
     "quantize_poll=0 must be a number from 1 up", "numbers"),
    ("model", {"model_download_poll": 0, **PINNED}, "model_download_poll=0 must be a number from 1 up", "names"),
    ("system_tuning", {"system_tuning_kernel_cmdline": "quiet"}, "system_tuning_kernel_cmdline must be a list", "plain"),
    ("gpu_tuning", {"gpu_tuning_gpus": ["0", "0"]}, "gpu_tuning_gpus=['0', '0'] lists an item twice", "inputs"),
    ("llmhost_stack", {"llmhost_stack_overrides": {"vllm": "0.7.0", "vlm": {}}},
     "llmhost_stack_overrides: vlm is not a key of the profile; vllm must be a dict of the keys to change"),
    ("vllm_service", dict(SERVE, vllm_service_tensor_parallel_size=4),
     "vllm_service_tensor_parallel_size=4 is larger than the 2 GPU(s) used"),
    ("vllm_service", dict(SERVE, vllm_service_max_model_len=65536),
     "vllm_service_max_model_len=65536 is beyond the model's max_position_embeddings (32768)"),
    # check mode before the fetch: no config.json at the served path, the plan is made from model_config
    ("vllm_service", dict(SERVE, vllm_service_model_path="/nonexistent/Qwen2.5-3B-Instruct", model_config=QWEN25_3B,
                          vllm_service_max_model_len=65536),
     "vllm_service_max_model_len=65536 is beyond the model's max_position_embeddings (32768)"),
    ("vllm_service", dict(SERVE, vllm_service_extra_args=["--swap-space", "4"]),
     "vllm_service_extra_args: --swap-space is not an option of vllm serve in vLLM 0.33.0", "options"),
    ("vllm_service", dict(SERVE, vllm_service_extra_args=["--api-key", "sk-plain"]),
     "--api-key is set by the serving plan; use vllm_service_api_key", "options"),
    ("vllm_service", dict(SERVE, vllm_service_env={"VLLM_API_KEY": "sk-plain"}),
     "vllm_service_env sets VLLM_API_KEY, which the serving plan or the unit sets", "inputs-b"),
    ("vllm_service", dict(SERVE, vllm_service_env={"CUDA_VISIBLE_DEVICES": "1", "VLLM_ARGS": "--x"}),
     "vllm_service_env sets CUDA_VISIBLE_DEVICES, VLLM_ARGS, which the serving plan or the unit sets"),
    ("quantize", {"quantize_state": "present", "model_path": "{tiny}", "quantize_output": "{model}"},
     "quantize_output={model}: it exists and holds no llmhost-quantize.json, so it is not an output of this role"),
    ("quantize", {"quantize_state": "present", "model_path": "{tiny}", "quantize_output": "{tiny}"},
     "quantize_output={tiny}: it is, holds or lies in the model to quantize"),
    ("quantize", {"quantize_state": "present", "quantize_group_size": 256, "model_path": "{tiny}"},
     "quantize_group_size=256: vLLM's AWQ kernels take group sizes 32, 64, 128 or -1 (per channel)", "numbers"),
    ("quantize", {"quantize_state": "present", "model_path": "{gpt2}"},
     "architecture GPT2LMHeadModel has no AWQ layer mapping in llm-compressor"),
    ("model", {"model_revision": "main"}, "model_repo=Qwen/Qwen3-4B-Instruct-2507 / model_revision=main: a hub download needs"),
    ("model", {**PINNED, "model_repo": "no such repo"}, "model_repo=no such repo"),
    ("model", {"model_source": "local", "model_local_path": "{tiny}", "model_store": "{store}", "model_min_free_gib": 99999},
     "(model_store) has"),
    # offline, the hub is not asked: the size is the pre-seeded cache's snapshot of the revision
    ("model", {"model_repo": "llmhost-test/tiny", "model_revision": "c" * 40, "model_hf_offline": True,
               "model_hf_cache": "{hf_cache}", "model_store": "{store}", "model_min_free_gib": 99999},
     "(model_store) has"),
    # before the copy: the seed profile's vLLM has no model class for the architecture
    ("model", {"llmhost_stack": "seed", "model_source": "local", "model_local_path": "{qwen3}", "model_store": "{store}"},
     "architecture Qwen3ForCausalLM has no model class in vLLM 0.6.3, the vLLM of stack profile seed (its model "
     "registry: the model would fail when the service starts); choose llmhost_stack=current (vLLM 0.33.0)"),
    ("model", {"model_source": "local", "model_local_path": "{tiny}", "model_store": "{tampered_store}", "model_name": "tiny"},
     "no longer matches its manifest: tokenizer_config.json does not match the manifest"),
    ("cuda_toolkit", {"cuda_toolkit_state": "maybe"}, "value of cuda_toolkit_state must be one of: auto, present, skip, got: maybe"),
    # the last replica's port, known once the plan has its replicas (two here)
    ("vllm_service", dict(SERVE, vllm_service_base_port=65535),
     "vllm_service_base_port=65535 with 2 replica(s) puts the last one on port 65536"),
    ("benchmark", {"benchmark_client": "guidellm"}, "value of benchmark_client must be one of: , vllm, script, got: guidellm"),
    ("benchmark", {"benchmark_phases": [{"name": "mixed", "input_len": [2048, 512], "output_len": 512, "concurrency": 0,
                                         "requests": 8}]},
     "benchmark_phases[0] (mixed): concurrency must be whole numbers of 1 or more; benchmark_phases[0] (mixed): input_len"),
    ("benchmark", {"benchmark_compare": "/nonexistent/run"}, "benchmark_compare=/nonexistent/run does not exist"),
    # nginx -t would refuse them, but only once nginx is installed
    ("gateway", {"gateway_state": "present", "gateway_tls_certificate": "/nonexistent/gw.crt",
                 "gateway_tls_key": "/nonexistent/gw.key", **PINNED},
     "gateway_tls_certificate=/nonexistent/gw.crt, gateway_tls_key=/nonexistent/gw.key: not a file on the host"),
    ("doctor", {"doctor_burnin_minutes": 0}, "doctor_burnin_minutes=0 must be a number from 0.1 to 1440"),
    ("doctor", {"doctor_load_device": "rocm"}, "value of doctor_load_device must be one of: cuda, cpu, got: rocm"),
    # the first play's type and class checks, run by the role alone over its own variables (filter role_alone_errors)
    ("kernel", {"kernel_reboot_ok": " true "}, "kernel_reboot_ok: got ' true ' (a string); needs true or false"),
    ("gpu_tuning", {"gpu_tuning_unit": "ssh.service"},
     "gpu_tuning_unit='ssh.service' does not start with the collection's prefix (llmhost- or vllm)"),
    ("vllm_service", dict(SERVE, vllm_service_unit_name="ssh"),
     "vllm_service_unit_name='ssh' does not start with the collection's prefix (llmhost- or vllm)", "alone-b"),
    ("vllm_service", dict(SERVE, vllm_service_api_key="abc"), "vllm_service_api_key=(not shown) must be 20 to 256", "alone-b"),
    # judged by the plan, which knows the model's bytes a token (the first play does not have the model yet)
    ("vllm_service", dict(SERVE, vllm_service_extra_args=["--kv-cache-memory-bytes", "64M"]),
     "vllm_service_extra_args: --kv-cache-memory-bytes 64M holds about"),
    ("vllm_service", dict(SERVE, vllm_service_extra_args=["--async-scheduling", "--no-async-scheduling"]),
     "vllm_service_extra_args: --async-scheduling is given more than once (vLLM keeps only the last", "options"),
    ("gateway", {"gateway_state": "present", "gateway_listen_address": "unix", **PINNED},
     "gateway_listen_address='unix' is not a literal IPv4 or IPv6 address", "listen"),
    ("gateway", {"gateway_state": "present", "gateway_max_body_kib": 1048576, **PINNED},
     "gateway_max_body_kib=1048576 lets a few clients take the host's memory", "listen"),
    ("monitoring", {"monitoring_listen_address": "0.0.0.0:9090"},
     "monitoring_listen_address='0.0.0.0:9090' is not a literal IPv4 address"),
    ("model", {"model_store": "/dev/shm"}, "model_store='/dev/shm' is a system folder or too close to one"),
    ("model", {"model_store": "/srv/llm.previous/models"}, "model_store='/srv/llm.previous/models' lies inside llm.previous"),
    ("vllm_service", dict(SERVE, vllm_service_cache_dir="/run/systemd/system/vllm@0.service.d"),
     "vllm_service_cache_dir='/run/systemd/system/vllm@0.service.d' lies inside systemd's unit folder"),
    ("model", {"model_hf_endpoint": "https://u:p@hub.example", **PINNED}, "model_hf_endpoint=(not shown) holds credentials", "classes"),
]


@pytest.fixture(scope="module")
def nvidia_repo(tmp_path_factory):
    """The harness's stand-in of NVIDIA's repository (tests/harness/nvrepo.py), served on a free loopback port."""
    missing = [t for t in ("dpkg-deb", "dpkg-scanpackages", "gpg") if not shutil.which(t)]
    assert not missing, "%s build the test repository (make unit installs them: tests/harness/host-deps.sh unit)" % missing
    out = tmp_path_factory.mktemp("nvrepo")
    subprocess.run([sys.executable, str(ROOT / "tests" / "harness" / "nvrepo.py"), "build", str(out)], check=True,
                   capture_output=True)
    spec = importlib.util.spec_from_file_location("nvrepo", ROOT / "tests" / "harness" / "nvrepo.py")
    nvrepo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nvrepo)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(nvrepo.Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # the repository over plain http, with its key inline: a key over plain http is refused
    yield ("http://127.0.0.1:%d/debian12/x86_64/" % server.server_address[1],
           (out / "debian12" / "x86_64" / "3bf863cc.pub").read_text())
    server.shutdown()


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """The harness's tiny Qwen model (tests/harness/tiny_qwen.py), a GPT-2-labelled copy, and a model
    store holding it with a manifest and then one tokenizer file changed."""
    sys.path.insert(0, str(ROOT))
    from plugins.module_utils import model_check  # pylint: disable=import-outside-toplevel
    base = tmp_path_factory.mktemp("tiny")
    tiny = base / "tiny-qwen"
    subprocess.run([sys.executable, str(ROOT / "tests" / "harness" / "tiny_qwen.py"), str(tiny)], check=True,
                   capture_output=True)
    gpt2 = base / "gpt2"
    shutil.copytree(tiny, gpt2)
    cfg = json.loads((gpt2 / "config.json").read_text())
    (gpt2 / "config.json").write_text(json.dumps(dict(cfg, architectures=["GPT2LMHeadModel"])))
    qwen3 = base / "qwen3"                        # an architecture vLLM 0.6.3 (the seed profile's) lacks
    shutil.copytree(tiny, qwen3)
    (qwen3 / "config.json").write_text(json.dumps(dict(cfg, architectures=["Qwen3ForCausalLM"])))
    store = base / "store"
    shutil.copytree(tiny, store / "tiny")
    recorded = {"source": str(tiny), "files": model_check.manifest(str(store / "tiny"))}
    (store / "tiny" / model_check.MANIFEST).write_text(json.dumps(recorded))
    fetched = base / "fetched" / "tiny"            # as the model role leaves it: with its manifest
    shutil.copytree(tiny, fetched)
    (fetched / model_check.MANIFEST).write_text(json.dumps({"source": str(tiny),
                                                            "files": model_check.manifest(str(fetched))}))
    cfg_path = store / "tiny" / "tokenizer_config.json"
    cfg_path.write_text(cfg_path.read_text().replace("<|im_end|>", "<|endoftext|>", 1))
    # a pre-seeded Hugging Face cache (HF_HOME) holding revision c...c of llmhost-test/tiny, files linked to blobs
    hf_cache = base / "hfcache"
    snapshot = hf_cache / "hub" / "models--llmhost-test--tiny" / "snapshots" / ("c" * 40)
    snapshot.mkdir(parents=True)
    for src in sorted(tiny.iterdir()):
        blob = hf_cache / "hub" / "models--llmhost-test--tiny" / "blobs" / src.name
        blob.parent.mkdir(exist_ok=True)
        shutil.copy(src, blob)
        (snapshot / src.name).symlink_to(os.path.relpath(blob, snapshot))
    return {"tiny": tiny, "gpt2": gpt2, "qwen3": qwen3, "tampered_store": store, "fetched": fetched,
            "hf_cache": hf_cache}


def _host_of(i):
    """The inventory host that carries CASES' case i: its group's, or one of its own."""
    return "%s-%s" % (CASES[i][0], CASES[i][3]) if len(CASES[i]) > 3 else "case-%d" % i


@pytest.fixture(scope="module")
def role_refusals(request, tmp_path_factory):
    """Every CASES entry at once: one play per role over that role's hosts, in check mode; a host per group of cases
    (a fourth element: cases the same task of the role refuses together, each named in its message), else per case,
    since a host costs the role's tasks up to its refusal."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    tmp = tmp_path_factory.mktemp("role-inputs")
    inventory, words, values = {"all": {"children": {}}}, {}, {}
    for i, (role, extra, said, *_group) in enumerate(CASES):
        host = _host_of(i)
        case = tmp / host
        subst = {"model": case / "model", "secure_boot_on": case / "SecureBoot", "repo": "", "store": case / "store"}
        if role in ("model", "quantize"):
            subst.update(request.getfixturevalue("tiny_models"))
        subst["model"].mkdir(parents=True, exist_ok=True)
        (subst["model"] / "config.json").write_text(json.dumps(QWEN25_3B))
        subst["secure_boot_on"].write_bytes(bytes([6, 0, 0, 0, 1]))  # attributes, then 1: Secure Boot on
        if role in ("nvidia_driver", "cuda_toolkit"):
            subst["repo"], key = request.getfixturevalue("nvidia_repo")
            extra = dict(extra)
            extra.setdefault("llmhost_stack_nvidia_repo_url", subst["repo"])
            extra.setdefault("llmhost_stack_nvidia_repo_key", key)
        values.setdefault((role, host), []).append({k: str(v).format(**subst) if isinstance(v, str) else v
                                                    for k, v in extra.items()})
        words[i] = said.format(**subst)
    for (role, host), extras in values.items():
        merged = merged_vars(extras)
        group = inventory["all"]["children"].setdefault("role_" + role, {"hosts": {}})
        group["hosts"][host] = dict(merged, ansible_connection="local", ansible_python_interpreter=sys.executable,
                                    llmhost_stack=merged.get("llmhost_stack", "current"))
    # Ansible ends a whole run after a play in which every host failed: a host that leaves each play at once
    # ("sentinel", never failed) lets the next role's play run.
    inventory["all"]["hosts"] = {"sentinel": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}
    playbook = "".join(SENTINEL_PLAY % (g, g[5:]) for g in inventory["all"]["children"])
    rc, out, hosts = run_batch(tmp, inventory, playbook, "--check")
    return rc, out, hosts, words


@pytest.mark.parametrize("role,extra,words", [c[:3] for c in CASES], ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_bad_input_fails_early_naming_the_variable(role_refusals, request, role, extra, words):
    rc, out, hosts, said = role_refusals
    index = request.node.callspec.indices["role"]
    host = _host_of(index)
    assert rc == 2, out[-3000:]
    got = hosts.get(host)
    assert got and got["failed"], "%s (%s %s) was not refused: %s" % (host, role, extra, got)
    assert said_in(said[index], got["failed"]), (said[index], got["failed"])
    assert got["changed"] == 0 or said[index] in AFTER_INSTALL, got


@pytest.mark.parametrize("distribution,major,want", [("Debian", "12", "3.11"), ("Ubuntu", "24", "3.12")])
def test_the_profile_role_settles_the_venvs_python_for_the_distribution(tmp_path, distribution, major, want):
    """current: Debian 12's own Python 3.11 (its locks are resolved for it), elsewhere the profile's 3.12.
    The one place this is decided; the host report and the roles read llmhost_stack_python."""
    play = tmp_path / "play.yml"
    play.write_text("""
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.set_fact:
        ansible_facts: {distribution: %s, distribution_major_version: "%s"}
    - ansible.builtin.include_role: {name: llmhost.vllm.llmhost_stack, public: true}
    - ansible.builtin.debug: {msg: "PYTHON={{ llmhost_stack_python.version }}"}
""" % (distribution, major))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           str(play), "-e", json.dumps({"llmhost_stack": "current",
                                                        "ansible_python_interpreter": sys.executable})],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "PYTHON=%s" % want in proc.stdout


JAMMY = {"distribution": "Ubuntu", "distribution_version": "22.04", "distribution_release": "jammy"}


@pytest.mark.parametrize("facts,wish,state,refused", [
    (JAMMY, "distribution", "auto", "gateway_nginx_source=distribution: Ubuntu 22.04's archive has no njs module"),
    (JAMMY, "distribution", "skip", None),
    (JAMMY, "auto", "auto", None),
    ({"distribution": "Rocky", "distribution_version": "9.4", "distribution_release": "Blue Onyx"}, "nginx.org", "auto",
     "gateway_nginx_source=nginx.org: nginx.org's repository has packages for Debian and Ubuntu only"),
    ({"distribution": "Debian", "distribution_version": "12.8", "distribution_release": "bookworm"}, "auto", "auto", None),
])
def test_a_gateway_the_distribution_cannot_install_is_refused_in_validate(tmp_path, facts, wish, state, refused):
    """Ubuntu 22.04's archive has no njs: its gateway comes from nginx.org's repository, and the distribution's
    packages are refused there by the gateway's validate (the site's first play), instead of apt failing in the
    gateway's install phase after the driver, vLLM and the model. The facts are given, as the test host is Debian."""
    play = tmp_path / "play.yml"
    play.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.include_role:\n"
                    "        name: llmhost.vllm.gateway\n        tasks_from: validate\n")
    extra = {"ansible_facts": facts, "llmhost_stack": "current", "gateway_state": state, "gateway_nginx_source": wish,
             "gateway_clients": [{"name": "alice", "key": "alice-secret-key-0123456789"}],
             "vllm_service_api_key": "vllm-key-0123456789abcdef", "ansible_python_interpreter": sys.executable}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           str(play), "-e", json.dumps(extra)], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    said = " ".join(proc.stdout.split())
    assert (proc.returncode != 0) == bool(refused), said[-2000:]
    assert refused is None or refused in said, said[-2000:]
