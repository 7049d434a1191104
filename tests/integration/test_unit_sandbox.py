"""The vllm@.service sandbox, read the way systemd reads it: the syscall filter it compiles and the device
nodes its DeviceAllow= names reach on a real driver's /proc/devices (tests/device/unit_sandbox.py holds
the logic; the device proof applies it to real vLLM on a lent GPU)."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "vllm_service"
DEVICE = ROOT / "tests" / "fixtures" / "hosts" / "h200x1-device"

spec = importlib.util.spec_from_file_location("unit_sandbox", ROOT / "tests" / "device" / "unit_sandbox.py")
unit_sandbox = importlib.util.module_from_spec(spec)
spec.loader.exec_module(unit_sandbox)


def render_unit():
    """The role's unit template rendered with its defaults (the private names as vars/main.yml gives them)."""
    values = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    values.update(ansible_managed="managed", __vllm_service_user="vllm", vllm_service_venv_path="/opt/llmhost/vllm/venv",
                  __vllm_service_secrets_file="/etc/llmhost/vllm/secrets.env")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string((ROLE / "templates" / "vllm@.service.j2").read_text()).render(**values)


def service_values(key):
    return [v for k, v in unit_sandbox.service_lines(render_unit()) if k == key]


def test_allow_list_semantics_follow_systemd():
    groups = {"@default": ["read", "exit"], "@system-service": ["read", "open", "nice", "setrlimit", "mount"],
              "@resources": ["nice", "setrlimit"], "@mount": ["mount"]}

    def expand(name):
        return groups.get(name, [name])
    got = unit_sandbox.effective_syscalls(["@system-service", "~@resources @mount", "setrlimit"], expand)
    assert got == {"read", "exit", "open", "setrlimit"}
    with pytest.raises(ValueError):
        unit_sandbox.effective_syscalls(["~@mount"], expand)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze (Debian's systemd)")
def test_the_unit_filter_allows_what_torch_needs_and_denies_the_rest():
    calls = unit_sandbox.effective_syscalls(service_values("SystemCallFilter"), unit_sandbox.systemd_expand)
    needed = {"sched_setaffinity", "mbind", "set_mempolicy", "setrlimit", "sched_setscheduler", "mmap", "futex",
              "clone", "ioctl", "socket", "memfd_create", "execve"}
    assert needed <= calls, needed - calls
    denied = {"setpriority", "sched_setparam", "sched_setattr", "ioprio_set", "mount", "reboot", "init_module", "ptrace", "ioperm", "swapon"}
    assert not denied & calls, denied & calls
    assert service_values("SystemCallErrorNumber") == ["EPERM"]


def test_every_relaxation_says_which_call_needs_it():
    text = render_unit()
    given_back = service_values("SystemCallFilter")[-1].split()
    comment = text.split("Given back from @resources", 1)[1].split("SystemCallFilter=", 1)[0]
    for call in given_back:
        assert call in comment, "%s is given back without a comment naming what calls it" % call


def _nodes(listing):
    """(name, major) of the character nodes in an `ls -l /dev/nvidia*` capture."""
    out = []
    for line in listing.splitlines():
        parts = line.split()
        if line.startswith("c") and len(parts) >= 10:
            out.append((parts[-1], int(parts[4].rstrip(","))))
    return out


def test_device_allow_reaches_every_nvidia_node_of_a_real_driver():
    """/proc/devices and /dev/nvidia* as captured on a lent H200 (driver 580: 195 is 'nvidia' and 'nvidiactl'),
    by tests/device/sandbox_proof.sh, which then served real vLLM with exactly these nodes."""
    allowed = unit_sandbox.allowed_majors(service_values("DeviceAllow"), (DEVICE / "proc-devices.txt").read_text())
    nodes = _nodes((DEVICE / "dev-nvidia.txt").read_text())
    assert {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"} <= {name for name, _major in nodes}
    missing = [(n, m) for n, m in nodes if m not in allowed]
    assert not missing, "nodes DeviceAllow does not reach: %s" % missing


def test_device_allow_reaches_the_535_drivers_major():
    """Drivers before 550.40 name major 195 'nvidia-frontend' in /proc/devices (NVIDIA's 550.40 release notes,
    quoted in NVIDIA/nvidia-container-toolkit#324): the seed profile's 535 needs char-nvidia-frontend. The
    H200 capture with that one line as a 535 driver writes it (a derived text, labelled so)."""
    real = (DEVICE / "proc-devices.txt").read_text()
    derived = "\n".join(line for line in real.splitlines() if line.strip() not in ("195 nvidia", "195 nvidiactl"))
    derived = derived.replace("Character devices:", "Character devices:\n195 nvidia-frontend")
    allowed = unit_sandbox.allowed_majors(service_values("DeviceAllow"), derived)
    assert 195 in allowed
    without = [v for v in service_values("DeviceAllow") if v.split()[0] != "char-nvidia-frontend"]
    assert 195 not in unit_sandbox.allowed_majors(without, derived)   # the test can fail


def test_a_device_allow_name_that_matches_nothing_is_caught():
    real = (DEVICE / "proc-devices.txt").read_text()
    assert unit_sandbox.allowed_majors(["char-nvidia-typo rw"], real) == set()


def test_spec_uses_systemd_when_present(tmp_path):
    if shutil.which("systemd-analyze") is None or shutil.which("systemctl") is None:
        pytest.skip("needs Debian's systemd")
    unit = tmp_path / "vllm@.service"
    unit.write_text(render_unit())
    out = subprocess.run(["python3", str(ROOT / "tests" / "device" / "unit_sandbox.py"), "spec", str(unit)],
                         capture_output=True, text=True, check=True).stdout
    made = yaml.safe_load(out)
    assert "sched_setaffinity" in made["allow"] and "setpriority" not in made["allow"]
    assert made["device_allow"][:2] == ["char-nvidiactl", "char-nvidia-frontend"] and made["user"] == "vllm"
    assert made["environment"]["TRITON_CACHE_DIR"] == "/var/cache/vllm/triton"
