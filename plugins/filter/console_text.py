# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a report as the console callback shows it best, one line a row."""

from __future__ import annotations

DOCUMENTATION = r"""
name: console_text
short_description: A multi-line report in the form the console callback prints one line a row
version_added: 0.2.0
description:
  - Ansible's default callback prints results as JSON unless C(callback_result_format=yaml) is set (the checkout's
    C(ansible.cfg) sets it; an installed collection does not bring it). JSON prints a string with its newlines
    escaped, all on one line, and a list one item a line; YAML prints a multi-line string as a block, one line a
    line, but quotes and folds the items of a list at 80 columns.
  - Returns the text itself where the callback is the default one with the YAML result format, and the text's lines
    as a list otherwise, so that a report's table reads row by row either way.
options:
  _input:
    description: The report (Markdown).
    type: str
    required: true
  stdout_callback:
    description:
      - The stdout callback in use. Left out, the filter reads it from Ansible's configuration (C(DEFAULT_STDOUT_CALLBACK)),
        as C(lookup('ansible.builtin.config', 'DEFAULT_STDOUT_CALLBACK')) would.
    type: str
  result_format:
    description:
      - The default callback's result format. Left out, the filter reads it from Ansible's configuration (the default
        callback's C(result_format)).
    type: str
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Print the report, one line a row under any callback
  ansible.builtin.debug:
    msg: "{{ report.markdown | llmhost.vllm.console_text }}"

- name: The same, for a callback and format given
  ansible.builtin.debug:
    msg: "{{ report.markdown | llmhost.vllm.console_text('ansible.builtin.default', 'yaml') }}"
"""

RETURN = r"""
_value:
  description: The text (YAML results of the default callback) or the list of its lines (anything else).
  type: raw
"""

DEFAULT_CALLBACKS = ("default", "ansible.builtin.default")


def _configured():
    """The stdout callback and the default callback's result format, as Ansible's configuration says for this run."""
    from ansible import constants  # pylint: disable=import-outside-toplevel  # the controller's, read when asked
    return (constants.config.get_config_value("DEFAULT_STDOUT_CALLBACK"),
            constants.config.get_config_value("result_format", plugin_type="callback", plugin_name="default"))


def console_text(text, stdout_callback=None, result_format=None):
    if stdout_callback is None or result_format is None:
        configured = _configured()
        stdout_callback = configured[0] if stdout_callback is None else stdout_callback
        result_format = configured[1] if result_format is None else result_format
    text = str(text)
    if str(stdout_callback) in DEFAULT_CALLBACKS and str(result_format) == "yaml":
        return text
    return text.splitlines()


class FilterModule:
    """llmhost.vllm console filters."""

    def filters(self):
        return {"console_text": console_text}
