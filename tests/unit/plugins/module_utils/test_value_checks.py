"""Role inputs by class: ranges, lists, names (what validate.yml of every role asks)."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.list_errors import list_errors
from ansible_collections.llmhost.vllm.plugins.filter.name_errors import name_errors
from ansible_collections.llmhost.vllm.plugins.filter.range_errors import range_errors


def test_ranges():
    assert range_errors({"p": [8000, 1024, 65535], "t": [0, 0, 64], "n": ["12", 1, None], "u": [0.5, 0.1, 0.98]}) == []
    assert range_errors({"p": [65536, 1024, 65535], "t": [-1, 0, 64], "n": ["x", 1, None], "b": [True, 0, 1]}) == [
        "b=True must be a number from 0 to 1", "n=x must be a number from 1 up",
        "p=65536 must be a number from 1024 to 65535", "t=-1 must be a number from 0 to 64"]


def test_nan_and_infinity_are_no_numbers():
    """NaN passes every < and > check: a range check must refuse it, and infinity where there is no upper bound."""
    assert range_errors({"a": [float("nan"), 0, 1], "b": ["nan", 0, 1], "c": ["inf", 1, None],
                         "d": [float("-inf"), -1, 1]}) == [
        "a=nan must be a number from 0 to 1", "b=nan must be a number from 0 to 1", "c=inf must be a number from 1 up",
        "d=-inf must be a number from -1 to 1"]


def test_lists():
    assert list_errors({"a": [], "b": ["x", "y"], "g": [0, 1]}, unique=["b"], ints=["g"]) == []
    assert list_errors({"a": "quiet splash"}) == ["a must be a list, got str 'quiet splash'"]
    assert list_errors({"g": [0, 0]}, ints=["g"]) == ["g=[0, 0] lists an item twice"]
    assert list_errors({"g": [0, -1]}, ints=["g"]) == ["g=[0, -1] must list GPU indices (whole numbers from 0)"]


@pytest.mark.parametrize("kind,good,bad", [
    ("path_part", ["tiny-qwen", "Qwen2.5-3B@main", "a_b+c"], ["", ".", "..", "../x", "a/b", ".hidden", "a b", "a\nb"]),
    ("unit", ["nvidia-persistenced.service", "llmhost-gpu-tuning.service", "vllm@0.service", "network-online.target"],
     ["x", "x.service\nExecStartPre=+/bin/sh", "a b.service", "x.conf"]),
    ("unit_prefix", ["vllm", "my-vllm_2"], ["../vllm", "vllm@", "v llm", ""]),
    ("env_name", ["OMP_NUM_THREADS", "_X"], ["1X", "A-B", "A B", "A\nB"]),
    ("source", ["https://user:p%40ss@mirror.example/simple", "file:///srv/wheels", "/srv/wheels", "http://pypi.lan/simple",
                "HTTPS://Mirror.example/x"],
     ["ssh://git@h/x.git", "ftp://mirror.example/pub", "gopher://h/x", "git://h/x.git", "", "mirror.example/simple",
      "https://m/simple\ntrusted-host = evil", "https://m/simple ", "https://m/$HOME",
      "/srv/a b", "https://m/\"x", "https://m/\\x", "https://m/`id`"]),
    ("host", ["127.0.0.1", "::1", "::", "0.0.0.0", "gpu-1.lan", "fe80::1"], ["127.0.0.1\nLD_PRELOAD=/x.so", "a b", "-x", ""]),
    ("loopback", ["127.0.0.1", "127.1.2.3", "::1", "[::1]"], ["localhost", "0.0.0.0", "10.0.0.1", "::", "127.0.0.1 ", ""]),
    ("user", ["vllm", "_svc", "llm-host"], ["vllm\nroot", "Vllm", "a b", "1a", "x" * 33]),
    ("apt_name", ["linux-image-6.5.0-41-generic", "libstdc++6", "cuda-toolkit-12-1"],
     ["Cuda", "a b", "cuda\n", "-x", "x"]),
    ("apt_version", ["535.129.03-0ubuntu1", "1:2.3~rc1+dfsg-1", "6.5.0-41-generic", "6.5.0-41.41~22.04.2"],
     ["x1", "1 2", "580.159.04\n", "", "1-1\nPin-Priority: 1001"]),
    ("apt_pattern", ["/^(lib)?nvidia-.*-535(-open)?$/", "xserver-xorg-video-nvidia-535", "libnvidia-*"],
     ["a b", "/a b/", "x\"", "/x\n/", "nvidia\nPin: release *"]),
    ("arg", ["--max-num-seqs", "256", "Qwen/Qwen3-4B", "/srv/m"], ["a b", "qwen\nLD_PRELOAD=/x.so", "$HOME", "\"", ""]),
])
def test_names(kind, good, bad):
    assert name_errors({"v": good}, kind) == []
    assert len(name_errors({"v": bad}, kind)) == len(bad)
    assert all(e.startswith("v: ") for e in name_errors({"v": bad}, kind))


@pytest.mark.parametrize("facts,want", [
    ({"virtualization_role": "guest", "virtualization_type": "docker"}, True),
    ({"virtualization_role": "guest", "virtualization_type": "systemd-nspawn"}, True),
    ({"virtualization_role": "guest", "virtualization_type": "kvm"}, False),       # a VM has its own kernel
    ({"virtualization_role": "host", "virtualization_type": "docker"}, False),     # a docker host
    ({}, False), (None, False),
])
def test_in_container_is_decided_in_one_place(facts, want):
    from ansible_collections.llmhost.vllm.plugins.filter.in_container import in_container
    assert in_container(facts) is want


@pytest.mark.parametrize("name", ["LD_PRELOAD", "ld_library_path", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
                                  "PYTHONWARNINGS", "PYTHONBREAKPOINT", "BASH_ENV", "LD_ANYTHING"])
def test_loader_variables_are_refused(name):
    errors = name_errors({"vllm_service_env": [name]}, "not_loader")
    assert len(errors) == 1 and "load code of its choosing" in errors[0]


def test_plain_environment_passes_the_loader_check():
    assert name_errors({"vllm_service_env": ["OMP_NUM_THREADS", "VLLM_LOGGING_LEVEL", "PYTORCH_CUDA_ALLOC_CONF"]},
                       "not_loader") == []
