# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs that cross roles, each judged by its class, whatever role declares it.

Every playbook's first play reads the host's values of the variables named here (filter input_class_errors), so a
role cannot skip a class: the contract tests (tests/unit/test_role_contracts.py) hold every declared variable whose
name says its class to the table below.

- A unit name the user may choose carries the collection's prefix, so it cannot shadow a unit or template of the
  system (``getty@``, ``ssh``).
- A URL that lands where others can read it (apt's sources, a task's environment, a command line, nginx's
  repository file) holds no credentials; pip's sources go to a 0600 file and may.
- An address other hosts dial is not loopback.
- A folder or a name that becomes one is not one of the collection's own working names (``x.partial`` beside
  ``x``), and a secret's variable is never shown.
- A user or group a service runs as is never root.
- An environment variable is a secret by its shape: its name (KEY, TOKEN, PASS, AUTH...) or its value (a URL with
  credentials, a token's prefix, a long random string); secrets go to a 0600 file."""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.llmhost.vllm.plugins.module_utils import gateway
from ansible_collections.llmhost.vllm.plugins.module_utils.paths import path_problem, unit_dir_problem
from ansible_collections.llmhost.vllm.plugins.module_utils.value_checks import _number, is_loopback, is_on

# The collection's unit names: the replicas' template (vllm@) and everything else (llmhost-...).
UNIT_PREFIXES = ("llmhost-", "vllm")
# Folders the roles make beside their own, to replace one whole (temp path, then rename) or to keep the one before.
WORKING_SUFFIXES = (".partial", ".previous", ".old")

UNITS = frozenset(["gpu_tuning_unit", "system_tuning_cpu_policy_unit", "vllm_service_unit_name", "ray_cluster_unit",
                   "ray_cluster_firewall_unit"])
# Written where anyone on the host reads them, or handed to a tool in argv or its environment.
SHOWN_URLS = frozenset([
    "llmhost_stack_nvidia_repo_url", "llmhost_stack_nvidia_repo_key_url", "gateway_nginx_repo_url",
    "gateway_nginx_repo_key_url", "model_hf_endpoint", "vllm_install_git_url", "vllm_install_git_mirrors",
    "benchmark_url", "benchmark_script_url", "monitoring_alertmanager_urls",
])
# pip's sources: written to the venv's 0600 pip.conf, which pip reads; never in a task's environment.
PRIVATE_URLS = frozenset([
    "vllm_install_index_url", "vllm_install_extra_index_urls", "vllm_install_find_links", "quantize_index_url",
    "quantize_find_links", "monitoring_gpu_exporter_index_url", "monitoring_gpu_exporter_find_links",
    "benchmark_index_url", "benchmark_find_links",
])
# The whole URL is the secret (a webhook's token is in its path): declared no_log, written to 0600 files.
SECRET_URLS = frozenset(["monitoring_alert_webhook_url", "monitoring_alert_watchdog_url"])
# The schemes each URL may use: a mirror or an index is read over https://, http:// (a trusted network) or from a copy
# on the host (file://, or a path where the tool takes one); an endpoint dialled for answers (a server, a hub, a
# webhook) only over HTTP. Any other scheme would be handed to apt, pip, git or Python as it is.
MIRROR_SCHEMES = ("https://", "http://", "file://", "/")
ENDPOINT_SCHEMES = ("https://", "http://")
ENDPOINT_URLS = frozenset(["model_hf_endpoint", "benchmark_url", "monitoring_alertmanager_urls"]) | SECRET_URLS
# Keys a client sends in a header, which a server of the collection accepts: the form and strength of a gateway
# client's key (gateway.key_problem). The gateway's clients' own keys are checked with the rest of each client.
KEYS = frozenset(["vllm_service_api_key", "gateway_upstream_api_key"])
# Inputs that become a program's options or environment, and the one check each goes through in its role's validate.
OPTION_INPUTS = {
    "vllm_service_extra_args": "vllm_option_errors: vllm serve's own parser table; the plan's options, their short "
                               "forms and families refused; foreign code only with vllm_service_allow_foreign_code",
    "vllm_service_env": "role_input_errors: loader variables refused, the plan's and the unit's names refused, "
                        "secret-shaped entries to the 0600 file",
}
ADVERTISED = frozenset(["vllm_service_advertise_address"])
# Hosts that share one network namespace (containers on one machine's network) may advertise loopback to each other.
SHARED_NETNS = "vllm_service_advertise_loopback"
# Addresses a service binds: a literal address, as nginx, Prometheus and the exporters read it (a name that does
# not resolve at their start would fail only then, after the install). Prometheus, Alertmanager, node_exporter and
# the GPU exporter are given IPv4 only: their address is written without the brackets IPv6 needs.
LISTEN_ADDRESSES = {"gateway_listen_address": 6, "monitoring_listen_address": 4}
# Folders the roles create, chown or chmod on the host (handed to a service user, or root's configuration): never a
# shared or system folder, whatever role declares them. Playbooks that run one role (benchmark, doctor) check them
# too, in their first play.
TAKEN_FOLDERS = frozenset([
    "benchmark_home", "benchmark_work_dir", "gateway_config_dir", "model_hf_cache", "model_store",
    "monitoring_config_dir", "monitoring_gpu_exporter_home", "monitoring_grafana_dashboards_dir", "quantize_home",
    "vllm_install_build_dir", "vllm_install_home", "vllm_install_wheel_cache", "vllm_service_cache_dir",
    "vllm_service_config_dir", "ray_cluster_dir",
])
# Files a service appends to as root (nginx opens its logs before it drops privileges) and the uninstall removes:
# the collection's own by their name, under /var/log.
LOG_FILES = frozenset(["gateway_access_log"])
# Declared paths that are not folders the roles take: read only (a toolkit, a model, a venv another role made), on
# the controller (reports), or files and programs (each checked by its role's path_errors).
NOT_TAKEN = {
    "cuda_toolkit_home": "read", "vllm_install_cuda_home": "read", "model_local_path": "read",
    "vllm_service_model_path": "read", "vllm_service_venv": "read",
    "benchmark_dir": "controller", "doctor_dir": "controller", "host_report_dir": "controller",
    "kernel_grub_dropin": "file", "system_tuning_grub_dropin": "file", "llmhost_stack_nvidia_repo_keyring": "file",
    "monitoring_gpu_exporter_python": "program", "nvidia_driver_secure_boot_efivar": "file",
}
# Names that become a folder of their own beside others of the collection.
FOLDER_NAMES = frozenset(["model_name"])
# Users and groups a service of the collection runs as, or that own its files: never root (the unit's sandbox and the
# service's own user exist so that a flaw in vLLM or an exporter does not hold every right on the host).
SERVICE_USERS = frozenset(["vllm_install_user", "vllm_install_group", "vllm_service_user", "monitoring_gpu_exporter_user"])

# Request-body sizes (KiB) of a server that holds each body in memory up to that size (the gateway's nginx checks a
# body whole, so client_body_buffer_size is the limit): the most a body may take, so that a few clients sending at
# once cannot take the host's memory. A 128k-token prompt is under 1 MiB of JSON; 64 MiB leaves room for images.
BODY_SIZES = {"gateway_max_body_kib": 65536}
BODY_CLIENTS = 16

_CREDENTIALS_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]*@")
# Parts of an environment variable's name that say it holds a secret.
_SECRET_NAME_RE = re.compile(r"KEY|TOKEN|SECRET|PASS|PWD|AUTH|CRED|PRIVATE|COOKIE|SESSION|SIGNATURE|CERT", re.I)
# Values shaped like a secret: well-known token prefixes, a JWT, a bearer header, or a long run without spaces that
# mixes letters and digits.
_SECRET_VALUE_RE = re.compile(r"(hf_|sk-|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|eyJ|Bearer\s)\S+\Z")
_RANDOM_RE = re.compile(r"(?=[^\s/]*[0-9])(?=[^\s/]*[A-Za-z])[A-Za-z0-9+_=-]{32,}\Z")


def has_credentials(url):
    """Whether a URL carries user:password@ (or a token@) before its host."""
    return isinstance(url, str) and bool(_CREDENTIALS_RE.match(url.strip()))


def secret_shaped(name, value):
    """Whether an environment entry looks like a secret, by its name or by its value. Wrong guesses cost nothing:
    the entry still reaches the process, from the 0600 file instead of the readable one."""
    text = str(value) if value is not None else ""
    return bool(_SECRET_NAME_RE.search(str(name)) or has_credentials(text) or _SECRET_VALUE_RE.match(text)
                or _RANDOM_RE.match(text))


def split_env(env, secret):
    """The entries of ``env`` that are secret-shaped (``secret`` true) or not."""
    return {k: v for k, v in (env or {}).items() if secret_shaped(k, v) == bool(secret)}


def _items(value):
    """The strings of a value that is one, a list of them, or a mapping of them (git mirrors: URL to URL)."""
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, str)]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def service_user_problem(value):
    if isinstance(value, str) and value.strip() == "root":
        return ("is root: the service would hold every right on the host, which its own user and its unit's sandbox "
                "exist to prevent; use a user of its own (the default is vllm, llmhost-gpu-exporter for the exporter)")
    return None


def unit_problem(value):
    if isinstance(value, str) and not value.startswith(UNIT_PREFIXES):
        return ("does not start with the collection's prefix (%s): a unit or template of the system by that name "
                "would be replaced; choose a name such as llmhost-%s" % (" or ".join(UNIT_PREFIXES), value))
    return None


def advertised_problem(value):
    """An advertised address is dialled by other hosts: never loopback, localhost or every address."""
    text = str(value or "").strip().lower().rstrip(".")
    if is_loopback(text) or text == "localhost" or text.endswith(".localhost") or text in ("0.0.0.0", "::"):
        return ("is what other hosts would dial, and it names this host's loopback (or every address); give the "
                "address or name of the interface they reach it on (or vllm_service_advertise_loopback=true where the "
                "hosts share one network namespace)")
    return None


def listen_problem(value, versions):
    try:
        address = ipaddress.ip_address(str(value).strip("[]")) if isinstance(value, str) else None
    except ValueError:
        address = None
    if address is None or (versions == 4 and address.version != 4):
        return ("is not a literal %s address, which the service binds as it is (a name would be resolved only when the "
                "service starts, after the install); for example 127.0.0.1 or 0.0.0.0"
                % ("IPv4" if versions == 4 else "IPv4 or IPv6"))
    return None


def body_problem(value, most):
    """A body size in KiB over ``most``: that much memory per request in flight."""
    number = _number(value)
    if number is not None and number > most:
        return ("lets a few clients take the host's memory: the body of each request in flight is held in memory up "
                "to this size, so %d clients sending at once hold %.0f MiB; at most %d KiB (%d MiB)"
                % (BODY_CLIENTS, BODY_CLIENTS * number / 1024.0, most, most // 1024))
    return None


def log_problem(value):
    """A log is the collection's own: under /var/log, ending in .log, its name or a folder of it naming llmhost."""
    ours = (not path_problem(value) and value.startswith("/var/log/") and value.endswith(".log")
            and any(part.startswith("llmhost") for part in value[len("/var/log/"):].split("/")))
    if not ours:
        return ("is not a log file of the collection's own: a file under /var/log ending in .log whose name or folder "
                "starts with llmhost (nginx appends to it as root, and the uninstall removes it), such as "
                "/var/log/nginx/llmhost-gateway.access.log")
    return None


def working_name_problem(value):
    """A folder (or the last part of a path) ending as the collection's working folders do, or a path inside one (a
    rollback's .previous, a download's .partial): a swap or a rollback moves or removes that folder whole."""
    parts = str(value).rstrip("/").split("/") if isinstance(value, str) else [""]
    if parts[-1].endswith(WORKING_SUFFIXES):
        return ("ends as the collection's own working folders do (%s): the role would take %s for one of them"
                % (", ".join(WORKING_SUFFIXES), parts[-1]))
    inside = [part for part in parts[:-1] if part.endswith(WORKING_SUFFIXES)]
    if inside:
        return ("lies inside %s, which ends as the collection's own working folders do (%s): a swap or a rollback "
                "moves or removes that folder whole, and this one with it" % (inside[0], ", ".join(WORKING_SUFFIXES)))
    return None


def scheme_problem(name, value):
    """A URL (or each of a list's or a mapping's) whose scheme its class does not take."""
    schemes = ENDPOINT_SCHEMES if name in ENDPOINT_URLS else MIRROR_SCHEMES
    if any(item and not item.strip().lower().startswith(schemes) for item in _items(value)):
        return ("is not an https:// or http:// URL%s: another scheme (ftp://, ssh://...) or a relative path would be "
                "handed to the tool as it is; give %s"
                % ("" if name in ENDPOINT_URLS else ", a file:// URL or an absolute path",
                   "an https:// URL (http:// on a trusted network)" if name in ENDPOINT_URLS
                   else "https://, http:// (a trusted network), or file:///... or a path on the host (offline)"))
    return None


def _url_problem(name, value):
    if name in SHOWN_URLS and any(has_credentials(item) for item in _items(value)):
        return ("holds credentials (user:password@), which would show where the host's users read it (apt's sources, "
                "a command line or an environment); serve the mirror without them on a trusted network, or for pip "
                "use the *_index_url variables, which go to a 0600 file")
    return scheme_problem(name, value)


def _key_problem(name, value):
    if name in KEYS and value not in ("", None):
        return gateway.key_problem(value)
    return None


def judged():
    """Every variable errors() judges by its class (besides the declared folders it is given)."""
    return (UNITS | SHOWN_URLS | PRIVATE_URLS | SECRET_URLS | KEYS | ADVERTISED | FOLDER_NAMES | TAKEN_FOLDERS
            | LOG_FILES | SERVICE_USERS | set(LISTEN_ADDRESSES) | set(BODY_SIZES) | {SHARED_NETNS})


def errors(values, path_names=()):
    """One sentence per variable of ``values`` (name: value, what the user set) that its class refuses.
    ``path_names`` are the declared path variables, whose last part must not be a working name."""
    out = []
    for name, value in sorted((values or {}).items()):
        problem = None
        if name in UNITS:
            problem = unit_problem(value)
        elif name in SERVICE_USERS:
            problem = service_user_problem(value)
        elif name in SHOWN_URLS or name in PRIVATE_URLS or name in SECRET_URLS:
            problem = _url_problem(name, value)
        elif name in KEYS:
            problem = _key_problem(name, value)
        elif name in ADVERTISED and value not in ("", None) and not is_on(values.get(SHARED_NETNS)):
            problem = advertised_problem(value)
        if name in LISTEN_ADDRESSES:
            problem = listen_problem(value, LISTEN_ADDRESSES[name])
        if name in LOG_FILES:
            problem = log_problem(value)
        if name in BODY_SIZES:
            problem = body_problem(value, BODY_SIZES[name])
        if problem is None and name in TAKEN_FOLDERS and value not in ("", None):
            problem = path_problem(value) or unit_dir_problem(value)
        if problem is None and (name in FOLDER_NAMES or name in path_names) and value not in ("", None):
            problem = working_name_problem(value)
        if problem:
            shown = "(not shown)" if name in SHOWN_URLS | PRIVATE_URLS | SECRET_URLS | KEYS else repr(value)
            out.append("%s=%s %s" % (name, shown, problem))
    return out


_FOLDER_RE = re.compile(r"_(dir|home|venv|path)\Z")


def folder_names(options):
    """The declared folders among ``options`` (name: its option specs): type path, or named *_dir, *_home, *_venv,
    *_path."""
    return frozenset(name for name, specs in options.items()
                     if _FOLDER_RE.search(name) and not name.endswith("_file")
                     or any((spec or {}).get("type") == "path" and not name.endswith("_file") for spec in specs))


def taken_paths(merged):
    """{variable: folder} of the folders the roles would take, from the roles' defaults with the host's values over
    them; a value still holding a template (a default built from another) or empty is left to its role."""
    return {name: value for name, value in sorted(merged.items())
            if name in TAKEN_FOLDERS and isinstance(value, str) and value and "{" not in value and not path_problem(value)}


# Folders handed to a service user (it owns them) and folders root reads configuration, programs or models from: the
# first never equal to, inside or around the second, or the service user could swap what root later reads.
HANDED_OVER = frozenset(["vllm_service_cache_dir", "ray_cluster_dir"])
ROOT_READS = frozenset(["vllm_service_config_dir", "vllm_install_home", "quantize_home", "monitoring_gpu_exporter_home",
                        "monitoring_config_dir", "gateway_config_dir", "benchmark_home", "model_store"])


def _within(inner, outer):
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def handed_over_errors(taken):
    """A folder handed to a service user that is, holds or lies in a folder root reads from."""
    out = []
    for user_name in sorted(HANDED_OVER & set(taken)):
        mine = taken[user_name].rstrip("/")
        for root_name in sorted(ROOT_READS & set(taken)):
            theirs = taken[root_name].rstrip("/")
            if _within(mine, theirs) or _within(theirs, mine):
                out.append("%s=%s and %s=%s overlap: the first is handed to a service user, and root reads "
                           "configuration, programs or models from the second; give them folders apart"
                           % (user_name, mine, root_name, theirs))
    return out


# What each taken folder is once its role has made it: (owner, group, mode), None where the role leaves that part as
# it finds it (pip, huggingface_hub and the benchmark make these as root with the host's umask). SERVICE stands for
# the service user. A folder already on the host otherwise is someone else's: the run would re-own or re-mode it, or
# root would write where another user can change what it later reads, so the run is refused instead. A folder that is
# already exactly so needs no marker: nothing of it is taken over.
SERVICE = "<service user>"
MADE_AS = dict.fromkeys(TAKEN_FOLDERS, ("root", "root", "0755"))
MADE_AS.update({"vllm_service_cache_dir": (SERVICE, SERVICE, "0750"), "ray_cluster_dir": (SERVICE, SERVICE, "0700"), "model_hf_cache": ("root", None, None),
                "vllm_install_wheel_cache": ("root", None, None), "benchmark_work_dir": ("root", None, None)})
# Who the service user is: vllm_service's own choice, else vllm_install's.
SERVICE_USER_VARS = ("vllm_service_user", "vllm_install_user")


def service_user(merged):
    """The service user's name from the roles' values (SERVICE_USER_VARS, first one set)."""
    return next((merged[n] for n in SERVICE_USER_VARS if isinstance(merged.get(n), str) and merged[n]), "vllm")


def made_as(name, user):
    """(owner, group, mode) the role gives the folder of variable ``name``, with the service user named."""
    return tuple(user if part == SERVICE else part for part in MADE_AS[name])


def ownership_problem(name, seen, user):
    """Why a folder already on the host is someone else's (its owner, group or mode differ from what the role makes
    it, or a group other than root's may write where root writes), or None."""
    want = made_as(name, user)
    have = (seen.get("owner"), seen.get("group"), seen.get("mode"))
    wrong = [w for w, h in zip(want, have) if w is not None and w != h]
    if want[1] is None and int(have[2] or "0", 8) & 0o020 and have[1] != "root":
        wrong.append("no group write")
    if not wrong:
        return None
    return ("is on the host already as %s:%s %s, not as its role makes it (%s): it is someone else's, and would be "
            "re-owned, re-moded or written in as root. Name a folder that is not there yet, or make this one %s "
            "yourself" % (have[0], have[1], have[2], _shown(want), _shown(want)))


def _shown(want):
    owner, group, mode = want
    return " ".join(part for part in ("%s:%s" % (owner, group or "any group") if owner else "", mode or "") if part)


def shared_folder_errors(found, taken, user="vllm"):
    """``found``: path_info's answer for the folders of ``taken`` (variable: folder). A folder that is there already
    as a symbolic link, or shared (anyone may write in it, or its sticky bit is set, as in /tmp), is refused: the
    roles would hand it to a service user or root would read from it. So is one that is someone else's
    (ownership_problem; ``user`` is the service user), and a folder handed to a service user that overlaps one root
    reads from (handed_over_errors)."""
    out = handed_over_errors(taken)
    for name, path in sorted(taken.items()):
        seen = (found or {}).get(path) or {}
        if not seen.get("exists"):
            continue
        mode = int(seen.get("mode") or "0", 8)
        if seen.get("type") == "link":
            out.append("%s=%s is a symbolic link on the host; name the real folder" % (name, path))
        elif seen.get("type") != "directory":
            out.append("%s=%s is on the host already, and not a folder" % (name, path))
        elif mode & 0o1002:
            out.append("%s=%s is a shared folder on the host (mode %04o: anyone may write in it); the roles would take "
                       "it over. Name a folder of the collection's own, such as /srv/llmhost/..." % (name, path, mode))
        elif ownership_problem(name, seen, user):
            out.append("%s=%s %s" % (name, path, ownership_problem(name, seen, user)))
    return out
