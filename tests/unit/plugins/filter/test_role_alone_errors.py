"""role_alone_errors: the first play's type and class checks over one role's own variables, for the role used alone."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.role_alone_errors import role_alone_errors


class Broken(dict):
    """Host variables where one value fails to template (Ansible raises on access): left to the role's own check."""

    def __getitem__(self, name):
        if name == "vllm_service_unit_name":
            raise ValueError("'undefined_thing' is undefined")
        return dict.__getitem__(self, name)


@pytest.mark.parametrize("role,host_vars,want", [
    ("kernel", {"kernel_reboot_ok": " true "}, ["kernel_reboot_ok: got ' true ' (a string)"]),
    ("kernel", {"kernel_reboot_ok": True}, []),
    # another role's variable is that role's to judge, and its own check runs when it runs
    ("kernel", {"gateway_listen_address": "unix"}, []),
    ("gateway", {"gateway_listen_address": "unix"}, ["gateway_listen_address='unix' is not a literal"]),
    ("vllm_service", {"vllm_service_unit_name": "ssh"}, ["vllm_service_unit_name='ssh' does not start with"]),
    ("model", {"model_store": "/dev/shm"}, ["model_store='/dev/shm' is a system folder"]),
    # a wrong type first, alone: the class checks read values as their types say
    ("gateway", {"gateway_listen_address": "unix", "gateway_port": 8080.5}, ["gateway_port: "]),
])
def test_a_role_alone_judges_its_own_variables_as_the_first_play_does(role, host_vars, want):
    got = role_alone_errors(host_vars, role)
    assert len(got) == len(want), got
    assert all(line.startswith(prefix) for line, prefix in zip(got, want)), got


def test_nothing_is_judged_twice_where_the_first_play_ran():
    assert role_alone_errors({"kernel_reboot_ok": " true "}, "kernel", checked=True) == []


def test_a_value_that_fails_to_template_is_left_to_the_roles_own_check():
    host_vars = Broken(vllm_service_unit_name="{{ undefined_thing }}", vllm_service_api_key="abc")
    got = role_alone_errors(host_vars, "vllm_service")
    assert [line.split("=")[0] for line in got] == ["vllm_service_api_key"], got
