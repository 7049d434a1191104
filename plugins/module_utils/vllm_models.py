# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which model architectures each pinned vLLM serves, and the verdict on a model's architecture.

The tables are vLLM's own model registries, one per pinned version (roles/llmhost_stack/files/vllm-architectures/,
written by tools/vllm_model_table.py). The stack role publishes a summary of them (``summary``); the model role judges a
model's config.json against it before anything is downloaded and again when the folder is verified
(``architecture_errors``). A model passes when its architecture is one the user accepts (model_architectures) and one
the profile's vLLM has a model class for, in a group that generates text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The registry's groups `vllm serve` generates text with (the others embed, classify, score or draft).
GENERATE_GROUPS = ("text_generation", "multimodal", "transformers_supported")


def served(table):
    """The architectures a table's vLLM generates text with, sorted."""
    groups = (table or {}).get("architectures") or {}
    return sorted({name for group in GENERATE_GROUPS for name in groups.get(group) or []})


def summary(tables, profile_versions, profile, version):
    """What the stack publishes: the profile, its vLLM version, every profile's version, and per version with a table
    the architectures served. ``tables``: the tables as read; ``profile_versions``: {profile: vLLM version}."""
    return {"profile": profile, "version": str(version),
            "profiles": dict((p, str(v)) for p, v in sorted(profile_versions.items())),
            "served": dict((str(t["vllm_version"]), served(t)) for t in tables)}


def architecture(config):
    return ((config or {}).get("architectures") or [None])[0]


def architecture_errors(arch, accepted, models):
    """Sentences for an architecture the user does not accept, or the profile's vLLM cannot serve (naming its version,
    the profile, and the profiles whose vLLM has it). ``models``: ``summary``'s answer; none, or a version without a
    table (a vLLM set by llmhost_stack_overrides), checks the user's list alone."""
    errors = []
    if accepted and arch not in accepted:
        errors.append("architecture %s is not one of %s (model_architectures)" % (arch, ", ".join(accepted)))
    version = (models or {}).get("version")
    have = ((models or {}).get("served") or {}).get(version)
    if have is None or arch in have:
        return errors
    elsewhere = ["%s (vLLM %s)" % (p, v) for p, v in sorted(models.get("profiles", {}).items())
                 if arch in (models["served"].get(v) or [])]
    errors.append("architecture %s has no model class in vLLM %s, the vLLM of stack profile %s (its model registry: "
                  "the model would fail when the service starts); %s" % (
                      arch, version, models.get("profile"),
                      "choose llmhost_stack=%s, or another model" % " or ".join(elsewhere) if elsewhere else
                      "no profile's vLLM has it: choose another model"))
    return errors
