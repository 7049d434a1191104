# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation shared by the collection's read-only modules."""

from __future__ import annotations


class ModuleDocFragment:
    """Attributes of a module that only reads the host."""

    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff.
"""

    FACTS = r"""
options: {}
attributes:
  facts:
    support: full
    description: Returns its result under ansible_facts.
"""
