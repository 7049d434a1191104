# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One host, one port each: every listener the collection puts on a host, compared with all the others.

The listeners are the vLLM replicas (vllm_service_base_port, +1, ... one per GPU), the gateway, Prometheus,
Alertmanager, node_exporter, the GPU exporter and, on a host of a Ray cluster's group, Ray's node, each where its role
would put it. Two clash when their ports
overlap and so do their addresses (the same address, or one of them every address)."""

from __future__ import annotations

from ansible_collections.llmhost.vllm.plugins.module_utils.value_checks import is_on

# Replicas the first play counts when vllm_service_gpus is "all" (the GPUs are read later): the most GPUs
# one host of this collection's users has; the preflight checks again with the real count.
MAX_REPLICAS = 8
EVERY = ("0.0.0.0", "::", "")


def _int(value, fallback):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return fallback


def _gateway_wanted(v):
    return v["gateway_state"] == "present" or (v["gateway_state"] == "auto" and bool(v["gateway_clients"]))


def listeners(v, replicas=None):
    """[(variable, first port, last port, address)] of what the roles would listen on, from the merged variables v
    (the roles' defaults with the host's values over them)."""
    gpus = v.get("vllm_service_gpus")
    count = replicas or (len(gpus) if isinstance(gpus, list) and gpus else MAX_REPLICAS)
    base = _int(v["vllm_service_base_port"], 0)
    out = [("vllm_service_base_port", base, base + count - 1, v["vllm_service_host"])]
    if _gateway_wanted(v):
        out.append(("gateway_port", _int(v["gateway_port"], 0), _int(v["gateway_port"], 0), v["gateway_listen_address"]))
    mon = v["monitoring_listen_address"]
    for name, on in (("monitoring_prometheus_port", v["monitoring_prometheus"] == "managed"),
                     ("monitoring_alertmanager_port", v.get("monitoring_alertmanager") == "managed"),
                     ("monitoring_node_exporter_port", is_on(v["monitoring_node_exporter"])),
                     ("monitoring_gpu_exporter_port", is_on(v["monitoring_gpu_exporter"]))):
        if on:
            out.append((name, _int(v[name], 0), _int(v[name], 0), mon))
    return out + _ray(v)


def _ray(v):
    """A Ray node's ports, on a host of ray_cluster_group: Ray listens on every address whatever its node address."""
    group = v.get("ray_cluster_group")
    if not group or group not in (v.get("group_names") or []):
        return []
    ports, workers = v.get("ray_cluster_ports") or {}, v.get("ray_cluster_worker_ports") or []
    out = [("ray_cluster_ports.%s" % name, _int(port, 0), _int(port, 0), "") for name, port in sorted(ports.items())]
    if len(workers) == 2:
        out.append(("ray_cluster_worker_ports", _int(workers[0], 0), _int(workers[1], 0), ""))
    return out


def _overlap(a, b):
    ports = a[1] <= b[2] and b[1] <= a[2]
    addresses = a[3] == b[3] or a[3] in EVERY or b[3] in EVERY
    return ports and addresses


def _where(item):
    return "%s=%d" % (item[0], item[1]) if item[1] == item[2] else "%s (ports %d-%d)" % item[:3]


def clash_errors(v, replicas=None):
    """A sentence for each pair of listeners that would take the same port on the same address, naming both."""
    found = listeners(v, replicas)
    # Ray's ports among themselves are the ray_cluster role's own check
    return ["%s and %s would listen on the same port of this host; give one of them another port"
            % (_where(a), _where(b)) for i, a in enumerate(found) for b in found[i + 1:]
            if _overlap(a, b) and not (a[0].startswith("ray_") and b[0].startswith("ray_"))]
