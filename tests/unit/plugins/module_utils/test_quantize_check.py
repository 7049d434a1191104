"""What the quantize role refuses once it has read the host (module_utils/quantize_check.py)."""
import json

import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import quantize_check

SRC, OUT = "/srv/models/Qwen3-4B", "/srv/models/Qwen3-4B-awq-w4g128"
QWEN = {"architectures": ["Qwen3ForCausalLM"]}


def read(config="qwen", out_exists=False, stamp=False, **change):
    config = QWEN if config == "qwen" else config
    found = {SRC + "/config.json": {"exists": config is not None, "content": json.dumps(config)}
             if config is not None else {"exists": False, "error": "no such file"},
             SRC + "/llmhost-manifest.json": {"exists": True, "content": "{}"},
             OUT: {"exists": out_exists}, OUT + "/llmhost-quantize.json": {"exists": stamp}}
    v = {"source": SRC, "output": OUT, "found": found, "architectures": ["Qwen2ForCausalLM", "Qwen3ForCausalLM"],
         "tool": "autoawq", "calibration": "calibration.jsonl", "calibration_text": '{"text": "hello"}\n',
         "check_mode": False}
    found.update(change.pop("found_change", {}))
    v.update(change)
    return v


@pytest.mark.parametrize("v,words", [
    (read(), []),
    (read(out_exists=True, stamp=True), []),
    (read(config=None), ["holds no readable config.json (no such file): run llmhost.vllm.model first"]),
    (read(config=None, check_mode=True), []),
    (read(config={"architectures": ["LlamaForCausalLM"]}),
     ["architecture LlamaForCausalLM has no AWQ layer mapping in autoawq (it maps Qwen2ForCausalLM, Qwen3ForCausalLM)"]),
    (read(config=dict(QWEN, quantization_config={"quant_method": "awq"})), ["is already quantized (awq)"]),
    (read(calibration_text='{"prompt": "x"}\n'), ['quantize_calibration_file=calibration.jsonl holds no {"text"']),
    (read(out_exists=True), ["it exists and holds no llmhost-quantize.json"]),
    (read(found_change={SRC + "/llmhost-manifest.json": {"exists": False}}),
     ["holds no readable llmhost-manifest.json (no such file): run llmhost.vllm.model first, which records it."]),
    (read(output=SRC + "/awq"), ["it is, holds or lies in the model to quantize"]),
    (read(output="/srv/models"), ["it is, holds or lies in the model to quantize"]),
    (read(output=SRC + "/"), ["it is, holds or lies in the model to quantize"]),
])
def test_each_problem_is_named_once(v, words):
    got = quantize_check.errors(v)
    assert len(got) == len(words) and all(w in g for w, g in zip(words, got)), got
