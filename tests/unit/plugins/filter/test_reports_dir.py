"""llmhost_reports_dir: where the reports land on the controller."""
import os

import pytest

from ansible_collections.llmhost.vllm.plugins.filter.reports_dir import reports_dir
from ansible_collections.llmhost.vllm.plugins.module_utils.paths import controller_dir


@pytest.mark.parametrize("value,want", [
    (None, "/home/me/lab/reports"),
    ("", "/home/me/lab/reports"),
    ("out", "/home/me/lab/out"),
    ("../shared/reports/", "/home/me/shared/reports"),
    ("/srv/reports", "/srv/reports"),
    (" /srv/reports ", "/srv/reports"),
])
def test_a_relative_folder_is_taken_from_where_ansible_playbook_runs(value, want):
    assert controller_dir(value, "/home/me/lab") == want


def test_home_is_expanded(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert controller_dir("~/reports", "/elsewhere") == "/home/someone/reports"


def test_the_filter_reads_the_controller_s_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert reports_dir(None) == os.path.join(str(tmp_path), "reports")
