"""The first play's one list: names and types first, then what reads the values as their types say."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.site_input_errors import site_input_errors

CASES = [
    # (host's values, allow_unknown, words every error list must hold, words it must not)
    ({}, False, [], []),
    ({"vllm_service_max_model_length": 8192}, False, ["vllm_service_max_model_length"], []),
    ({"vllm_service_max_model_length": 8192}, True, [], ["vllm_service_max_model_length"]),
    ({"gateway_port": "80x"}, False, ["gateway_port"], []),
    # A clash is reported once the types pass, and not while a name is wrong.
    ({"monitoring_prometheus_port": 9100}, False, ["monitoring_prometheus_port=9100"], []),
    ({"monitoring_prometheus_port": 9100, "gateway_prot": 1}, False, ["gateway_prot"], ["9100"]),
    ({"monitoring_prometheus_port": 9100, "gateway_port": "x"}, False, ["gateway_port"], ["9100"]),
    ({"vllm_service_unit_prefix": "systemd-journald"}, False, ["vllm_service_unit_prefix"], []),
]


@pytest.mark.parametrize("host_vars, allow, present, absent", CASES)
def test_site_input_errors(host_vars, allow, present, absent):
    errors = site_input_errors(host_vars, [], [], allow)
    text = " ".join(errors)
    assert bool(errors) == bool(present), errors
    for words in present:
        assert words in text, errors
    for words in absent:
        assert words not in text, errors
