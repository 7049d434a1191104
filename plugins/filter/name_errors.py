# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: Names that become a path part or a unit name."""

from __future__ import annotations

DOCUMENTATION = r"""
name: name_errors
short_description: Names that become one path part or a systemd unit name
version_added: 0.1.0
description:
  - A path part is letters, digits and C(. _ - + @), starting with a letter or digit (so never C(.), C(..) or C(/)).
  - A unit name follows systemd.unit(5) and ends in a unit type such as C(.service); a unit prefix is the part
    before a template's C(@); an environment name is letters, digits and C(_), not starting with a digit.
  - A source (a package index, a find-links location, a git mirror) is a URL or an absolute path with no whitespace,
    quote, C($), backtick or backslash, so that it stays one value in the config file it is written to.
  - A host is a host name or an IP address; a user is a portable user or group name.
  - Debian package names, versions and pin patterns (a name, a glob or a C(/regex/)) follow Debian policy, so that
    they stay one token in an apt pin, a dpkg hold and the unattended-upgrades blacklist.
  - An argument has no whitespace, quote, C($), backtick or backslash, as it becomes one word of the command line of the unit.
  - A value may be a list, and then each item is checked.
  - One of the input checks of the roles' C(validate.yml) (logic in C(module_utils/value_checks.py)).
options:
  _input:
    description: Variable name to value, or to a list of values.
    type: dict
    required: true
  kind:
    description: What the names become.
    type: str
    choices: [path_part, unit, unit_prefix, env_name, source, host, user, apt_name, apt_version, apt_pattern, arg]
    default: path_part
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse names that would climb out of their folder
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'model_name': model_name} | llmhost.vllm.name_errors }}"
"""

RETURN = r"""
_value:
  description: Sentences naming each bad variable; empty when all are fine.
  type: list
  elements: str
"""

from ansible_collections.llmhost.vllm.plugins.module_utils import value_checks


def name_errors(spec, kind="path_part"):
    return value_checks.name_errors(spec, kind)


class FilterModule:
    """llmhost.vllm input filter name_errors."""

    def filters(self):
        return {"name_errors": name_errors}
