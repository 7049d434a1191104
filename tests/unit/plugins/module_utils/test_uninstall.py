"""What an uninstall removes (module_utils/uninstall.py): the user's choices per kind, the rule that keeps a
folder not named as the collection's, the order of folders, the units systemd knows and the holds a role set."""
from pathlib import Path

import jinja2
import pytest
from ansible_collections.llmhost.vllm.plugins.filter.uninstall_plan import uninstall_plan
from ansible_collections.llmhost.vllm.plugins.module_utils import uninstall
from ansible_collections.llmhost.vllm.plugins.modules.remove_paths import HostFiles as Files
from ansible.errors import AnsibleFilterError
from ansible.plugins.filter.core import FilterModule as CoreFilters
from ansible.plugins.test.core import TestModule as CoreTests

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "uninstall"
FOOTPRINT = {
    "units": ["vllm@0.service"], "masked": ["apt-daily.timer"], "paths": ["/etc/systemd/system/vllm@.service"],
    "owned_dirs": ["/opt/llmhost/vllm", "/home/me/.cache/huggingface"], "folders": ["/opt/llmhost", "/etc", "/opt/llmhost/a/b"],
    "users": ["llmhost-gpu-exporter"], "groups": ["llmhost-gpu-exporter"],
    "models": ["/srv/llmhost/models/Qwen2.5-7B-Instruct"], "model_users": ["vllm"], "model_groups": ["vllm"],
    "reports": ["/var/lib/llmhost/bench"], "hold_records": ["/etc/apt/apt.conf.d/51llmhost-kernel-unattended-upgrades"],
    "hold_files": ["/etc/apt/preferences.d/60-llmhost-nvidia-driver"], "packages": ["nginx"],
    "package_files": ["/etc/apt/preferences.d/llmhost-nginx"],
}
NONE = {"models": False, "reports": False, "holds": False, "packages": False}


@pytest.mark.parametrize("flag,goes", [
    (None, set()),
    ("models", {"/srv/llmhost/models/Qwen2.5-7B-Instruct", "vllm"}),
    ("reports", {"/var/lib/llmhost/bench"}),
    ("holds", {"/etc/apt/apt.conf.d/51llmhost-kernel-unattended-upgrades", "/etc/apt/preferences.d/60-llmhost-nvidia-driver"}),
    ("packages", {"nginx", "/etc/apt/preferences.d/llmhost-nginx"}),
])
def test_each_choice_adds_its_kinds_and_nothing_else(flag, goes):
    base = uninstall.plan(FOOTPRINT, NONE)
    plan = uninstall.plan(FOOTPRINT, dict(NONE, **({flag: True} if flag else {})))
    added = {item for key in plan for item in plan[key] if item not in base[key] and key != "kept"}
    assert added == goes
    assert base["units"] == ["vllm@0.service"] and base["unmask"] == ["apt-daily.timer"]
    assert base["users"] == ["llmhost-gpu-exporter"] and base["groups"] == ["llmhost-gpu-exporter"]


def test_a_folder_not_named_as_the_collections_is_kept_and_named():
    plan = uninstall.plan(FOOTPRINT, dict(NONE, reports=True))
    assert "/opt/llmhost/vllm" in plan["paths"] and "/var/lib/llmhost/bench" in plan["paths"]
    assert "/home/me/.cache/huggingface" not in plan["paths"]
    assert plan["kept"] == ["/home/me/.cache/huggingface (not named as the collection's: remove it yourself if it is)"]


@pytest.mark.parametrize("path,named", [("/var/cache/vllm", True), ("/var/tmp/llmhost-vllm-build", True),
                                        ("/etc/nginx/llmhost-gateway", True), ("/srv/models", False),
                                        ("/vllm", False), ("/home/vllm-user/data", True), ("/root/.cache/huggingface", False)])
def test_collection_named(path, named):
    assert uninstall.collection_named(path) is named


def test_folders_go_deepest_first_and_never_a_system_folder():
    assert uninstall.plan(FOOTPRINT, NONE)["folders"] == ["/opt/llmhost/a/b", "/opt/llmhost"]


@pytest.mark.parametrize("footprint,error", [
    ({"unit": ["x"]}, "unknown kind 'unit'"),
    ({"paths": "/etc/x"}, "paths is not a list of non-empty strings"),
    ({"paths": [""]}, "paths is not a list of non-empty strings"),
])
def test_a_malformed_footprint_is_refused_by_the_filter(footprint, error):
    with pytest.raises(AnsibleFilterError, match=error):
        uninstall_plan(footprint, NONE)


def test_units_systemd_knows_from_a_real_systemctl_show():
    shown = (FIXTURES / "systemctl-show.txt").read_text()
    assert uninstall.loaded_units(shown) == ["vllm@0.service", "vllm@1.service", "llmhost-gpu-exporter.service"]


def test_a_failed_unit_is_named_also_once_its_file_went():
    """systemd keeps a unit that failed listed (not-found, failed) after its file is removed, until reset-failed."""
    shown = (FIXTURES / "systemctl-show.txt").read_text() + (
        "\nId=vllm@2.service\nLoadState=not-found\nActiveState=failed\nUnitFileState=\n")
    assert uninstall.loaded_units(shown, "failed") == ["vllm@2.service"]
    assert "vllm@2.service" in uninstall.loaded_units(shown)
    assert uninstall.loaded_units((FIXTURES / "systemctl-show.txt").read_text(), "failed") == []


def test_the_held_packages_are_read_back_from_the_record_the_hold_wrote():
    template = (ROOT / "roles" / "_common" / "templates" / "unattended-upgrades.j2").read_text()
    env = jinja2.Environment()
    env.tests.update(CoreTests().tests())
    env.filters.update(CoreFilters().filters())
    record = env.from_string(template).render(
        ansible_managed="managed", _common_owner="kernel", _common_hold=["linux-generic-hwe-22.04", "linux-image-6.5.0-45-generic"],
        __common_patterns=["linux-generic-hwe-22.04"])
    assert uninstall.held_packages([record, "", None]) == ["linux-generic-hwe-22.04", "linux-image-6.5.0-45-generic"]


def _tree(tmp_path):
    home = tmp_path / "opt" / "llmhost"
    (home / "vllm" / "venv" / "bin").mkdir(parents=True)
    (home / "vllm" / "install-stamp.json").write_text("{}")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "keep.txt").write_text("the user's")
    (home / "vllm" / "venv" / "link").symlink_to(tmp_path / "elsewhere")
    return home


@pytest.mark.parametrize("check", [True, False])
def test_paths_go_whole_and_folders_once_empty_in_check_mode_too(tmp_path, check):
    home = _tree(tmp_path)
    (tmp_path / "etc" / "llmhost").mkdir(parents=True)
    (tmp_path / "etc" / "llmhost" / "notes").write_text("the user's")
    removed, kept = uninstall.remove_all([str(home / "vllm")], [str(home), str(tmp_path / "etc" / "llmhost")], check, Files)
    assert removed == [str(home / "vllm"), str(home)]
    assert kept == ["%s still holds notes" % (tmp_path / "etc" / "llmhost")]
    assert (tmp_path / "elsewhere" / "keep.txt").read_text() == "the user's", "a link inside is not followed"
    assert home.exists() is check


def test_a_second_removal_removes_nothing(tmp_path):
    home = _tree(tmp_path)
    assert uninstall.remove_all([str(home / "vllm")], [str(home)], False, Files)[0]
    assert uninstall.remove_all([str(home / "vllm")], [str(home)], False, Files) == ([], [])
