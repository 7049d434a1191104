"""Device proof helper for playbooks/tune.yml (not part of `make test`): the tuning's candidates for one RTX 4090
serving a Qwen3-4B-shaped model, made by module_utils/tune.py around the planner's own plan (make_plan on a 4090's
facts, with the option table of the vLLM that runs here), each candidate's argv mapped onto the lent GPU's memory;
then the choice and the report from what each measured, by the same functions the playbook's filter and module call.

usage: python3 tune_proof.py candidates TABLE TOTAL_MIB LIMIT OUT_DIR   -> OUT_DIR/candidates.json, one argv a line
       python3 tune_proof.py decide OUT_DIR SLO_MS                        -> OUT_DIR/report.md, summary.json, tuned.json
Each candidate's result is OUT_DIR/<name>/tune.json (vllm bench serve --save-result), or OUT_DIR/<name>/error.txt."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit"))

from shapes import QWEN3_4B  # noqa: E402  (the unit tests' config, Qwen3-4B's published numbers)

RTX4090 = {"index": 0, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "memory_total_mib": 24564,
           "numa_node": 0, "cpu_affinity": "0-15", "pcie": {"gen_max": 4, "width_max": 16}}
BASE = {"model_path": "/root/qwen3-4b-shape", "served_model_name": "qwen3-4b-shape", "host": "127.0.0.1"}
PHASE = {"name": "tune", "input_len": 1024, "output_len": 256, "concurrency": 64, "requests": 256}


def _on_this_gpu(options, total_mib):
    opts = list(options)
    i = opts.index("--gpu-memory-utilization")
    opts[i + 1] = "%.4f" % (float(opts[i + 1]) * RTX4090["memory_total_mib"] / int(total_mib))
    return opts


def candidates(table_path, total_mib, limit, out):
    from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp, tune
    with open(table_path) as f:
        table = json.load(f)

    def plan_for(wishes):
        return sp.make_plan([RTX4090], {}, QWEN3_4B, wishes, table)

    own = plan_for(dict(BASE))
    kept, dropped = tune.candidates(plan_for, BASE, own, 1, int(limit))
    with open(os.path.join(out, "candidates.json"), "w") as f:
        json.dump({"kept": kept, "dropped": dropped, "fingerprint": tune.fingerprint(own, [RTX4090]), "phase": PHASE},
                  f, indent=1)
    for c in kept:
        print(c["name"], " ".join([BASE["model_path"]] + _on_this_gpu(c["plan"]["replicas"][0]["options"], total_mib)))


def _said(path):
    """The last 300 characters of a candidate's error.txt; empty where it has none (a candidate left out)."""
    try:
        with open(path) as f:
            return f.read().strip()[-300:]
    except OSError:
        return ""


def decide(out, slo_ms):
    from ansible_collections.llmhost.vllm.plugins.module_utils import tune
    with open(os.path.join(out, "candidates.json")) as f:
        cands = json.load(f)
    results = {}
    for c in cands["kept"]:
        try:
            with open(os.path.join(out, c["name"], "tune.json")) as f:
                results[c["name"]] = json.load(f)
        except (OSError, ValueError):
            results[c["name"]] = {"error": _said(os.path.join(out, c["name"], "error.txt")) or "not measured"}
    v = {"tune_goal": "throughput", "tune_slo_p95_ttft_ms": slo_ms, "tune_throughput_floor": 0}
    choice = tune.decide(results, cands["kept"], v, cands["fingerprint"], "(the lent GPU run)")
    info = {"host": "lent %s, a 4090's memory budget" % os.environ.get("TUNE_PROOF_GPU", "GPU"),
            "started": os.environ.get("STARTED", "?"), "goal": "throughput",
            "slo_ms": slo_ms, "for": cands["fingerprint"], "client_label": "vllm bench serve (vLLM 0.25.0)"}
    summary, text = tune.report(info, cands["kept"], cands["dropped"], results, cands["phase"], choice)
    for name, body in (("report.md", text), ("summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n"),
                       ("tuned.json", json.dumps(choice["record"], indent=1, sort_keys=True) + "\n")):
        with open(os.path.join(out, name), "w") as f:
            f.write(body)
    print(choice["why"])


if __name__ == "__main__":
    if sys.argv[1] == "candidates":
        candidates(*sys.argv[2:6])
    else:
        decide(sys.argv[2], float(sys.argv[3]))
