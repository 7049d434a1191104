# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts about the host that several roles act on, decided in one place."""

from __future__ import annotations

# Ansible's virtualization_type values for a guest that shares the host's kernel: its kernel,
# bootloader, modules and initramfs are the host's business.
CONTAINER_TYPES = frozenset(["docker", "podman", "container", "containerd", "lxc", "systemd-nspawn", "openvz"])


def in_container(facts):
    """True when Ansible's facts describe a container guest (it runs the host's kernel)."""
    facts = facts or {}
    return facts.get("virtualization_role") == "guest" and facts.get("virtualization_type") in CONTAINER_TYPES
