"""cpulist and affinity-mask conversions."""
import pytest
from ansible_collections.llmhost.vllm.plugins.module_utils import cpus


@pytest.mark.parametrize("text,expected", [
    ("0-3,8", [0, 1, 2, 3, 8]),
    ("0-15,32-47", list(range(16)) + list(range(32, 48))),
    ("169,171,173", [169, 171, 173]),
    ("", []),
    ("N/A", []),
    ("5-2", []),
])
def test_parse_cpulist(text, expected):
    assert cpus.parse_cpulist(text) == expected


def test_format_roundtrip():
    assert cpus.format_cpulist([3, 1, 2, 8, 9, 11]) == "1-3,8-9,11"
    assert cpus.format_cpulist([]) is None


def test_nvml_words_and_sysfs_masks():
    assert cpus.format_cpulist(cpus.words_to_cpus([4294967295, 0])) == "0-31"
    assert cpus.format_cpulist(cpus.words_to_cpus([0, 1])) == "64"
    assert cpus.format_cpulist(cpus.hexmask_to_cpus("ffff0000,0000ffff")) == "0-15,48-63"
    assert cpus.hexmask_to_cpus("zz") == []
