# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a model outgrows one host: the serving plan across the hosts of a Ray cluster (issue #43, its planning part).

A host that holds the weights plus a minimum KV cache keeps the one-host plan (serving_plan.make_plan). Otherwise the
model is split into pipeline-parallel stages, one per host, with tensor parallel over each host's GPUs inside a stage:
vLLM's own answer across hosts (--pipeline-parallel-size, --tensor-parallel-size, --distributed-executor-backend ray).
One API server runs on the head; the other hosts run only Ray. The cross-host traffic goes over the cluster's own
interface (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME); NCCL_P2P_DISABLE stays as each host's local topology asks.

Refused, by name: hosts of different GPU types or counts, a layer count the hosts do not divide, attention heads a
host's GPUs do not divide, a profile whose vLLM lacks an option, and a model that does not fit even across the hosts.
A link below MIN_LINK_MBPS is warned about: pipeline stages pass activations at every step, and a slower link makes
every token wait on it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmhost.vllm.plugins.module_utils import serving_plan as sp
from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_options

# The slowest link the plan takes without a warning: 10 Gbit/s Ethernet, in Mbit/s as sysfs and ethtool give it.
MIN_LINK_MBPS = 10000
CLUSTER_OPTIONS = ("--pipeline-parallel-size", "--distributed-executor-backend")


def gpu_kind(host):
    """A host's GPUs as the plan compares them: their names and how many."""
    names = sorted({str(g.get("name", "?")) for g in host["gpus"]})
    return "%dx %s" % (len(host["gpus"]), " + ".join(names))


def check_hosts(hosts):
    """Every host has GPUs, of one type and count: a stage per host only balances on equal hosts."""
    empty = [h["name"] for h in hosts if not h["gpus"]]
    if empty:
        raise sp.PlanError("the cluster's hosts %s report no GPU (gpu_facts): every host of the cluster serves a "
                           "stage" % ", ".join(empty))
    kinds = {h["name"]: gpu_kind(h) for h in hosts}
    if len(set(kinds.values())) > 1:
        raise sp.PlanError("the cluster's hosts differ (%s): pipeline stages need hosts of one GPU type and count"
                           % ", ".join("%s: %s" % kv for kv in kinds.items()))


def check_options(table):
    missing = [o for o in CLUSTER_OPTIONS if not vllm_options.has(table, o)]
    if missing:
        raise sp.PlanError("the stack profile's vLLM %s has no %s: it cannot serve across hosts"
                           % (table.get("vllm_version", "?"), ", ".join(missing)))


def stage_kv_tokens(plan, tp, pp):
    """Tokens of KV cache one GPU holds when the layers are split over pp stages and each stage over tp GPUs."""
    budget = plan.mem * plan.util - plan.wbytes / (tp * pp) - sp.OVERHEAD_BYTES
    shape = plan.shape
    per_token = 2 * (shape["layers"] // pp) * max(1, shape["kv_heads"] // tp) * shape["head_dim"] * plan.kv_value_bytes
    return int(max(0, budget) // per_token)


def _split(plan, tp, pp):
    """The stages' shape: layers divided by the hosts, heads by each host's GPUs, and the KV cache they leave."""
    shape = plan.shape
    if shape["layers"] % pp:
        raise sp.PlanError("the model's %d layers do not divide into %d pipeline stages (one per host of the "
                           "cluster); use a cluster of a host count that divides them" % (shape["layers"], pp))
    if shape["heads"] % tp:
        raise sp.PlanError("the model's %d attention heads do not divide over a host's %d GPUs (tensor parallel "
                           "inside a stage)" % (shape["heads"], tp))
    tokens = stage_kv_tokens(plan, tp, pp)
    if tokens < plan.need_len:
        raise sp.PlanError("the model (%.1f GiB of %s weights, %d tokens of context) does not fit even across the "
                           "%d hosts of %d GPU(s) of %.1f GiB each: about %d tokens of KV cache remain"
                           % (plan.wbytes / sp.GIB, plan.fmt, plan.need_len, pp, tp, plan.mem / sp.GIB, tokens))
    return tokens


def _env(host, interface):
    env = {"NCCL_SOCKET_IFNAME": interface, "GLOO_SOCKET_IFNAME": interface}
    codes = sp.gpu_pairs([int(g["index"]) for g in host["gpus"]], host.get("p2p"))
    if len(host["gpus"]) > 1 and (not codes or any(c != "OK" for c in codes.values())):
        env["NCCL_P2P_DISABLE"] = "1"
    return env


def across_hosts(hosts, config, wishes, table, interface, link_mbps=None):
    """The plan for the hosts of a cluster, head first (each: name, gpus as gpu_facts reports them, p2p). Returns the
    one-host plan under ``plan`` with span 1 when the head holds the model; else the stages across all hosts."""
    try:
        return {"span": 1, "plan": sp.make_plan(hosts[0]["gpus"], hosts[0].get("p2p") or {}, config, wishes, table),
                "reason": "the head's GPUs hold the weights and the KV cache: one host serves, no stage crosses the "
                          "network"}
    except sp.PlanError as alone:
        if len(hosts) < 2:
            raise
        why_alone = str(alone)
    check_hosts(hosts)
    check_options(table)
    plan = sp.basis(hosts[0]["gpus"], config, wishes, table)
    tp, pp = len(plan.used), len(hosts)
    tokens = _split(plan, tp, pp)
    warnings = list(plan.warnings)
    if link_mbps is not None and int(link_mbps) < MIN_LINK_MBPS:
        warnings.append("the cluster's link runs at %d Mbit/s, below %d: every token waits on the activations "
                        "passed between stages" % (int(link_mbps), MIN_LINK_MBPS))
    options = ["--tensor-parallel-size", str(tp), "--pipeline-parallel-size", str(pp),
               "--distributed-executor-backend", "ray"]
    return {
        "span": pp, "tensor_parallel_size": tp, "pipeline_parallel_size": pp, "weight_format": plan.fmt,
        "head": hosts[0]["name"], "workers": [h["name"] for h in hosts[1:]],
        "reason": "one host cannot serve it (%s): %d pipeline stages, one per host, each over its %d GPU(s) with "
                  "tensor parallel, hold the weights and about %d tokens of KV cache per GPU"
                  % (why_alone, pp, tp, tokens),
        "options": options + plan.flags, "env": {h["name"]: _env(h, interface) for h in hosts},
        "kv_tokens_per_gpu": tokens, "decisions": plan.decisions, "warnings": warnings,
    }


SPAN_CHOICES = ("auto", "always")


def host_plan(hosts, this, config, wishes, table, cluster):
    """The plan one host of a cluster serves, in the one-host plan's shape (the same fact, the same reasons).

    hosts: the cluster's members, head first (name, gpus, p2p); this: this host's name; cluster: interface,
    ray_address (the head's GCS, host:port), across (auto: stages only when the head cannot hold the model alone;
    always: stages even when it could) and link_mbps (or None). When one host holds it, every member serves its own
    one-host plan (replicas behind the gateway); otherwise the head serves one API server whose ranks Ray places on
    every member, and a worker serves nothing itself."""
    me = [h for h in hosts if h["name"] == this]
    if not me:
        raise sp.PlanError("ray_cluster_group: this host (%s) is not a member (%s)"
                           % (this, ", ".join(h["name"] for h in hosts)))
    if cluster.get("across", "auto") != "always" or len(hosts) < 2:
        try:
            plan = sp.make_plan(hosts[0]["gpus"], hosts[0].get("p2p") or {}, config, wishes, table)
        except sp.PlanError as alone:
            if len(hosts) < 2:
                raise
            return _staged(hosts, this, config, wishes, table, cluster, "one host cannot serve it (%s)" % alone)
        if this != hosts[0]["name"]:
            plan = sp.make_plan(me[0]["gpus"], me[0].get("p2p") or {}, config, wishes, table)
        plan.update(span=1, cluster_role="member")
        plan["decisions"].append({"key": "span", "value": 1, "reason": "the head's GPUs hold the weights and the KV "
                                  "cache: each host of the cluster serves its own replicas, no stage crosses the "
                                  "network (vllm_service_across_hosts=always spans them anyway)"})
        return plan
    return _staged(hosts, this, config, wishes, table, cluster,
                   "vllm_service_across_hosts=always (asked), though one host could serve it")


def _staged(hosts, this, config, wishes, table, cluster, why):
    """Pipeline stages, one per host, tensor parallel inside each: the head's API server and its options."""
    check_hosts(hosts)
    check_options(table)
    plan = sp.basis(hosts[0]["gpus"], config, wishes, table)
    tp, pp = len(plan.used), len(hosts)
    _split(plan, tp, pp)
    plan.tp, plan.groups = tp, [plan.used]
    _size_a_stage(plan, pp)
    sp.choose_cuda_graphs(plan)
    plan.numa_on = False
    plan.decide("numa", "off", "the API server places no rank itself: Ray's workers run the GPUs' work")
    plan.decide("span", pp, "%s: %d pipeline stages, one per host (%s), each over its %d GPU(s) with tensor "
                "parallel; the head %s runs the one API server, Ray places its ranks"
                % (why, pp, ", ".join(h["name"] for h in hosts), tp, hosts[0]["name"]))
    # a speed of 0 or less is one the interface does not report (a virtual one: -1 in the facts)
    if 0 < int(cluster.get("link_mbps") or 0) < MIN_LINK_MBPS:
        plan.warn("the cluster's link runs at %d Mbit/s, below %d: every token waits on the activations passed "
                  "between stages" % (int(cluster["link_mbps"]), MIN_LINK_MBPS))
    replicas = sp.build_replicas(plan, hosts[0].get("p2p") or {})
    head = replicas[0]
    head["options"] += ["--pipeline-parallel-size", str(pp), "--distributed-executor-backend", "ray"]
    head["env"].update(_env(hosts[0], cluster["interface"]), RAY_ADDRESS=cluster["ray_address"])
    sp.add_extra_args(plan, replicas)
    sp.check_unit_lines(plan, replicas)
    result = sp._result(plan, replicas)
    node_env = dict((h["name"], _env(h, cluster["interface"])) for h in hosts)
    result.update(mode="pipeline_parallel", span=pp, pipeline_parallel_size=pp, head=hosts[0]["name"],
                  workers=[h["name"] for h in hosts[1:]], node_env=node_env)
    result["cluster_role"] = "head" if this == hosts[0]["name"] else "worker"
    if result["cluster_role"] == "worker":
        result["replicas"] = []
    return result


def _size_a_stage(plan, pp):
    """The KV cache, context and batch as one GPU of a stage holds them: 1/pp of the layers and of the weights."""
    full_shape, full_bytes = plan.shape, plan.wbytes
    plan.shape = dict(full_shape, layers=full_shape["layers"] // pp)
    plan.wbytes = full_bytes / pp
    try:
        sp.choose_kv_cache_for_load(plan)
        sp.size_context_and_batch(plan)
    finally:
        plan.shape, plan.wbytes = full_shape, full_bytes


def member_gpus(hosts, names):
    """Each member's GPUs and peer-to-peer map, for the plan across hosts, from its variables: the GPUs given to the
    plan (vllm_service_plan_gpus, vllm_service_plan_p2p), else those gpu_facts read (ansible_facts.gpu_topology)."""
    found = []
    for name in names:
        host = hosts.get(name) or {}
        topology = (host.get("ansible_facts") or {}).get("gpu_topology") or {}
        given = host.get("vllm_service_plan_gpus") or []
        found.append({"name": name, "gpus": given or topology.get("gpus") or [],
                      "p2p": (host.get("vllm_service_plan_p2p") or {}) if given else topology.get("p2p") or {}})
    return found
