# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation shared by the filters that take a Ray cluster's ports."""

from __future__ import annotations


class ModuleDocFragment:
    """A Ray node's fixed ports, as the ray_cluster role's variables give them."""

    DOCUMENTATION = r"""
options:
  ports:
    description: C(ray_cluster_ports).
    type: dict
    required: true
  workers:
    description: C(ray_cluster_worker_ports), the lowest and highest.
    type: list
    elements: int
    required: true
"""
