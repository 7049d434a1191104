#!/usr/bin/python
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_serving_plan
short_description: Decide how vLLM serves a model on this host's GPUs, with a reason for every decision
version_added: 0.1.0
description:
  - Reads the model's C(config.json) on the host and combines it with the GPU facts (C(gpu_facts)) and the
    user's wishes into a serving plan, the pure logic of C(module_utils/serving_plan.py).
  - Decides tensor parallel across GPUs or one replica per GPU (replicas when the model fits one GPU, which wins on
    GPUs without peer-to-peer), the weight format (FP8 on GPUs with FP8 tensor cores, the checkpoint's own
    quantization when it has one), C(--max-model-len) and C(--max-num-seqs) within the estimated KV-cache
    budget, NUMA binding when the GPUs sit on several nodes, and C(NCCL_P2P_DISABLE=1) plus
    C(--disable-custom-all-reduce) for tensor-parallel groups without peer-to-peer.
  - Every rendered option and every user option (I(wishes.extra_args)) is checked against I(option_table), the
    option table of the real C(vllm serve) of the profile's vLLM version. Anything it would refuse, and
    anything that cannot fit, fails the module with a message that names the role variable to change.
options:
  gpus:
    description: GPUs as C(gpu_facts) reports them (C(index), C(compute_capability), C(memory_total_mib), C(numa_node), C(cpu_affinity)).
    type: list
    elements: dict
    required: true
  p2p:
    description: C(gpu_facts)' C(p2p) map, C("i,j") to the C(topo -p2p r) code.
    type: dict
    default: {}
  model_path:
    description: Folder of the model on the host; its C(config.json) is read.
    type: path
    required: true
  model_config:
    description: The model's config, when it is not on the host yet (check mode before the download).
    type: dict
  wishes:
    description:
      - The user's wishes, the C(vllm_service_*) variables without the prefix; the role's README lists them.
      - Their types, defaults, ranges and choices have one home, C(module_utils/wishes.py). The planner checks each
        wish there and converts it to its type (a whole number given as digits, a boolean word), and refuses a wrong
        one with the first play's words, naming the C(vllm_service_*) variable.
      - A wish left out (or null) takes its default, which is the role's default.
    type: dict
    default: {}
  cluster:
    description:
      - The Ray cluster this host belongs to (C(ray_cluster_group)), when it has one. The plan is then made with
        C(module_utils/cluster_plan.py). When the head's GPUs cannot hold the weights and a minimum KV cache (or
        I(cluster.across) is C(always)), the model is served in pipeline stages, one per host, by one API server on
        the head; a worker's plan has no replica.
    type: dict
    suboptions:
      members:
        description: The cluster's hosts, head first, each C(name), C(gpus) and C(p2p) as C(gpu_facts) reports them.
        type: list
        elements: dict
        required: true
      this:
        description: This host's name among I(cluster.members).
        type: str
        required: true
      interface:
        description: The cluster's network interface (C(NCCL_SOCKET_IFNAME), C(GLOO_SOCKET_IFNAME)).
        type: str
        required: true
      ray_address:
        description: The head's Ray GCS address, C(host:port) (C(RAY_ADDRESS) of the API server).
        type: str
        required: true
      across:
        description: C(auto) spans the hosts only when one cannot hold the model; C(always) spans them anyway.
        type: str
        choices: [auto, always]
        default: auto
      link_mbps:
        description: The cluster interface's link speed in Mbit/s, when known; below 10000 the plan warns.
        type: int
  option_table:
    description: Option table of the profile's C(vllm serve) (C(vllm_version) and C(options)).
    type: dict
    required: true
  tuned:
    description:
      - The adopted tuning, the text of the record C(playbooks/tune.yml) writes on the host (C(tuned.json)); empty
        for none. Text that is not such a record is set aside with a warning.
      - Its wishes and extra arguments are planned under the user's own (a wish the user set, an option the user
        passes in I(wishes.extra_args), wins), when it was measured for this model's shape, vLLM version and GPUs
        (I(fingerprint) in the return); otherwise it is set aside with a warning. The plan says so in a C(tuning)
        decision.
    type: str
    default: ""
  trial:
    description:
      - A candidate C(playbooks/tune.yml) is measuring (C(name), C(wishes), C(extra_args), C(reason)), planned over
        the user's wishes in place of I(tuned).
    type: dict
  candidates:
    description:
      - Also return the tuning's candidates, each re-planned (C(module_utils/tune.py)); with I(tuned) adopted, the
        adopted one is among them. C(limit) caps their number; C(added) are the user's own (C(name), C(wishes),
        C(extra_args)).
    type: dict
    suboptions:
      limit:
        description: The most candidates kept (C(tune_max_candidates)).
        type: int
        default: 6
      added:
        description: The user's own candidates (C(tune_candidates)).
        type: list
        elements: dict
        default: []
extends_documentation_fragment:
  - llmhost.vllm.read_only
author: llmhost.vllm maintainers (@llmhost)
"""

EXAMPLES = r"""
- name: Plan the service
  llmhost.vllm.vllm_serving_plan:
    gpus: "{{ ansible_facts.gpu_topology.gpus }}"
    p2p: "{{ ansible_facts.gpu_topology.p2p }}"
    model_path: /srv/models/Qwen2.5-3B-Instruct
    wishes: {host: 127.0.0.1, base_port: 8000}
    option_table: "{{ lookup('ansible.builtin.file', 'vllm-options/0.6.3.json') | from_json }}"
  register: plan
"""

RETURN = r"""
plan:
  description:
    - The command of replica C(k) is C(vllm serve <model_path> <replicas[k].options...>), with C(replicas[k].env).
    - C(mode) (replicas or tensor_parallel), C(tensor_parallel_size), C(weight_format), C(kv_cache_dtype), C(max_model_len),
      C(max_num_seqs),
      C(served_model_name), C(model_path), C(replicas) (each C(name), C(gpus), C(port), C(numa_node), C(cpus), C(env),
      C(options)), C(decisions) (each C(key), C(value), C(reason)), C(warnings), C(estimates), C(model), C(vllm_version),
      C(layouts) (the figures of the C(chosen) layout and the C(runner_up), when the plan chose between layouts).
    - With I(cluster), also C(span) (hosts one model spans) and C(cluster_role) (C(head), C(worker) or C(member));
      a plan in stages has C(mode) C(pipeline_parallel), C(pipeline_parallel_size), C(head), C(workers) and
      C(node_env) (each member's NCCL environment for its Ray node).
  returned: success
  type: dict
fingerprint:
  description: What a tuning measured here holds for (C(model), C(vllm), C(gpus)); C(tuned.json) records it.
  returned: success
  type: dict
tuning:
  description: C(state) (C(none), C(adopted), C(set_aside) or C(trial)), with the C(candidate), the C(reason) and when it was C(adopted).
  returned: success
  type: dict
candidates:
  description: With I(candidates), those kept, each C(name), C(wishes), C(extra_args), C(reason) and its C(plan).
  returned: when I(candidates) is given
  type: list
  elements: dict
dropped:
  description: With I(candidates), those left out, name to the reason.
  returned: when I(candidates) is given
  type: dict
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmhost.vllm.plugins.module_utils import tune
from ansible_collections.llmhost.vllm.plugins.module_utils.cluster_plan import host_plan
from ansible_collections.llmhost.vllm.plugins.module_utils.serving_plan import PlanError, make_plan


def _plan(p, config, wishes):
    """This host's plan: alone, or as a member of its Ray cluster."""
    cluster = p["cluster"]
    if not cluster:
        return make_plan(p["gpus"], p["p2p"], config, wishes, p["option_table"])
    return host_plan(cluster["members"], cluster["this"], config, wishes, p["option_table"], cluster)


def _record(text):
    """tuned.json's record; text that is no JSON as a list, which tune.adopt sets aside with why."""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return ["not JSON"]


def _tuned_plan(p, config, given):
    """The plan with the trial candidate, or the adopted tuning under the user's wishes, and what it says of it."""
    own = _plan(p, config, given)
    fp = tune.fingerprint(own, p["gpus"])
    if int(own.get("span") or 1) > 1 or not own.get("replicas"):  # a model across hosts is not tuned (tune.yml says so)
        return own, own, fp, {"state": "none"}
    if p["trial"]:
        trial = p["trial"]
        plan = tune.replanned(lambda w: _plan(p, config, w), given, trial)
        plan["decisions"].append({"key": "tuning", "value": trial["name"],
                                  "reason": "a candidate playbooks/tune.yml is measuring: %s" % trial.get("reason", "")})
        return own, plan, fp, {"state": "trial", "candidate": trial["name"]}
    wishes, decision, warning = tune.adopt(given, _record(p["tuned"]), fp)
    if warning:
        own["warnings"].append(warning)
        return own, own, fp, {"state": "set_aside", "reason": warning}
    if not decision:
        return own, own, fp, {"state": "none"}
    try:
        plan = _plan(p, config, wishes)
    except PlanError as e:
        why = "the adopted tuning (tuned.json) is set aside: with it the planner refuses: %s" % e
        own["warnings"].append(why)
        return own, own, fp, {"state": "set_aside", "reason": why}
    plan["decisions"].append(decision)
    return own, plan, fp, {"state": "adopted", "candidate": decision["value"], "reason": decision["reason"],
                           "adopted": _record(p["tuned"])["adopted"]}


def _candidates(p, config, given, own):
    """The tuning's candidates around the planner's own choice, and the adopted one if any."""
    ask = p["candidates"]
    added = list(ask["added"])
    rec = _record(p["tuned"])
    if rec and not tune.record_errors(rec) and rec["for"] == tune.fingerprint(own, p["gpus"]) and rec["candidate"] != "plan":
        added.append({"name": "adopted_" + rec["candidate"], "wishes": rec["wishes"], "extra_args": rec["extra_args"],
                      "reason": "the adopted tuning (tuned.json), measured best at %s" % rec["adopted"]})
    gpu_count = len(set(g for r in own["replicas"] for g in r["gpus"]))
    return tune.candidates(lambda w: _plan(p, config, w), given, own, gpu_count, ask["limit"], added)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gpus=dict(type="list", elements="dict", required=True),
            p2p=dict(type="dict", default={}),
            model_path=dict(type="path", required=True),
            model_config=dict(type="dict"),
            wishes=dict(type="dict", default={}),
            cluster=dict(type="dict", options=dict(
                members=dict(type="list", elements="dict", required=True),
                this=dict(type="str", required=True),
                interface=dict(type="str", required=True),
                ray_address=dict(type="str", required=True),
                across=dict(type="str", choices=["auto", "always"], default="auto"),
                link_mbps=dict(type="int"),
            )),
            option_table=dict(type="dict", required=True),
            tuned=dict(type="str", default=""),
            trial=dict(type="dict"),
            candidates=dict(type="dict", options=dict(
                limit=dict(type="int", default=6),
                added=dict(type="list", elements="dict", default=[]),
            )),
        ),
        supports_check_mode=True,
    )
    p = module.params
    config = p["model_config"]
    if config is None:
        path = os.path.join(p["model_path"], "config.json")
        try:
            with open(path) as f:
                config = json.load(f)
        except (OSError, ValueError) as e:
            module.fail_json(msg="vllm_service_model_path=%s: cannot read its config.json (%s)" % (p["model_path"], e))
    wishes = dict(p["wishes"], model_path=p["model_path"])
    result = {}
    try:
        own, plan, fp, tuning = _tuned_plan(p, config, wishes)
        if p["candidates"] is not None:
            result["candidates"], result["dropped"] = _candidates(p, config, wishes, own)
    except PlanError as e:
        module.fail_json(msg=str(e))
    except (KeyError, TypeError, ValueError) as e:
        module.fail_json(msg="vllm_service_model_path=%s: its config.json lacks what the plan needs (%s: %s)"
                         % (p["model_path"], type(e).__name__, e))
    module.exit_json(changed=False, plan=plan, fingerprint=fp, tuning=tuning, **result)


if __name__ == "__main__":
    main()
