"""A wrong type or choice in one line (module_utils/input_types.py), judged by Ansible's own validator."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.type_errors import type_errors
from ansible_collections.llmhost.vllm.plugins.module_utils import input_types

OPTIONS = {
    "x_port": [{"type": "int", "default": 8000}],
    "x_ok": [{"type": "bool", "default": False}],
    "x_mode": [{"type": "str", "choices": ["a", "b"], "default": "a"}],
    "x_names": [{"type": "list", "elements": "str", "default": []}],
    "x_clients": [{"type": "list", "elements": "dict", "default": [],
                   "options": {"name": {"type": "str", "required": True}, "key": {"type": "str", "no_log": True}}}],
    "x_token": [{"type": "int", "no_log": True, "default": 0}],
    "x_ratio": [{"type": "float", "default": 0.9}],
}


@pytest.mark.parametrize("name,value,line", [
    ("x_port", "abc", "x_port: got 'abc' (a string); needs a whole number"),
    ("x_port", [1], "x_port: got [1] (a list); needs a whole number"),
    ("x_ok", "perhaps", "x_ok: got 'perhaps' (a string); needs true or false"),
    ("x_mode", "c", "x_mode must be one of: a, b; got 'c' (a string)"),
    ("x_clients", "alice", "x_clients: got 'alice' (a string); needs a list of mappings"),
    ("x_clients", [{"key": "k"}], "x_clients: missing required arguments: name found in x_clients"),
    ("x_ratio", {"a": 1}, "x_ratio: got {'a': 1} (a mapping); needs a number"),
])
def test_a_wrong_value_is_one_line_with_what_it_got_and_needs(name, value, line):
    assert input_types.errors({name: value}, OPTIONS) == [line]


@pytest.mark.parametrize("name,value", [
    ("x_port", 8001), ("x_port", "8001"), ("x_ok", True), ("x_ok", "yes"), ("x_mode", "b"), ("x_names", ["a"]),
    ("x_clients", [{"name": "alice", "key": "k"}]), ("x_ratio", 0.5), ("x_ratio", 1), ("unknown_var", object()),
])
def test_what_ansible_takes_passes(name, value):
    assert input_types.errors({name: value}, OPTIONS) == []


def test_a_secret_s_value_is_never_shown():
    assert input_types.errors({"x_token": "hf_Secret"}, OPTIONS) == ["x_token: got a string; needs a whole number"]


def test_one_line_however_many_entry_points_declare_it():
    options = {"x_port": OPTIONS["x_port"] * 2}
    assert len(input_types.errors({"x_port": "abc"}, options)) == 1


def test_the_collection_s_own_specs_are_read():
    got = type_errors({"vllm_install_build_poll": "abc", "gateway_port": 443, "kernel_reboot_ok": "perhaps"})
    assert got == ["kernel_reboot_ok: got 'perhaps' (a string); needs true or false",
                   "vllm_install_build_poll: got 'abc' (a string); needs a whole number"]


def test_a_value_that_does_not_template_is_left_to_its_role():
    class Lazy(dict):
        def __getitem__(self, key):
            raise RuntimeError("undefined")
    assert type_errors(Lazy(vllm_install_build_poll="abc")) == []


# One reading of every value: what Ansible's validator takes but a role would read otherwise.
@pytest.mark.parametrize("name,value,needs", [
    ("x_ok", "True ", "true or false (a real boolean, or exactly one of yes/no, true/false, on/off, 1/0)"),
    ("x_ok", "y", "true or false (a real boolean"),
    ("x_ok", "t", "true or false (a real boolean"),
    ("x_ok", 1.0, None),
    ("x_ok", "Yes", None),
    ("x_ok", "off", None),
    ("x_port", " 9090", "a whole number (digits only: no spaces, no decimal point)"),
    ("x_port", 8080.0, "a whole number (digits only"),
    ("x_port", "8080.0", "a whole number (digits only"),
    ("x_port", "-1", None),
    ("x_ratio", "nan", "a finite number (not NaN, not infinity)"),
    ("x_ratio", float("inf"), "a finite number"),
    ("x_ratio", "-Infinity", "a finite number"),
    ("x_ratio", "0.95", None),
])
def test_a_value_the_spec_takes_but_a_role_would_read_otherwise_is_refused(name, value, needs):
    got = input_types.errors({name: value}, OPTIONS)
    if needs is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith("%s: got " % name) and needs in got[0], got


@pytest.mark.parametrize("value", ["True ", " yes", "y", "t", "n", "f"])
def test_the_bool_words_are_those_both_readings_share(value):
    """The spec's reading (convert_bool.boolean) and the roles' `| bool` must agree on every word allowed."""
    from ansible.module_utils.parsing.convert_bool import boolean
    from ansible.plugins.filter.core import to_bool
    for word in input_types.BOOL_WORDS:
        assert boolean(word) is to_bool(word)
        assert boolean(word.upper()) is to_bool(word.upper())
    assert input_types.errors({"x_ok": value}, OPTIONS)
