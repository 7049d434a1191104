"""console_text: a report prints one line a row whatever the callback's result format."""
import pytest

from ansible_collections.llmhost.vllm.plugins.filter.console_text import console_text

REPORT = "# report\n\n| status | item |\n|---|---|\n| PASS | driver |\n"


@pytest.mark.parametrize("callback, result_format, want", [
    ("default", "yaml", REPORT),                       # the checkout's ansible.cfg: a block, one line a line
    ("ansible.builtin.default", "yaml", REPORT),
    ("default", "json", REPORT.splitlines()),          # an installed collection, no ansible.cfg: a list
    ("minimal", "yaml", REPORT.splitlines()),          # another callback: the default's format says nothing of it
    ("community.general.yaml", "json", REPORT.splitlines()),
])
def test_the_text_where_yaml_makes_a_block_else_its_lines(callback, result_format, want):
    assert console_text(REPORT, callback, result_format) == want


def test_lines_keep_empty_rows_and_drop_the_last_newline():
    assert console_text("a\n\nb\n", "default", "json") == ["a", "", "b"]


def test_left_out_the_callback_and_format_are_read_from_ansibles_configuration(monkeypatch):
    from ansible import constants
    asked = []

    def get(name, plugin_type=None, plugin_name=None):
        asked.append((name, plugin_type, plugin_name))
        return {"DEFAULT_STDOUT_CALLBACK": "default", "result_format": "json"}[name]

    monkeypatch.setattr(constants.config, "get_config_value", get)
    assert console_text(REPORT) == REPORT.splitlines()
    assert asked == [("DEFAULT_STDOUT_CALLBACK", None, None), ("result_format", "callback", "default")]
    assert console_text(REPORT, "default", "yaml") == REPORT       # given: the configuration is not read
    assert len(asked) == 2
