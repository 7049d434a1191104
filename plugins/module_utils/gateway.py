# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gateway's named clients, checked without ever quoting a key: each answer names the variable and the
client (by name, or by position where the name is missing)."""

from __future__ import annotations

import re

from ansible_collections.llmhost.vllm.plugins.module_utils import value_checks

FIELDS = ("name", "key", "rate", "burst")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
# A key reaches nginx only as its SHA-256, but clients send it in a header: printable, no space, long enough.
KEY_RE = re.compile(r"[A-Za-z0-9._~+/=-]{20,256}\Z")
# A key of fewer different characters than this is one a guess finds (aaaa..., abab..., 0000...).
KEY_MIN_DISTINCT = 8
# Words and runs a guess tries first; a key that is little else is one a guess finds.
WEAK_WORDS = ("password", "passwd", "secret", "changeme", "letmein", "qwerty", "admin", "welcome", "default",
              "apikey", "api-key", "api_key", "iloveyou", "monkey", "dragon", "master", "abc123")
_RUN_RE = re.compile(r"(0123|1234|2345|3456|4567|5678|6789|abcd|bcde|cdef|9876|8765|7654|6543|5432|4321|3210)+")
# Words nginx's map and geo blocks read as their own, not as a client's name.
NGINX_RESERVED = frozenset(["default", "hostnames", "include", "volatile"])
LIMITS = {"rate": (1, 100000), "burst": (0, 100000)}


def guessable(key):
    """Whether a key is one a guess finds: fewer than KEY_MIN_DISTINCT different characters once the words and runs a
    guess tries first (password, changeme, 123456...) and the separators are taken out."""
    rest = key.lower()
    for word in WEAK_WORDS:
        rest = rest.replace(word, "")
    rest = _RUN_RE.sub("", re.sub(r"[^a-z0-9]", "", rest))
    return len(set(rest)) < KEY_MIN_DISTINCT


def key_problem(key):
    """Why a key that clients send (in a header) is refused, or None: its form, or a guess's first tries. The key
    itself is never in the sentence."""
    if not (isinstance(key, str) and KEY_RE.match(key)):
        return "must be 20 to 256 letters, digits or '. _ ~ + / = -' (the key is not shown)"
    if guessable(key):
        return ("is a guess's first tries (a word such as password, a run such as 1234, or fewer than %d different "
                "characters; the key is not shown); use a random one (openssl rand -hex 24)" % KEY_MIN_DISTINCT)
    return None


def _label(index, client):
    name = client.get("name")
    return "client %s" % name if isinstance(name, str) and NAME_RE.match(name) else "item %d" % index


def _one(variable, index, client):
    if not isinstance(client, dict):
        return ["%s item %d must be a mapping with name and key" % (variable, index)]
    label = _label(index, client)
    out = ["%s %s: unknown field %s (fields: %s)" % (variable, label, f, ", ".join(FIELDS))
           for f in sorted(set(client) - set(FIELDS), key=str)]
    if not (isinstance(client.get("name"), str) and NAME_RE.match(client["name"])):
        out.append("%s %s: name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
                   % (variable, label))
    if key_problem(client.get("key")):
        out.append("%s %s: key %s" % (variable, label, key_problem(client.get("key"))))
    if isinstance(client.get("name"), str) and client["name"].lower() in NGINX_RESERVED:
        out.append("%s %s: name is a word nginx reserves (%s); choose another"
                   % (variable, label, ", ".join(sorted(NGINX_RESERVED))))
    for field, (low, high) in LIMITS.items():
        value = client.get(field)
        if field in client and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
            out.append("%s %s: %s=%s must be a whole number from %d to %d" % (variable, label, field, value, low, high))
    return out


def _repeats(values):
    seen, again = set(), []
    for v in values:
        if v in seen and v not in again:
            again.append(v)
        seen.add(v)
    return again


def client_errors(clients, variable="gateway_clients", upstream_key=""):
    """Sentences for every bad client; empty when all are fine. A client's key must differ from ``upstream_key`` (the
    key the gateway presents to vLLM): a client that knew it could go around the gateway's limits."""
    if not isinstance(clients, list):
        return ["%s must be a list of clients ({name, key}), got %s" % (variable, type(clients).__name__)]
    out = [e for i, c in enumerate(clients) for e in _one(variable, i, c)]
    good = [c for c in clients if isinstance(c, dict)]
    out += ["%s: two clients are named %s (names are compared without regard to case); names must be unique"
            % (variable, n) for n in _repeats([c.get("name").lower() for c in good if isinstance(c.get("name"), str)])]
    if _repeats([c.get("key") for c in good if isinstance(c.get("key"), str)]):
        out.append("%s: two clients share a key (the keys are not shown); each client needs its own" % variable)
    out += ["%s client %s: its key is the one the gateway presents to vLLM (gateway_upstream_api_key, or "
            "vllm_service_api_key; not shown); give the client a key of its own" % (variable, c.get("name"))
            for c in good if upstream_key and c.get("key") == upstream_key]
    return out


# Where nginx and its JavaScript module (njs) come from. The distribution's archive has both on Debian 12 and
# Ubuntu 24.04; Ubuntu 22.04's has nginx but no njs. nginx.org's own repository has both for Debian and Ubuntu.
DISTRIBUTION_PACKAGES = ["nginx", "libnginx-mod-http-js"]
NGINX_ORG_PACKAGES = ["nginx", "nginx-module-njs"]
NO_NJS = frozenset([("Ubuntu", "22.04")])
NGINX_ORG_FLAVOURS = {"Debian": "debian", "Ubuntu": "ubuntu"}
NGINX_ORG_URL = "https://nginx.org/packages/%s/"


def _nginx_source_name(wish, distribution, version):
    if wish != "auto":
        return wish
    return "nginx.org" if (distribution, version) in NO_NJS else "distribution"


def nginx_source(wish, facts, packages=(), repo_url=""):
    """Where the gateway's nginx and njs come from, for gateway_nginx_source (auto, distribution, nginx.org):
    {"source", "packages", "repo": {"url", "suite", "component"} or None, "error": a sentence or None}.
    auto takes nginx.org's repository only where the distribution's archive has no njs (Ubuntu 22.04)."""
    distribution, version = facts.get("distribution", ""), str(facts.get("distribution_version", ""))
    source = _nginx_source_name(wish, distribution, version)
    out = {"source": source, "repo": None, "error": None,
           "packages": list(packages) or (NGINX_ORG_PACKAGES if source == "nginx.org" else DISTRIBUTION_PACKAGES)}
    if source == "distribution" and (distribution, version) in NO_NJS and not packages:
        out["error"] = ("gateway_nginx_source=distribution: %s %s's archive has no njs module (libnginx-mod-http-js), "
                        "which the gateway's request checks need. Use gateway_nginx_source=auto or nginx.org (nginx.org's "
                        "own repository, or a mirror of it in gateway_nginx_repo_url), or gateway_state=skip."
                        % (distribution, version))
    elif source == "nginx.org":
        flavour = NGINX_ORG_FLAVOURS.get(distribution)
        if not flavour or not facts.get("distribution_release"):
            out["error"] = ("gateway_nginx_source=%s: nginx.org's repository has packages for Debian and Ubuntu only, not "
                            "for %s %s." % (wish, distribution or "this distribution", version))
        else:
            out["repo"] = {"url": repo_url or NGINX_ORG_URL % flavour, "suite": facts["distribution_release"],
                           "component": "nginx"}
    return out


def nginx_repo_errors(repo_url, key_url):
    """gateway_nginx_repo_url (empty: nginx.org's own) lands in apt's source; gateway_nginx_repo_key_url decides
    what apt trusts. Sentences naming each, by the shared checks of their classes."""
    return (value_checks.name_errors({"gateway_nginx_repo_url": [repo_url] if repo_url else []}, kind="source")
            + value_checks.repo_key_errors({"gateway_nginx_repo_key_url": key_url}))


def fleet_errors(remote, members, served, key, upstream_key_given):
    """Why one upstream cannot front the hosts of a fleet; empty when it can. ``remote``: the other hosts' variables
    (mappings with inventory_hostname, vllm_service_network_endpoints, vllm_service_api_key, vllm_service_plan: a
    worker of a model served in stages across a Ray cluster has no replica, and is not asked for one); ``members`` and
    ``served``: every host of the group and the model each serves; ``key``: the key this gateway presents to vLLM;
    ``upstream_key_given``: gateway_upstream_api_key is set, so the hosts' own keys are not compared."""
    out = ["host %s's replicas listen on loopback only: set vllm_service_host there to an address this host reaches "
           "(with vllm_service_api_key), or vllm_service_advertise_address" % h.get("inventory_hostname")
           for h in remote if not h.get("vllm_service_network_endpoints") and not _stage_worker(h)]
    if len(set(served)) > 1:
        out.append("the hosts serve different models (%s); one upstream needs one model"
                   % ", ".join("%s: %s" % pair for pair in zip(members, served)))
    if not upstream_key_given and any((h.get("vllm_service_api_key") or "") != key for h in remote):
        out.append("the hosts hold different vllm_service_api_key values (not shown): give them one key, or set "
                   "gateway_upstream_api_key to a key they all accept")
    return out


def _stage_worker(host):
    """A worker of a model served in stages across a Ray cluster: it runs no replica, the head's API server serves."""
    return ((host.get("vllm_service_plan") or {}).get("cluster_role")) == "worker"


def upstream_errors(v):
    """Why this host's gateway has no upstream it can front; empty when it has. ``v``: ``wanted`` (a gateway here),
    ``check_mode``, ``group`` (gateway_backends_group), ``missing`` (hosts of the group, or this host, without a
    serving plan in this run), and fleet_errors' arguments (``remote``, ``members``, ``served``, ``key``,
    ``upstream_key_given``). Under --check a fresh host has no plan yet, and other hosts' endpoints are not known."""
    if not v["wanted"] or v["check_mode"]:
        return []
    where = " (gateway_backends_group=%s)" % v["group"] if v["group"] else ""
    if v["missing"]:
        return ["gateway: vllm_service made no serving plan on %s in this run, so there is no replica there to put "
                "behind the gateway%s: converge vllm_service first (the site playbook runs it before the gateway), "
                "and keep every host of the group in the run (--limit leaves hosts out)."
                % (", ".join(v["missing"]), where)]
    if not v["group"]:
        return []
    found = fleet_errors(v["remote"], v["members"], v["served"], v["key"], v["upstream_key_given"])
    return ["gateway_backends_group=%s: %s" % (v["group"], "; ".join(found))] if found else []


_ENDPOINT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}\Z")


def weight_errors(weights, variable="gateway_backend_weights"):
    """nginx upstream weights by replica (host:port as vllm_service lists it): whole numbers from 0 (out of rotation,
    nginx's ``down``: tune.yml measures it alone) to 1000."""
    if not isinstance(weights, dict):
        return ["%s must be a mapping of replica (host:port) to a weight, got %r" % (variable, weights)]
    out = []
    for endpoint, weight in sorted(weights.items(), key=lambda kv: str(kv[0])):
        if not _ENDPOINT.match(str(endpoint)):
            out.append("%s: %r is not a replica's host:port" % (variable, endpoint))
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 1000:
            out.append("%s[%s]=%r must be a whole number from 0 (out of rotation) to 1000" % (variable, endpoint, weight))
    return out
