# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the quantize role refuses once it has read the model and the output folder on the host (filter
quantize_errors): a model without its config, one the quantizer cannot map or that is already quantized, one without
the manifest the model role records (the output's stamp holds its hash), calibration data without texts, and an
output folder that is not the role's to replace."""

from __future__ import annotations

import json


def _config(found, source):
    entry = found.get(source + "/config.json") or {}
    return json.loads(entry["content"]) if "content" in entry else None


def model_errors(config, v):
    """The model's architecture is one the quantizer maps, and it is not quantized already."""
    arch = (config.get("architectures") or ["?"])[0]
    if "quantization_config" in config:
        why = "is already quantized (%s)" % config["quantization_config"].get("quant_method", "?")
    elif arch not in v["architectures"]:
        why = "has no AWQ layer mapping in %s (it maps %s)" % (v["tool"], ", ".join(v["architectures"]))
    else:
        return []
    return ["%s (model_repo): architecture %s %s; set quantize_state=skip to serve it as it is."
            % (v["source"], arch, why)]


def output_errors(found, source, output):
    """The worker replaces the output folder: only one this role wrote (its stamp inside), and never the model."""
    out, src = output.rstrip("/"), source.rstrip("/")
    if out == src or out.startswith(src + "/") or src.startswith(out + "/"):
        why = "it is, holds or lies in the model to quantize (%s)" % source
    elif found.get(output, {}).get("exists") and not found.get(output + "/llmhost-quantize.json", {}).get("exists"):
        why = "it exists and holds no llmhost-quantize.json, so it is not an output of this role"
    else:
        return []
    return ["quantize_output=%s: %s; nothing replaces it. Choose another quantize_output, or move that folder away."
            % (output, why)]


def errors(v):
    """``v``: source, output, found (path_info's paths), architectures and tool (the profile's quantizer),
    calibration (the file's name), calibration_text, check_mode. A model whose config is not there yet under
    --check is not refused: the real run fetches it first."""
    config = _config(v["found"], v["source"])
    if config is None:
        if v["check_mode"]:
            return []
        entry = v["found"].get(v["source"] + "/config.json") or {}
        return ["%s (the model role's model_path) holds no readable config.json (%s): run llmhost.vllm.model first, "
                "which fetches the model." % (v["source"], entry.get("error", "no such file"))]
    out = model_errors(config, v)
    manifest = v["found"].get(v["source"] + "/llmhost-manifest.json") or {}
    if "content" not in manifest:
        out.append("%s (the model role's model_path) holds no readable llmhost-manifest.json (%s): run "
                   "llmhost.vllm.model first, which records it." % (v["source"], manifest.get("error", "no such file")))
    if not any('"text"' in line for line in (v["calibration_text"] or "").splitlines()):
        out.append('quantize_calibration_file=%s holds no {"text": ...} lines.' % v["calibration"])
    return out + output_errors(v["found"], v["source"], v["output"])
