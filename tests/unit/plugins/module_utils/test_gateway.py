"""The gateway's clients: every bad one named, and no sentence ever quotes a key."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import gateway
from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import client_errors, nginx_repo_errors, nginx_source

KEY_A = "alice-key-0123456789abcdef"
KEY_B = "bob+key/9f3Xq7Lm2w=~._-"


def test_good_clients_pass():
    assert client_errors([]) == []
    assert client_errors([{"name": "alice", "key": KEY_A}, {"name": "bob.2", "key": KEY_B, "rate": 1, "burst": 0}]) == []


def test_each_bad_client_is_named_and_no_key_is_quoted():
    bad = [
        "alice",
        {"name": "bad name", "key": KEY_A},
        {"name": "carol", "key": "short"},
        {"name": "dave", "key": "has space in it 0123456789"},
        {"name": "erin"},
        {"name": "frank", "key": KEY_B, "rate": 0, "burst": True, "weight": 2},
    ]
    errors = client_errors(bad, "gateway_clients")
    assert errors == [
        "gateway_clients item 0 must be a mapping with name and key",
        "gateway_clients item 1: name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        "gateway_clients client carol: key must be 20 to 256 letters, digits or '. _ ~ + / = -' (the key is not shown)",
        "gateway_clients client dave: key must be 20 to 256 letters, digits or '. _ ~ + / = -' (the key is not shown)",
        "gateway_clients client erin: key must be 20 to 256 letters, digits or '. _ ~ + / = -' (the key is not shown)",
        "gateway_clients client frank: unknown field weight (fields: name, key, rate, burst)",
        "gateway_clients client frank: rate=0 must be a whole number from 1 to 100000",
        "gateway_clients client frank: burst=True must be a whole number from 0 to 100000",
    ]
    text = " ".join(errors)
    for client in bad[1:]:
        if client.get("key"):
            assert client["key"] not in text


def test_names_and_keys_are_each_clients_own():
    errors = client_errors([{"name": "a", "key": KEY_A}, {"name": "a", "key": KEY_B}, {"name": "b", "key": KEY_A}])
    assert errors == ["gateway_clients: two clients are named a (names are compared without regard to case); names must be unique",
                      "gateway_clients: two clients share a key (the keys are not shown); each client needs its own"]
    assert KEY_A not in " ".join(errors)


def test_not_a_list():
    assert client_errors({"name": "a"}) == ["gateway_clients must be a list of clients ({name, key}), got dict"]


# Where nginx and njs come from: the distribution's packages where its archive has njs, nginx.org's where not.
JAMMY = {"distribution": "Ubuntu", "distribution_version": "22.04", "distribution_release": "jammy"}
NOBLE = {"distribution": "Ubuntu", "distribution_version": "24.04", "distribution_release": "noble"}
BOOKWORM = {"distribution": "Debian", "distribution_version": "12", "distribution_release": "bookworm"}
ROCKY = {"distribution": "Rocky", "distribution_version": "9.4", "distribution_release": "Blue Onyx"}


@pytest.mark.parametrize("wish,facts,source,packages,url", [
    ("auto", JAMMY, "nginx.org", ["nginx", "nginx-module-njs"], "https://nginx.org/packages/ubuntu/"),
    ("auto", NOBLE, "distribution", ["nginx", "libnginx-mod-http-js"], None),
    ("auto", BOOKWORM, "distribution", ["nginx", "libnginx-mod-http-js"], None),
    ("nginx.org", BOOKWORM, "nginx.org", ["nginx", "nginx-module-njs"], "https://nginx.org/packages/debian/"),
    ("distribution", NOBLE, "distribution", ["nginx", "libnginx-mod-http-js"], None),
])
def test_nginx_comes_from_where_njs_is(wish, facts, source, packages, url):
    got = nginx_source(wish, facts)
    assert (got["source"], got["packages"], got["error"]) == (source, packages, None)
    assert (got["repo"] or {}).get("url") == url
    if url:
        assert got["repo"]["suite"] == facts["distribution_release"] and got["repo"]["component"] == "nginx"


def test_a_mirror_and_the_user_s_own_packages_are_kept():
    got = nginx_source("auto", JAMMY, ["nginx", "nginx-module-njs", "nginx-module-geoip"], "http://mirror.lan/nginx/ubuntu/")
    assert got["repo"]["url"] == "http://mirror.lan/nginx/ubuntu/" and "nginx-module-geoip" in got["packages"]
    # packages of the user's own on Ubuntu 22.04 (a PPA's njs): the distribution source is theirs to choose
    assert nginx_source("distribution", JAMMY, ["nginx", "my-njs"])["error"] is None


@pytest.mark.parametrize("wish,facts,words", [
    ("distribution", JAMMY, "gateway_nginx_source=distribution: Ubuntu 22.04's archive has no njs module"),
    ("nginx.org", ROCKY, "gateway_nginx_source=nginx.org: nginx.org's repository has packages for Debian and Ubuntu only"),
    ("nginx.org", dict(BOOKWORM, distribution_release=""), "has packages for Debian and Ubuntu only"),
])
def test_a_source_that_cannot_give_njs_here_is_refused_by_name(wish, facts, words):
    assert words in nginx_source(wish, facts)["error"]


@pytest.mark.parametrize("repo,key,words", [
    ("", "https://nginx.org/keys/nginx_signing.key", None),
    ("http://mirror.lan/nginx/ubuntu/", "file:///srv/keys/nginx_signing.key", None),
    ("http://mirror.lan/nginx ubuntu/", "https://nginx.org/keys/nginx_signing.key", "gateway_nginx_repo_url: "),
    ("https://mirror.lan/nginx/\nTrusted: yes", "https://nginx.org/keys/nginx_signing.key", "is not a URL"),
    ("", "http://nginx.org/keys/nginx_signing.key", "gateway_nginx_repo_key_url=http://nginx.org/keys/nginx_signing.key: "
     "a key over plain http could be swapped on the way"),
    ("", "HTTP://nginx.org/keys/nginx_signing.key", "a key over plain http"),
    ("", "", "gateway_nginx_repo_key_url: '' is not a URL"),
])
def test_nginx_org_s_repository_and_key_are_ones_apt_can_use_safely(repo, key, words):
    errors = nginx_repo_errors(repo, key)
    assert (errors == []) if words is None else any(words in e for e in errors), errors


@pytest.mark.parametrize("clients,upstream,words", [
    ([{"name": "alice", "key": "a" * 30}], "", "key is a guess's first tries"),
    ([{"name": "alice", "key": "abab" * 8}], "", "key is a guess's first tries"),
    ([{"name": "alice", "key": "Password-Password-123456"}], "", "key is a guess's first tries"),
    ([{"name": "alice", "key": "changeme_changeme_2024"}], "", "key is a guess's first tries"),
    ([{"name": "alice", "key": "qwerty-0123456789-abcdef"}], "", "key is a guess's first tries"),
    ([{"name": "alice", "key": KEY_A + "x" * 300}], "", "key must be 20 to 256"),
    ([{"name": "Alice", "key": KEY_A}, {"name": "alice", "key": KEY_B}], "", "two clients are named alice"),
    ([{"name": "default", "key": KEY_A}], "", "name is a word nginx reserves"),
    ([{"name": "alice", "key": KEY_A}], KEY_A, "client alice: its key is the one the gateway presents to vLLM"),
])
def test_keys_a_guess_finds_shared_names_and_vllm_s_own_key_are_refused(clients, upstream, words):
    errors = client_errors(clients, upstream_key=upstream)
    assert any(words in e for e in errors), errors
    assert not any(KEY_A in e or KEY_B in e or "aaaa" in e for e in errors), "a key is quoted"


@pytest.mark.parametrize("key", ["test-key-of-alice-0123456789", "9f86d081884c7d659a2feaa0c55ad015", "k7Rq-Zp2x-Lm9w-Tt4v-Hs8n",
                                 "password-but-then-Xk29fQ7bLm"])
def test_random_looking_keys_are_not_guessable(key):
    from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import guessable
    assert not guessable(key)


def test_a_client_key_other_than_vllm_s_passes():
    assert client_errors([{"name": "alice", "key": KEY_A}], upstream_key=KEY_B) == []


@pytest.mark.parametrize("remote,served,upstream_given,words", [
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": ["10.0.0.2:8000"], "vllm_service_api_key": "k"}],
     ["qwen", "qwen"], False, []),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": [], "vllm_service_api_key": "k"}],
     ["qwen", "qwen"], False, ["host b's replicas listen on loopback only"]),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": ["x:1"], "vllm_service_api_key": "k"}],
     ["qwen", "llama"], False, ["the hosts serve different models (a: qwen, b: llama)"]),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": ["x:1"], "vllm_service_api_key": "other"}],
     ["qwen", "qwen"], False, ["the hosts hold different vllm_service_api_key values (not shown)"]),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": ["x:1"], "vllm_service_api_key": "other"}],
     ["qwen", "qwen"], True, []),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": ["x:1"]}], ["qwen", "qwen"], False,
     ["the hosts hold different vllm_service_api_key values"]),
    # a worker of a model served in stages across a Ray cluster runs no replica: the head's API server serves
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": [], "vllm_service_api_key": "k",
       "vllm_service_plan": {"cluster_role": "worker", "replicas": []}}], ["qwen", "qwen"], False, []),
    ([{"inventory_hostname": "b", "vllm_service_network_endpoints": [], "vllm_service_api_key": "k",
       "vllm_service_plan": {"cluster_role": "member", "replicas": [{}]}}], ["qwen", "qwen"], False,
     ["host b's replicas listen on loopback only"]),
])
def test_a_fleet_is_one_upstream_only_when_every_host_can_join_it(remote, served, upstream_given, words):
    from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import fleet_errors
    got = fleet_errors(remote, ["a", "b"], served, "k", upstream_given)
    assert len(got) == len(words) and all(w in g for w, g in zip(words, got)), got
    assert not any("other" in g for g in got), "a key is quoted"


LOOPBACK_B = [{"inventory_hostname": "b", "vllm_service_network_endpoints": [], "vllm_service_api_key": "k"}]
UPSTREAM = {"wanted": True, "check_mode": False, "group": "", "missing": [], "remote": [], "members": ["a"],
            "served": ["qwen"], "key": "k", "upstream_key_given": False}


@pytest.mark.parametrize("change,words", [
    ({}, []),
    ({"missing": ["a"]}, ["gateway: vllm_service made no serving plan on a in this run"]),
    ({"missing": ["a"], "wanted": False}, []),
    ({"missing": ["a"], "check_mode": True}, []),
    ({"group": "llm", "missing": ["b"], "members": ["a", "b"]},
     ["no serving plan on b in this run, so there is no replica there to put behind the gateway "
      "(gateway_backends_group=llm)"]),
    ({"group": "llm", "members": ["a", "b"], "remote": LOOPBACK_B, "served": ["qwen", "qwen"]},
     ["gateway_backends_group=llm: host b's replicas listen on loopback only"]),
    ({"group": "llm", "members": ["a", "b"], "remote": LOOPBACK_B, "served": ["qwen", "qwen"], "check_mode": True}, []),
])
def test_a_gateway_needs_a_plan_behind_it_and_one_upstream_for_its_group(change, words):
    from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import upstream_errors
    got = upstream_errors(dict(UPSTREAM, **change))
    assert len(got) == len(words) and all(w in g for w, g in zip(words, got)), got


@pytest.mark.parametrize("weights, words", [
    ({}, []),
    ({"127.0.0.1:8000": 1, "127.0.0.1:8001": 1000, "[::1]:8002": 9, "gpu-box.lan:8000": 2}, []),
    ({"127.0.0.1:8000": 0}, []),
    ({"127.0.0.1:8000": -1}, ["gateway_backend_weights[127.0.0.1:8000]=-1 must be a whole number from 0 (out of rotation) to 1000"]),
    ({"127.0.0.1:8000": 1001}, ["must be a whole number from 0 (out of rotation) to 1000"]),
    ({"127.0.0.1:8000": "9"}, ["must be a whole number"]),
    ({"127.0.0.1:8000": True}, ["must be a whole number"]),
    ({"127.0.0.1:8000": 2.5}, ["must be a whole number"]),
    ({"127.0.0.1": 9}, ["'127.0.0.1' is not a replica's host:port"]),
    ({"127.0.0.1:8000; down": 9}, ["is not a replica's host:port"]),
    (["127.0.0.1:8000"], ["gateway_backend_weights must be a mapping"]),
])
def test_weight_errors(weights, words):
    errors = gateway.weight_errors(weights)
    assert len(errors) == len(words), errors
    for error, word in zip(errors, words):
        assert word in error
