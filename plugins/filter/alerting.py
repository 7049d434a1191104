# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: where the alerts go."""

from __future__ import annotations

DOCUMENTATION = r"""
name: alerting
short_description: Alertmanager's configuration and Prometheus's alerting block from the monitoring role's settings
version_added: 0.1.0
description:
  - C(managed) is an Alertmanager on this host (Prometheus sends to it); C(external), the Alertmanagers at the URLs
    given; C(none), nothing sent.
  - The managed Alertmanager sends to a webhook and by e-mail (through a smarthost, without authentication), each
    optional; the always-firing rule C(LlmhostWatchdog) goes only to its own URL, a dead man's switch.
  - Returns the sentences that refuse settings neither could use, naming each variable.
  - Logic in C(module_utils/alerting.py).
options:
  _input:
    description: I(monitoring_alertmanager), one of C(managed), C(external), C(none).
    type: str
    required: true
  settings:
    description: C(webhook_url), C(email_to), C(email_from), C(email_smarthost), C(watchdog_url).
    type: dict
    required: true
  listen:
    description: I(monitoring_listen_address).
    type: str
    required: true
  port:
    description: I(monitoring_alertmanager_port).
    type: int
    required: true
  urls:
    description: I(monitoring_alertmanager_urls).
    type: list
    elements: str
    required: true
  prometheus:
    description: I(monitoring_prometheus).
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Settle where the alerts go
  ansible.builtin.set_fact:
    __alerting: >-
      {{ monitoring_alertmanager | llmhost.vllm.alerting(__settings, monitoring_listen_address,
         monitoring_alertmanager_port, monitoring_alertmanager_urls, monitoring_prometheus) }}
"""

RETURN = r"""
_value:
  description: C(errors) (sentences), C(alertmanager) (alertmanager.yml as a mapping, or none), C(prometheus) (the
    alertmanagers block of prometheus.yml), C(reaches_someone) (a receiver is set, or the Alertmanager is external),
    C(said) (one sentence on where the alerts go, never a webhook's URL).
  type: dict
"""

from ansible_collections.llmhost.vllm.plugins.module_utils.alerting import plan


def alerting(mode, settings, listen, port, urls, prometheus):
    return plan(str(mode), dict(settings or {}), str(listen), port, list(urls or []), str(prometheus))


class FilterModule:
    """llmhost.vllm alerting filters."""

    def filters(self):
        return {"alerting": alerting}
