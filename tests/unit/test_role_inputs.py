"""Bad role inputs fail in the role's preflight, before any change, with the variable named.

Each case runs the real role with ansible-playbook against this machine (local connection, check
mode), so what is tested is Ansible's own evaluation of the role's checks. The driver and toolkit
cases read a stand-in of NVIDIA's repository (tests/harness/nvrepo.py) served on loopback."""
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

CASES = [
    ("system_tuning", {"system_tuning_sysctl": {"vm.no_such_knob": 1}}, "unknown sysctl key(s) vm.no_such_knob"),
    ("system_tuning", {"system_tuning_sysctl": {"vm.swappiness": "low"}}, "sysctl vm.swappiness=low"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["mmu_notifier_invalidate_range=on"]},
     "mmu_notifier_invalidate_range: no such kernel parameter exists"),
    ("system_tuning", {"system_tuning_kernel_cmdline": ["quiet splash"]}, "not of the form name or name=value"),
    ("system_tuning", {"system_tuning_thp": "sometimes"}, "system_tuning_thp"),
    ("system_tuning", {"system_tuning_thp": "always"}, "system_tuning_thp=always contradicts transparent_hugepage=never"),
    ("llmhost_stack", {"llmhost_stack": "legacy"}, "llmhost_stack"),
    ("kernel", {"kernel_packages": ["vim"]}, "kernel_packages"),
    ("kernel", {"kernel_release": "6.5.0-41-generic"}, "is not a Debian kernel"),
    ("gpu_tuning", {"gpu_tuning_graphics_clocks": "fast"}, "gpu_tuning_graphics_clocks=fast"),
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
    ("vllm_service", dict(SERVE, vllm_service_cache_dir="/"), "vllm_service_cache_dir='/' is a system folder"),
    ("vllm_service", dict(SERVE, vllm_service_cache_dir="/var/cache/vllm\nExecStartPre=+/bin/sh"),
     "ExecStartPre=+/bin/sh' has characters other than letters"),
    ("system_tuning", {"system_tuning_sysctl_file": "/etc/sysctl.conf"},
     "system_tuning_sysctl_file='/etc/sysctl.conf' must be a file directly in /etc/sysctl.d"),
    ("model", {"model_store": "/srv/../etc", "model_revision": "0" * 40}, "model_store='/srv/../etc' has an empty, . or .. part"),
    # ranges, lists, names and the network key (module_utils/values.py; one case per class and way in)
    ("vllm_service", dict(SERVE, vllm_service_base_port=80), "vllm_service_base_port=80 must be a number from 1024 to 65535"),
    ("vllm_service", dict(SERVE, vllm_service_tensor_parallel_size=-1),
     "vllm_service_tensor_parallel_size=-1 must be a number from 0 to 64"),
    ("vllm_service", dict(SERVE, vllm_service_gpus=[0, 0]), "vllm_service_gpus=[0, 0] lists an item twice"),
    ("vllm_service", dict(SERVE, vllm_service_after=["network-online.target\nExecStartPre=+/bin/sh -c id"]),
     "is not a systemd unit name"),
    ("vllm_service", dict(SERVE, vllm_service_unit_name="../vllm"), "vllm_service_unit_name: '../vllm' is not the start"),
    ("vllm_service", dict(SERVE, vllm_service_env={"OMP_NUM_THREADS": "4\"\nLD_PRELOAD=/tmp/x.so"}),
     "vllm_service_env: the value of OMP_NUM_THREADS holds a newline"),
    ("vllm_service", dict(SERVE, vllm_service_env={"https_proxy": "http://user:pw@proxy:3128"}),
     "vllm_service_env holds https_proxy, which looks like a secret"),
    ("vllm_service", dict(SERVE, vllm_service_host="0.0.0.0"), "vllm_service_host=0.0.0.0 is not loopback"),
    ("vllm_service", dict(SERVE, vllm_service_api_key="sk-abc\nHF_TOKEN=stolen"),
     "vllm_service_api_key holds a newline, a quote, a backslash"),
    ("model", {"model_name": "..", "model_revision": "0" * 40}, "model_name: '..' must be one plain name"),
    ("quantize", {"quantize_state": "present", "quantize_min_free_gib": 1000000, "model_path": "{fetched}",
                  "quantize_python": "/usr/bin/python3", "quantize_home": "{store}/quantize"},
     "plus quantize_min_free_gib=1000000"),
    ("quantize", {"quantize_state": "present", "quantize_samples": 0, "model_path": "{tiny}"},
     "quantize_samples=0 must be a number from 1 up"),
    ("system_tuning", {"system_tuning_kernel_cmdline": "quiet"}, "system_tuning_kernel_cmdline must be a list"),
    ("gpu_tuning", {"gpu_tuning_gpus": ["0", "0"]}, "gpu_tuning_gpus=['0', '0'] lists an item twice"),
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
     "vllm_service_extra_args: --swap-space is not an option of vllm serve in vLLM 0.33.0"),
    ("vllm_service", dict(SERVE, vllm_service_extra_args=["--api-key", "sk-plain"]),
     "--api-key is set by the serving plan; use vllm_service_api_key"),
    ("vllm_service", dict(SERVE, vllm_service_env={"VLLM_API_KEY": "sk-plain"}), "vllm_service_env holds VLLM_API_KEY"),
    ("vllm_service", dict(SERVE, vllm_service_env={"CUDA_VISIBLE_DEVICES": "1", "VLLM_ARGS": "--x"}),
     "vllm_service_env sets CUDA_VISIBLE_DEVICES, VLLM_ARGS, which the serving plan or the unit sets"),
    ("quantize", {"quantize_state": "present", "model_path": "{tiny}", "quantize_output": "{model}"},
     "quantize_output={model}: it exists and holds no llmhost-quantize.json, so it is not an output of this role"),
    ("quantize", {"quantize_state": "present", "model_path": "{tiny}", "quantize_output": "{tiny}"},
     "quantize_output={tiny}: it is, holds or lies in the model to quantize"),
    ("quantize", {"quantize_state": "present", "quantize_group_size": 256, "model_path": "{tiny}"},
     "quantize_group_size=256: vLLM's AWQ kernels take group sizes 32, 64, 128 or -1 (per channel)"),
    ("quantize", {"quantize_state": "present", "model_path": "{gpt2}"},
     "architecture GPT2LMHeadModel has no AWQ layer mapping in llm-compressor"),
    ("model", {"model_revision": "main"}, "model_repo=Qwen/Qwen3-4B-Instruct-2507 / model_revision=main: a hub download needs"),
    ("model", {"model_repo": "no such repo", "model_revision": "0" * 40}, "model_repo=no such repo"),
    ("model", {"model_source": "local", "model_local_path": "{tiny}", "model_store": "{store}", "model_min_free_gib": 99999},
     "(model_store) has"),
    # offline, the hub is not asked: the size is the pre-seeded cache's snapshot of the revision
    ("model", {"model_repo": "llmhost-test/tiny", "model_revision": "c" * 40, "model_hf_offline": True,
               "model_hf_cache": "{hf_cache}", "model_store": "{store}", "model_min_free_gib": 99999},
     "(model_store) has"),
    ("model", {"model_source": "local", "model_local_path": "{tiny}", "model_store": "{tampered_store}", "model_name": "tiny"},
     "no longer matches its manifest: tokenizer_config.json does not match the manifest"),
    ("cuda_toolkit", {"cuda_toolkit_state": "maybe"}, "value of cuda_toolkit_state must be one of: auto, present, skip, got: maybe"),
    # the last replica's port, known once the plan has its replicas (two here)
    ("vllm_service", dict(SERVE, vllm_service_base_port=65535),
     "vllm_service_base_port=65535 with 2 replica(s) puts the last one on port 65536"),
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
    return {"tiny": tiny, "gpt2": gpt2, "tampered_store": store, "fetched": fetched, "hf_cache": hf_cache}


@pytest.mark.parametrize("role,extra,words", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_bad_input_fails_early_naming_the_variable(request, tmp_path, role, extra, words):
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    subst = {"model": tmp_path / "model", "secure_boot_on": tmp_path / "SecureBoot", "repo": "", "store": tmp_path / "store"}
    if role in ("model", "quantize"):
        subst.update(request.getfixturevalue("tiny_models"))
    subst["model"].mkdir()
    (subst["model"] / "config.json").write_text(json.dumps(QWEN25_3B))
    subst["secure_boot_on"].write_bytes(bytes([6, 0, 0, 0, 1]))  # attributes, then 1: Secure Boot on
    if role in ("nvidia_driver", "cuda_toolkit"):
        subst["repo"], key = request.getfixturevalue("nvidia_repo")
        extra = dict(extra)
        extra.setdefault("llmhost_stack_nvidia_repo_url", subst["repo"])
        extra.setdefault("llmhost_stack_nvidia_repo_key", key)
    extra = {k: v.format(**subst) if isinstance(v, str) else v for k, v in extra.items()}
    words = words.format(**subst)
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(role=role))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_DEPRECATION_WARNINGS="0")
    extra = dict(extra, ansible_python_interpreter=sys.executable, llmhost_stack=extra.get("llmhost_stack", "current"))
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local", "--check",
         str(play), "-e", json.dumps(extra)],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert words in " ".join(out.split()), out[-3000:]
    assert "changed=0" in out or words in AFTER_INSTALL


FIRST_PLAY = [
    ({"vllm_service_extra_args": ["--definitely-not-a-vllm-flag"], "model_revision": "0" * 40},
     "vllm_service_extra_args: --definitely-not-a-vllm-flag is not an option of vllm serve in vLLM 0.33.0"),
    ({"vllm_service_extra_args": ["--max-model-len=4096"], "model_revision": "0" * 40},
     "--max-model-len is set by the serving plan; use vllm_service_max_model_len"),
    ({"vllm_service_env": {"NCCL_P2P_DISABLE": "0"}, "model_revision": "0" * 40},
     "vllm_service_env sets NCCL_P2P_DISABLE"),
    ({}, "model_repo=Qwen/Qwen3-4B-Instruct-2507 / model_revision=: a hub download needs"),
    ({"model_source": "local", "model_local_path": "models/tiny"}, "model_local_path=models/tiny"),
    ({"llmhost_stack": "legacy", "model_revision": "0" * 40}, "llmhost_stack"),
    # every other role's types and choices (its validate entry point's argument spec) and pure checks
    ({"kernel_reboot_ok": "perhaps", "model_revision": "0" * 40}, "kernel_reboot_ok"),
    ({"nvidia_driver_replace": "maybe", "model_revision": "0" * 40}, "nvidia_driver_replace"),
    ({"cuda_toolkit_state": "maybe", "model_revision": "0" * 40}, "cuda_toolkit_state must be one of: auto, present, skip"),
    ({"system_tuning_thp": "sometimes", "model_revision": "0" * 40}, "system_tuning_thp"),
    ({"gpu_tuning_graphics_clocks": "fast", "model_revision": "0" * 40}, "gpu_tuning_graphics_clocks=fast"),
    ({"vllm_install_method": "conda", "model_revision": "0" * 40}, "vllm_install_method=conda; choose one of wheel, source"),
    ({"vllm_install_git_mirrors": {"https://github.com/nvidia/cutlass.git": "file:///srv/git/cut lass"},
      "model_revision": "0" * 40}, "vllm_install_git_mirrors: 'file:///srv/git/cut lass' is not a URL"),
    ({"vllm_install_git_mirrors": {"https://github.com/nvidia/cutlass.git": "https://git.lan/$(id)"},
      "model_revision": "0" * 40}, "vllm_install_git_mirrors: 'https://git.lan/$(id)' is not a URL"),
    # a source written into the 0600 pip.conf: a newline would add a setting of its own
    ({"vllm_install_index_url": "https://pypi.lan/simple\ntrusted-host = evil", "model_revision": "0" * 40},
     "vllm_install_index_url: 'https://pypi.lan/simple\\ntrusted-host = evil' is not a URL"),
    ({"quantize_find_links": ["wheels"], "model_revision": "0" * 40}, "quantize_find_links: 'wheels' is not a URL"),
    ({"llmhost_stack_nvidia_repo_url": "https://mirror.lan/cuda/\nTrusted: yes", "model_revision": "0" * 40},
     "llmhost_stack_nvidia_repo_url: 'https://mirror.lan/cuda/\\nTrusted: yes' is not a URL"),
    ({"vllm_install_build_poll": 0, "model_revision": "0" * 40}, "vllm_install_build_poll=0"),
    # a valid token passes model's check, so the refusal is quantize's, which comes after it
    ({"quantize_state": "present", "quantize_group_size": 256, "model_revision": "0" * 40,
      "model_hf_token": "hf_ValidTokenOfTheTest0123456789"},
     "quantize_group_size=256: vLLM's AWQ kernels take group sizes 32, 64, 128 or -1"),
    # values checked for what they become, one case per format they land in: a root shell script, an apt pin,
    # the unit's argument list, a user in the unit, apt's own source list, a clock range
    ({"system_tuning_cpu_governor": 'performance"; id #', "model_revision": "0" * 40},
     "system_tuning_cpu_governor: 'performance\"; id #' must be one plain name"),
    ({"nvidia_driver_version": "580.159.04\n", "model_revision": "0" * 40},
     "nvidia_driver_version: '580.159.04\\n' is not a Debian version"),
    ({"vllm_service_host": "127.0.0.1\nLD_PRELOAD=/tmp/x.so", "model_revision": "0" * 40},
     "vllm_service_host: '127.0.0.1\\nLD_PRELOAD=/tmp/x.so' is not a host name or an IP address"),
    ({"vllm_service_served_model_name": "qwen\nLD_PRELOAD=/tmp/x.so", "model_revision": "0" * 40},
     "vllm_service_served_model_name: 'qwen\\nLD_PRELOAD=/tmp/x.so' cannot be one argument of the unit"),
    ({"vllm_install_user": "vllm\nroot", "model_revision": "0" * 40},
     "vllm_install_user: 'vllm\\nroot' is not a user or group name"),
    ({"llmhost_stack_nvidia_repo_sources_file": "/etc/apt/sources.list", "model_revision": "0" * 40},
     "llmhost_stack_nvidia_repo_sources_file='/etc/apt/sources.list' must be a file directly in /etc/apt/sources.list.d"),
    ({"gpu_tuning_graphics_clocks": "2100,1000", "model_revision": "0" * 40},
     "gpu_tuning_graphics_clocks=2100,1000 / gpu_tuning_memory_clocks=none / gpu_tuning_power_limit_w=0: clocks are "
     "\"min,max\" (min not above max)"),
    # a token written alone into its 0600 file: a trailing backslash or a newline is refused, its value never shown
    ({"model_hf_token": "hf_SecretValueOfTheTest\\", "model_revision": "0" * 40},
     "model_hf_token holds whitespace, a newline, a backslash"),
    # TORCH_CUDA_ARCH_LIST in the build's environment: refused in the first play, not only in the build's preflight
    ({"vllm_install_arch_list": "8.9;sm_90", "model_revision": "0" * 40},
     "vllm_install_arch_list=\"8.9;sm_90\": give the GPUs' compute capabilities as TORCH_CUDA_ARCH_LIST"),
    # monitoring: a choice, a duration that lands on Prometheus's command line, a watched path of the disk alert
    ({"monitoring_prometheus": "remote", "model_revision": "0" * 40},
     "monitoring_prometheus must be one of: managed, external"),
    ({"monitoring_retention": "15 days", "model_revision": "0" * 40},
     "monitoring_retention must be a Prometheus duration"),
    ({"monitoring_alert_disk_paths": ["/srv/models", "data"], "model_revision": "0" * 40},
     "monitoring_alert_disk_paths item data='data' is not an absolute path"),
]
# Inputs whose values must never reach the output, whatever is refused.
SECRETS = ("model_hf_token", "vllm_service_api_key", "vllm_service_hf_token")


@pytest.mark.parametrize("extra,words", FIRST_PLAY, ids=["first-play-%d" % i for i in range(len(FIRST_PLAY))])
def test_site_refuses_bad_input_in_its_first_play(tmp_path, extra, words):
    """The real site playbook, a real run (not --check) with no GPU and no model: the input checks stop it in
    the first play, 0 changed. `--tags none-such` keeps every role's work out of it even if a check were lost;
    the checks are tagged `always`, so they run whatever tags are chosen."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("vllm_hosts:\n  hosts:\n    localhost:\n      ansible_connection: local\n"
                         "      ansible_python_interpreter: %s\n" % sys.executable)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".cache" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), str(ROOT / "playbooks" / "site.yml"),
         "--tags", "none-such", "-e", json.dumps(dict({"llmhost_stack": "current"}, **extra))],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert words in " ".join(out.split()), out[-3000:]
    plays = [line for line in out.splitlines() if line.startswith("PLAY [")]
    assert len(plays) == 1 and "before changing anything" in plays[0], plays
    assert "changed=0" in out
    for name in set(SECRETS) & set(extra):
        assert extra[name].strip("\\") not in out, "the value of %s is shown" % name


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
