"""vllm_option_errors: the serving plan's option check, as a filter the first play can run."""
import json
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.filter.vllm_option_errors import vllm_option_errors

TABLES = Path(__file__).resolve().parents[4] / "roles" / "vllm_service" / "files" / "vllm-options"


@pytest.fixture(params=["0.6.3", "0.33.0"])
def table(request):
    return json.loads((TABLES / ("%s.json" % request.param)).read_text())


def test_good_options_pass(table):
    assert vllm_option_errors(["--enable-prefix-caching"], table, "vllm_service_extra_args") == []


def test_unknown_and_owned_options_are_named(table):
    errors = vllm_option_errors(["--definitely-not-a-vllm-flag", "--port", "9"], table, "vllm_service_extra_args")
    assert any("--definitely-not-a-vllm-flag is not an option of vllm serve in vLLM %s" % table["vllm_version"] in e
               for e in errors)
    assert any("--port is set by the serving plan; use vllm_service_base_port" in e for e in errors)


def test_bad_shapes_are_refused(table):
    with pytest.raises(AnsibleFilterError, match="vllm_service_extra_args must be a list"):
        vllm_option_errors("--enable-prefix-caching", table, "vllm_service_extra_args")
    with pytest.raises(AnsibleFilterError, match="no 'options'"):
        vllm_option_errors([], {"vllm_version": "x"}, "vllm_service_extra_args")


@pytest.mark.parametrize("wrong,right", [("--max-model-length", "--max-model-len"),
                                         ("--gpu-memory-util", "--gpu-memory-utilization"),
                                         ("--enable-prefix-cashing", "--enable-prefix-caching")])
def test_a_mistyped_option_is_named_with_the_real_one(table, wrong, right):
    errors = vllm_option_errors([wrong, "1"], table, "vllm_service_extra_args")
    said = "%s is not an option of vllm serve in vLLM %s (did you mean %s?)" % (wrong, table["vllm_version"], right)
    assert any(said in e for e in errors), errors


def test_foreign_code_needs_the_opt_in_and_ways_around_the_plan_are_refused():
    from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options
    table = json.loads((TABLES / "0.33.0.json").read_text())
    refused = vllm_options.validate(["--trust-remote-code", "--config", "/etc/x.yaml", "--num-gpu-blocks-override", "4"],
                                    table, "x", refuse_owned=True, allow_foreign=False)
    assert any("--trust-remote-code loads and runs code" in e for e in refused)
    assert any("--config is set by the serving plan" in e for e in refused)
    assert any("--num-gpu-blocks-override is set by the serving plan" in e for e in refused)
    assert vllm_options.validate(["--trust-remote-code"], table, "x", refuse_owned=True, allow_foreign=True) == []
    # an abbreviation argparse would take is no option of the table
    assert "is not an option" in vllm_options.validate(["--max-model"], table, "x")[0]


@pytest.mark.parametrize("args,repeated", [
    (["--max-num-batched-tokens", "4096", "--max-num-batched-tokens=8192"], "--max-num-batched-tokens"),
    (["--async-scheduling", "--no-async-scheduling"], "--async-scheduling"),
    (["--disable-log-stats", "--disable-log-stats"], "--disable-log-stats"),
])
def test_an_option_given_twice_is_refused_by_name(args, repeated):
    table = json.loads((TABLES / "0.33.0.json").read_text())
    assert vllm_option_errors(args, table, "vllm_service_extra_args") == [
        "vllm_service_extra_args: %s is given more than once (vLLM keeps only the last, silently); give it once"
        % repeated]


def test_an_option_vllm_appends_to_may_be_given_twice(table):
    args = ["--middleware", "a.b", "--middleware", "c.d", "--enable-prefix-caching"]
    assert vllm_option_errors(args, table, "vllm_service_extra_args") == []
