"""The gateway's clients: every bad one named, and no sentence ever quotes a key."""
from ansible_collections.llmhost.vllm.plugins.module_utils.gateway import client_errors

KEY_A = "alice-key-0123456789abcdef"
KEY_B = "bob+key/0123456789=~._-"


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
        "gateway_clients client carol: key must be 20 or more letters, digits or '. _ ~ + / = -' (the key is not shown)",
        "gateway_clients client dave: key must be 20 or more letters, digits or '. _ ~ + / = -' (the key is not shown)",
        "gateway_clients client erin: key must be 20 or more letters, digits or '. _ ~ + / = -' (the key is not shown)",
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
    assert errors == ["gateway_clients: two clients are named a; names must be unique",
                      "gateway_clients: two clients share a key (the keys are not shown); each client needs its own"]
    assert KEY_A not in " ".join(errors)


def test_not_a_list():
    assert client_errors({"name": "a"}) == ["gateway_clients must be a list of clients ({name, key}), got dict"]
