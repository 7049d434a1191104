# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Ray cluster from the inventory (issue #52): each node's `ray start --block` command line, its environment, the
checks of the cluster's members and ports, and the nftables table that lets only the members reach the ports.

Ray has no authentication, and its GCS, raylet and object manager listen on every address whatever
--node-ip-address says. So the firewall is the guard: the cluster's ports answer the members and loopback only.
Ray also puts the default-route address in place of 127.0.0.1, so a loopback node address is refused by name."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

# The ports a node listens on, each with its `ray start` flag. The GCS port is the head's --port.
PORT_FLAGS = (
    ("gcs", "--port"),
    ("node_manager", "--node-manager-port"),
    ("object_manager", "--object-manager-port"),
    ("agent_grpc", "--dashboard-agent-grpc-port"),
    ("agent_listen", "--dashboard-agent-listen-port"),
    ("runtime_env_agent", "--runtime-env-agent-port"),
    ("metrics", "--metrics-export-port"),
)
PORT_NAMES = tuple(name for name, _flag in PORT_FLAGS)
TABLE = "llmhost_ray"


def node_argv(ray, node, head_address, ports, workers, temp_dir):
    """The command line of one node's unit. node: address (this node's), head (bool) and gpus (how many Ray may
    hand out). ports: PORT_NAMES to numbers; workers: [lowest, highest] of the workers' range."""
    argv = [ray, "start", "--block", "--disable-usage-stats", "--node-ip-address=%s" % node["address"]]
    if node["head"]:
        argv += ["--head", "--include-dashboard=false"]
    else:
        argv.append("--address=%s:%d" % (_bracketed(head_address), int(ports["gcs"])))
    argv += ["%s=%d" % (flag, int(ports[name])) for name, flag in PORT_FLAGS if node["head"] or name != "gcs"]
    argv += ["--min-worker-port=%d" % int(workers[0]), "--max-worker-port=%d" % int(workers[1]),
             "--num-gpus=%d" % int(node["gpus"]), "--temp-dir=%s" % temp_dir]
    return argv


def node_environment(interface):
    """What a node's processes get: no usage report leaves the host, GPUs numbered as nvidia-smi numbers them, and
    NCCL's and Gloo's traffic between the ranks Ray places on the cluster's interface."""
    return {"RAY_USAGE_STATS_ENABLED": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
            "NCCL_SOCKET_IFNAME": str(interface), "GLOO_SOCKET_IFNAME": str(interface)}


def _bracketed(address):
    return "[%s]" % address if ":" in address else address


def address_problem(address):
    """Why a node address cannot carry the cluster, or None."""
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        return "%r is not an IP address" % (address,)
    if ip.is_loopback:
        return ("%s is a loopback address: Ray puts the host's default-route address in its place, so the other "
                "nodes and the firewall would expect the node where it is not" % ip)
    if ip.is_unspecified or ip.is_multicast:
        return "%s is not one host's address" % ip
    if ip.is_global:
        return ("%s is a public address: Ray has no authentication, so a cluster runs on a private network only "
                "(RFC 1918, a ULA or link-local)" % ip)
    return None


def port_errors(ports, workers):
    """The ports a node uses: whole numbers from 1024 to 65535, none twice, none inside the workers' range."""
    workers = list(workers) if isinstance(workers, (list, tuple)) and len(workers) == 2 else [None, None]
    errors = ["ray_cluster_ports: %s is %r, not a whole number from 1024 to 65535" % (name, ports.get(name))
              for name in PORT_NAMES if not _port(ports.get(name))]
    errors += ["ray_cluster_worker_ports: %r, not the lowest and highest port, whole numbers from 1024 to 65535"
               % (workers,)] if not all(_port(w) for w in workers) else []
    if errors:
        return errors
    if workers[0] > workers[1]:
        errors.append("ray_cluster_worker_ports: %d is above %d" % tuple(workers))
    seen = {}
    for name in PORT_NAMES:
        port = ports[name]
        if port in seen:
            errors.append("ray_cluster_ports: %s and %s are both %d" % (seen[port], name, port))
        seen[port] = name
        if workers[0] <= port <= workers[1]:
            errors.append("ray_cluster_ports: %s (%d) is inside ray_cluster_worker_ports %d-%d"
                          % ((name, port) + tuple(workers)))
    return errors


def _port(value):
    return _whole(value) and 1024 <= value <= 65535


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def member_errors(members, in_run, head):
    """The cluster as a whole. members: [{name, address, addresses (the interface's)}], head first; in_run: the
    hosts of this run; head: the name of the head."""
    names = [m["name"] for m in members]
    errors = []
    missing = [n for n in names if n not in in_run]
    if missing:
        errors.append("ray_cluster_group: %s not in this run (--limit?): a cluster forms, and is checked, with "
                      "all its members" % ", ".join(missing))
    if head not in names:
        errors.append("ray_cluster_head: %r is not a member of the cluster's group (%s)" % (head, ", ".join(names)))
    for member in members:
        errors.extend(_node_errors(member))
    errors.extend(_shared_addresses(members))
    return errors


def _node_errors(member):
    if not member["address"]:
        return ["%s: no address: ray_cluster_node_address is empty and its network facts show none on "
                "ray_cluster_interface" % member["name"]]
    problem = address_problem(member["address"])
    if problem:
        return ["%s: ray_cluster_node_address: %s" % (member["name"], problem)]
    if member.get("addresses") is not None and member["address"] not in member["addresses"]:
        return ["%s: ray_cluster_node_address %s is not on ray_cluster_interface (which has %s)"
                % (member["name"], member["address"], ", ".join(member["addresses"]) or "no address")]
    return []


def _shared_addresses(members):
    by_address = {}
    for member in members:
        by_address.setdefault(member["address"], []).append(member["name"])
    return ["ray_cluster_node_address: %s share %s: each node needs its own" % (" and ".join(names), address)
            for address, names in sorted(by_address.items()) if len(names) > 1]


def firewall_ruleset(members, ports, workers):
    """nftables input rules in a table of their own: the cluster's TCP ports answer only loopback and the members.
    Loaded with `nft -f` this replaces the table in one transaction (the table is declared, flushed, then filled)."""
    port_set = ", ".join(str(ports[name]) for name in PORT_NAMES) + ", %d-%d" % tuple(workers)
    v4 = sorted(m for m in members if ":" not in m)
    v6 = sorted(m for m in members if ":" in m)
    lines = ["table inet %s {" % TABLE, "}", "flush table inet %s" % TABLE, "table inet %s {" % TABLE,
             "  chain input {", "    type filter hook input priority filter - 10; policy accept;",
             "    iif \"lo\" accept"]
    if v4:
        lines.append("    ip saddr { %s } tcp dport { %s } accept" % (", ".join(v4), port_set))
    if v6:
        lines.append("    ip6 saddr { %s } tcp dport { %s } accept" % (", ".join(v6), port_set))
    lines += ["    tcp dport { %s } counter drop" % port_set, "  }", "}"]
    return "\n".join(lines) + "\n"


def members(hostvars, names, interface, head=""):
    """The cluster's members, head first: each name, address (its ray_cluster_node_address, else the first IPv4
    address of the interface in its facts), the interface's addresses (None where its facts are not known) and
    whether it is the head. hostvars: every host's variables; names: the group's hosts, in inventory order."""
    head = head or (names[0] if names else "")
    ordered = [n for n in names if n == head] + [n for n in names if n != head]
    return [_member(name, hostvars.get(name) or {}, interface, name == head) for name in ordered]


def _member(name, host, interface, is_head):
    nic = (host.get("ansible_facts") or {}).get(str(interface).replace("-", "_").replace(".", "_"))
    addresses = None
    if isinstance(nic, dict):
        addresses = [a["address"] for a in [nic.get("ipv4") or {}] + (nic.get("ipv4_secondaries") or [])
                     if a.get("address")]
        addresses += [a["address"] for a in nic.get("ipv6") or [] if a.get("address")]
    given = host.get("ray_cluster_node_address") or ""
    address = given or (addresses[0] if addresses else "")
    return {"name": name, "address": address, "addresses": addresses, "head": is_head}


def cluster_view(hosts, this, in_run, settings):
    """What this host does in the cluster, with the checks of the whole cluster. hosts: each member's
    ray_cluster_node_address and ansible_facts (only the interface's are read); settings: this host's group,
    group_hosts (the group's hosts), interface, head, ports and workers. Returns errors, members, head, node (this
    host's member entry), address (the head's GCS, host:port) and part (head, worker; none on a host outside the
    group, where nothing of the cluster is checked)."""
    group = settings.get("group") or ""
    if not group:
        return {"part": "none", "errors": [], "members": []}
    names = list(settings.get("group_hosts") or [])
    if not names:
        missing = "ray_cluster_group=%s: no such group, or it has no host, in the inventory" % group
        return {"part": "none", "members": [], "errors": [missing]}
    if this not in names:
        return {"part": "none", "errors": [], "members": []}
    interface, asked_head = settings.get("interface") or "", settings.get("head") or ""
    found = members(hosts, names, interface, asked_head)
    head = found[0]
    ports, workers = settings.get("ports") or {}, list(settings.get("workers") or [])
    errors = [] if interface else ["ray_cluster_interface is empty: name the network interface the cluster's "
                                   "hosts reach each other on"]
    errors += port_errors(ports, workers) + member_errors(found, in_run, asked_head or head["name"])
    node = [m for m in found if m["name"] == this]
    return {"part": "head" if this == head["name"] else "worker", "errors": errors,
            "members": found, "head": head["name"], "node": node[0],
            "address": "%s:%s" % (_bracketed(head["address"]), ports.get("gcs"))}


def parse_status(text):
    """`ray status`: the active nodes and the GPUs (used, total) the cluster has; zeros where it says nothing."""
    found = {"nodes": 0, "gpus_used": 0.0, "gpus": 0.0}
    section = ""  # Ray 2.60 says "Total Usage:", older ones "Usage:"
    for line in str(text).splitlines():
        words = line.split()
        if line.strip().endswith(":") and not line.startswith(" "):
            section = line.strip()
        elif section == "Active:" and len(words) == 2 and words[0].isdigit() and words[1].startswith("node_"):
            found["nodes"] += int(words[0])
        elif section.endswith("Usage:") and len(words) >= 2 and words[1] == "GPU" and "/" in words[0]:
            used, total = words[0].split("/", 1)
            found["gpus_used"], found["gpus"] = float(used), float(total)
    return found
