# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: inputs that cross roles, judged by their class."""

from __future__ import annotations

DOCUMENTATION = r"""
name: input_class_errors
short_description: Refuse unit names, URLs, advertised addresses and folders by their class, whatever role reads them
version_added: 0.1.0
description:
  - A unit name the user chooses starts with the collection's prefix (C(llmhost-) or C(vllm)).
  - A URL written where the host's users read it (apt's sources, a command line, an environment) holds no credentials.
  - An address a service binds (I(gateway_listen_address), I(monitoring_listen_address)) is a literal address (IPv4
    for monitoring's), never a name resolved only when the service starts.
  - An address other hosts dial (I(vllm_service_advertise_address)) is not loopback, C(localhost) or every address, unless
    I(vllm_service_advertise_loopback) says the hosts share one network namespace.
  - A folder the roles create, chown or chmod is plain, absolute and never a shared or system folder (C(/dev/shm),
    C(/etc/ssl/private), a folder of C(PATH), systemd's), whichever role or playbook takes it.
  - A user or group a service runs as (I(vllm_install_user), I(vllm_service_user), ...) is never C(root).
  - A log file a service appends to as root (I(gateway_access_log)) is the collection's own, under C(/var/log), ending in
    C(.log), its name or a folder of it starting with C(llmhost).
  - A folder the roles make (every declared path, and I(model_name)) does not end as their working folders do
    (C(.partial), C(.previous), C(.old)).
  - Only values the host sets are read; the roles' defaults are the collection's own. Logic in
    C(module_utils/input_classes.py).
options:
  _input:
    description: The host's variables (C(hostvars[inventory_hostname])).
    type: dict
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Refuse inputs their class refuses
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ hostvars[inventory_hostname] | llmhost.vllm.input_class_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused variable, naming it; credentials' URLs are not shown.
  type: list
  elements: str
"""

import os

from ansible_collections.llmhost.vllm.plugins.module_utils import input_classes, input_types
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import host_values, load_yaml, role_files

COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def input_class_errors(host_vars, collection_dir=COLLECTION_DIR):
    options = input_types.options_by_name(load_yaml(role_files(collection_dir, "meta", "argument_specs.yml")))
    folders = input_classes.folder_names(options)
    return input_classes.errors(host_values(host_vars, sorted(input_classes.judged() | folders)), folders)


class FilterModule:
    """llmhost.vllm input-class filters."""

    def filters(self):
        return {"input_class_errors": input_class_errors}
