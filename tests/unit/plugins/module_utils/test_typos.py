"""Mistyped variables and tags (module_utils/typos.py): what is known, what is refused, what is suggested."""
from pathlib import Path

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import typos

SPEC = {"argument_specs": {"main": {"options": {"vllm_service_max_model_len": {}, "vllm_service_api_key": {}}},
                           "validate": {"options": {"vllm_service_max_model_len": {}}}}}
TASKS = [{"name": "a", "ansible.builtin.set_fact": {"vllm_service_venv_path": "/x", "cacheable": False},
          "tags": ["vllm_service", "vllm_service_configure"]},
         {"block": [{"name": "b", "register": "vllm_service_ready", "tags": "verify"}],
          "rescue": [{"set_fact": {"__vllm_service_private": 1}}]}]
PLAYBOOK = [{"hosts": "all", "roles": [{"role": "llmhost.vllm.gpu_tuning", "tags": ["tuning", "gpu_tuning"]}]}]
KNOWN = typos.known_names([SPEC], [{"vllm_service_unit_name": "vllm", "llmhost_uninstall_packages": True}], [TASKS, PLAYBOOK])
PREFIXES = typos.role_prefixes(["vllm_service", "gpu_tuning", "_common", "model"])


def test_the_prefixes_are_the_public_roles_and_the_play_wide_switches():
    assert PREFIXES == ["gpu_tuning_", "llmhost_uninstall_", "model_", "vllm_service_"]


def test_known_names_come_from_specs_defaults_set_facts_registers_and_every_tag():
    assert {"vllm_service_max_model_len", "vllm_service_api_key", "vllm_service_unit_name", "vllm_service_venv_path",
            "vllm_service_ready", "__vllm_service_private"} <= KNOWN["vars"]
    assert "cacheable" not in KNOWN["vars"]
    assert {"vllm_service", "vllm_service_configure", "verify", "tuning", "gpu_tuning", "always", "never"} <= KNOWN["tags"]


@pytest.mark.parametrize("name,words", [
    ("vllm_service_max_model_length", "vllm_service_max_model_length is not a variable of any role of llmhost.vllm "
                                      "(did you mean vllm_service_max_model_len?)"),
    ("vllm_service_api_kee", "(did you mean vllm_service_api_key?)"),
    ("model_revison", "model_revison is not a variable of any role of llmhost.vllm; Ansible would ignore it"),
    # kept packages the user meant to keep would be purged
    ("llmhost_uninstall_package", "(did you mean llmhost_uninstall_packages?)"),
])
def test_a_prefixed_name_no_role_knows_is_refused_with_the_nearest_spelling(name, words):
    errors = typos.var_errors([name], KNOWN["vars"], PREFIXES)
    assert len(errors) == 1 and words in errors[0], errors


@pytest.mark.parametrize("name", ["vllm_service_max_model_len", "vllm_service_venv_path", "ansible_host", "my_var",
                                  "llmhost_stack", "vllm_serviceX", "_common_venv_path"])
def test_known_names_and_names_of_no_role_pass(name):
    assert typos.var_errors([name], KNOWN["vars"], PREFIXES) == []


def test_tags_nobody_carries_are_refused_under_both_options():
    assert typos.tag_errors(["all"], [], KNOWN["tags"]) == []
    # what Molecule passes to every run, and to its idempotence run
    assert typos.tag_errors(["all"], ["molecule-notest", "notest", "molecule-idempotence-notest"], KNOWN["tags"]) == []
    assert typos.tag_errors(["vllm_serivce", "tuning"], ["verfy"], KNOWN["tags"]) == [
        "--tags vllm_serivce: no task of llmhost.vllm carries this tag (did you mean vllm_service?)",
        "--skip-tags verfy: no task of llmhost.vllm carries this tag (did you mean verify?)"]


def test_a_word_far_from_every_name_gets_no_guess():
    assert typos.closest("zzzz", ["vllm_service"]) is None


# Beyond a role's prefix: a mistyped prefix, a name near a declared one, a word left out (the real collection's names).

@pytest.mark.parametrize("name,meant", [
    ("vllm_serivce_port", "vllm_service_base_port"),     # the prefix mistyped, and a word left out
    ("gatway_port", "gateway_port"),
    ("llmhost_stak", "llmhost_stack"),                   # near a declared name, no role's prefix
    ("vllm_service_port", "vllm_service_base_port"),     # not vllm_service_host
    ("model_revison", "model_revision"),
])
def test_a_typo_in_any_prefix_is_refused_with_the_name_meant(name, meant):
    from ansible_collections.llmhost.vllm.plugins.filter.typo_errors import typo_errors
    errors = typo_errors([name])
    assert len(errors) == 1 and "%s is not a variable of any role of llmhost.vllm (did you mean %s?)" % (name, meant) \
        in errors[0], errors


def _names_set_in(node, found):
    """Every variable a Molecule scenario's inventory or vars set (host_vars, group_vars, vars)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("host_vars", "group_vars") and isinstance(value, dict):
                for block in value.values():
                    found.update(block if isinstance(block, dict) else {})
            _names_set_in(value, found)
    elif isinstance(node, list):
        for item in node:
            _names_set_in(item, found)
    return found


def test_names_a_user_or_our_own_inventories_set_on_purpose_pass():
    """No false alarm: the example inventory (its vaulted secrets included), every scenario's variables, the
    play-wide switches, Ansible's own names."""
    import yaml
    from ansible_collections.llmhost.vllm.plugins.filter.typo_errors import typo_errors
    root = Path(__file__).resolve().parents[4]
    names = {"vault_vllm_key", "vault_alice_key", "my_var", "ansible_host", "inventory_hostname", "group_names",
             "omit", "playbook_dir", "llmhost_reports_dir", "llmhost_allow_unknown_vars"}
    for path in root.glob("inventories/*/group_vars/*.yml"):
        names.update(yaml.safe_load(path.read_text()) or {})
    for path in root.glob("molecule/*/molecule.yml"):
        _names_set_in(yaml.safe_load(path.read_text()), names)
    assert len(names) > 50
    assert typo_errors(sorted(names)) == []
