"""Device proof helper (not part of `make test`): the model shapes of the serving plan's unit tests as folders for
`vllm serve --load-format dummy`, and each shape's plan for one RTX 4090, mapped onto the lent GPU's memory.

usage: python3 plan_shapes.py folders ROOT                 -> ROOT/<shape>/ (config.json + Qwen's tokenizer)
       python3 plan_shapes.py plan SHAPE TABLE TOTAL_MIB [WISHES_JSON]
                                                          -> the plan's JSON line, then the argv for this GPU
The config numbers are the published configs' (the same dicts as tests/unit/shapes.py); the
plan is make_plan's own, on a 4090's facts (24564 MiB, compute capability 8.9), with the option table of the vLLM that
runs here. --gpu-memory-utilization is rescaled so that vLLM gets the 4090's budget of this GPU's memory."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit"))
sys.path.insert(0, HERE)

from shapes import SHAPES  # noqa: E402  (the unit tests' configs)

RTX4090 = {"index": 0, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "memory_total_mib": 24564,
           "numa_node": 0, "cpu_affinity": "0-15", "pcie": {"gen_max": 4, "width_max": 16}}
MODEL_TYPES = {"Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe"}


def folders(root):
    import qwen_shape
    for name, config in SHAPES.items():
        out = os.path.join(root, name)
        qwen_shape.main(out)
        full = dict(config, model_type=MODEL_TYPES[config["architectures"][0]], rms_norm_eps=1e-06,
                    rope_theta=1000000, hidden_act="silu", bos_token_id=151643, eos_token_id=151645)
        full.setdefault("torch_dtype", "float16" if "quantization_config" in config else "bfloat16")
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(full, f, indent=1)


def plan(shape, table_path, total_mib, wishes):
    from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp
    with open(table_path) as f:
        table = json.load(f)
    wishes = dict(json.loads(wishes or "{}"), model_path="/root/shapes/" + shape, served_model_name=shape)
    p = sp.make_plan([RTX4090], {}, SHAPES[shape], wishes, table)
    print(json.dumps({k: p[k] for k in ("mode", "weight_format", "kv_cache_dtype", "max_model_len", "max_num_seqs",
                                        "estimates", "warnings")}))
    opts = list(p["replicas"][0]["options"])
    i = opts.index("--gpu-memory-utilization")
    opts[i + 1] = "%.4f" % (float(opts[i + 1]) * RTX4090["memory_total_mib"] / int(total_mib))
    print(" ".join([p["model_path"]] + opts))


if __name__ == "__main__":
    if sys.argv[1] == "folders":
        folders(sys.argv[2])
    else:
        plan(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
