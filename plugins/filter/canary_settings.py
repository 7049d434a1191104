# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: whether a model upgrade runs its canary, the settings' refusals, the prompt set and the verdict's limits."""

from __future__ import annotations

DOCUMENTATION = r"""
name: canary_settings
short_description: Whether the model upgrade's canary runs, what the first play refuses, the prompt set and the limits
version_added: 0.3.0
description:
  - The canary runs with I(upgrade_model_canary=true), or with C(auto) where the host serves two replicas or more.
  - Refuses by name, when it runs, a share outside 1-50, a soak window shorter than two of Prometheus' scrape intervals,
    thresholds that are not finite or out of range, fewer than two replicas, a Prometheus that is no http(s) URL, and a
    prompt set that is not one (each bad prompt and check named with the file).
  - Logic in C(module_utils/canary.py).
options:
  _input:
    description: The C(upgrade_model_canary*) settings, name to value.
    type: dict
    required: true
  replicas:
    description: How many replicas the host serves.
    type: int
    required: true
  scrape_interval:
    description: Prometheus' scrape interval (I(monitoring_scrape_interval), such as C(15s)).
    type: str
    required: true
  prompts_text:
    description: The prompt set file's text (YAML).
    type: str
    required: true
  prompts_source:
    description: The prompt set file's path, for the sentences.
    type: str
    required: true
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Decide on the canary
  ansible.builtin.set_fact:
    canary: >-
      {{ settings | llmhost.vllm.canary_settings(2, '15s', lookup('ansible.builtin.file', path), path) }}
"""

RETURN = r"""
_value:
  description: C(wanted) (bool), C(errors) (sentences), C(prompts) (the parsed set), C(limits) (for C(canary_verdict)).
  type: dict
"""

import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import canary


def canary_settings(settings, replicas, scrape_interval, prompts_text, prompts_source):
    v = dict(settings)
    wanted = canary.canary_wanted(v.get("upgrade_model_canary"), int(replicas))
    errors = canary.input_errors(v, int(replicas), str(scrape_interval))
    prompts = None
    if wanted and not errors and not str(prompts_text or "").strip():
        errors.append("upgrade_model_canary_prompts=%s cannot be read on the controller, or is empty" % prompts_source)
    elif wanted and not errors:
        try:
            prompts = yaml.safe_load(str(prompts_text))
        except yaml.YAMLError as e:
            errors.append("upgrade_model_canary_prompts=%s is not YAML: %s" % (prompts_source, " ".join(str(e).split())))
        else:
            errors += canary.prompt_set_errors(prompts, "upgrade_model_canary_prompts=%s" % prompts_source)
    limits = {} if errors or not wanted else {
        "score_tolerance": float(v["upgrade_model_canary_score_tolerance"]),
        "max_error_rate_increase": float(v["upgrade_model_canary_max_error_rate_increase"]),
        "max_ttft_ratio": float(v["upgrade_model_canary_max_ttft_ratio"])}
    return {"wanted": wanted, "errors": errors, "prompts": prompts or [], "limits": limits}


class FilterModule:
    def filters(self):
        return {"canary_settings": canary_settings}
