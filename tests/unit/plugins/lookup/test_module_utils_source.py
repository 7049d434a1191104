"""The lookup the monitoring role installs the exporter's readers with: the collection's own files, byte for byte,
and nothing outside plugins/module_utils."""
from pathlib import Path

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.llmhost.vllm.plugins.lookup.module_utils_source import LookupModule

MODULE_UTILS = Path(__file__).resolve().parents[4] / "plugins" / "module_utils"


def test_the_text_is_the_files_own():
    got = LookupModule().run(["nvml.py", "pci.py"])
    assert got == [(MODULE_UTILS / "nvml.py").read_text(), (MODULE_UTILS / "pci.py").read_text()]
    assert got[0].endswith("\n")


@pytest.mark.parametrize("name", ["../lookup/module_utils_source.py", "/etc/passwd", "nvml", "none_such.py", ""])
def test_only_a_file_of_module_utils_is_read(name):
    with pytest.raises(AnsibleLookupError, match="is not a file of the collection's plugins/module_utils"):
        LookupModule().run([name])
