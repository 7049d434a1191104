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
    ("cuda_toolkit", {"cuda_toolkit_state": "present", "cuda_toolkit_package": "cuda"}, "never cuda or cuda-drivers"),
    ("cuda_toolkit", {"cuda_toolkit_state": "present", "cuda_toolkit_package_version": "13.0.1-1"},
     "cuda_toolkit_package_version=13.0.1-1: {repo} (llmhost_stack_nvidia_repo_url) has cuda-toolkit-13-0 at 13.0.2-1 only"),
    ("cuda_toolkit", {"cuda_toolkit_state": "maybe"}, "value of cuda_toolkit_state must be one of: auto, present, skip, got: maybe"),
]


@pytest.fixture(scope="module")
def nvidia_repo(tmp_path_factory):
    """The harness's stand-in of NVIDIA's repository (tests/harness/nvrepo.py), served on a free loopback port."""
    if not (shutil.which("dpkg-deb") and shutil.which("gpg") and shutil.which("dpkg-scanpackages")):
        pytest.skip("dpkg-deb, dpkg-scanpackages and gpg build the test repository")
    out = tmp_path_factory.mktemp("nvrepo")
    subprocess.run([sys.executable, str(ROOT / "tests" / "harness" / "nvrepo.py"), "build", str(out)], check=True,
                   capture_output=True)
    spec = importlib.util.spec_from_file_location("nvrepo", ROOT / "tests" / "harness" / "nvrepo.py")
    nvrepo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nvrepo)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(nvrepo.Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d/debian12/x86_64/" % server.server_address[1]
    server.shutdown()


@pytest.mark.parametrize("role,extra,words", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_bad_input_fails_early_naming_the_variable(request, tmp_path, role, extra, words):
    if not Path("/etc/debian_version").exists():
        pytest.skip("the roles support Debian-family hosts only")
    if role in ("nvidia_driver", "cuda_toolkit"):
        repo = request.getfixturevalue("nvidia_repo")
        efivar = tmp_path / "SecureBoot"
        efivar.write_bytes(bytes([6, 0, 0, 0, 1]))  # attributes, then 1: Secure Boot on
        extra = {k: v.format(repo=repo, secure_boot_on=efivar) if isinstance(v, str) else v for k, v in extra.items()}
        extra.setdefault("llmhost_stack_nvidia_repo_url", repo)
        words = words.format(repo=repo)
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
    assert "changed=0" in out
