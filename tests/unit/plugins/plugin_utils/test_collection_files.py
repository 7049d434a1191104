"""What the first play's checks read (plugin_utils/collection_files.py)."""
from ansible_collections.llmhost.vllm.plugins.plugin_utils.collection_files import host_values, load_yaml, role_files


def test_files_that_do_not_parse_are_left_out(tmp_path):
    (tmp_path / "a.yml").write_text("x: 1\n")
    (tmp_path / "b.yml").write_text("x: [\n")
    (tmp_path / "c.yml").write_text("- y\n")
    assert load_yaml(str(tmp_path / "*.yml")) == [{"x": 1}, ["y"]]


def test_role_files_names_every_role(tmp_path):
    assert role_files(tmp_path, "defaults", "*.yml") == str(tmp_path / "roles" / "*" / "defaults" / "*.yml")


def test_a_value_that_fails_to_template_is_skipped_and_the_others_read():
    class HostVars(dict):
        def __getitem__(self, key):
            if key == "broken":
                raise RuntimeError("'undefined_thing' is undefined")
            return dict.__getitem__(self, key)
    got = host_values(HostVars(a=1, broken="{{ undefined_thing }}", c=3), ["a", "broken", "c", "absent"])
    assert got == {"a": 1, "c": 3}


def test_warm_parses_each_file_once_and_a_changed_file_is_read_again(tmp_path, monkeypatch):
    from ansible_collections.llmhost.vllm.plugins.plugin_utils import collection_files
    (tmp_path / "roles" / "one" / "defaults").mkdir(parents=True)
    (tmp_path / "playbooks").mkdir()
    defaults, play = tmp_path / "roles" / "one" / "defaults" / "main.yml", tmp_path / "playbooks" / "site.yml"
    defaults.write_text("one_x: 1\n")
    play.write_text("- hosts: all\n")
    monkeypatch.setattr(collection_files, "_PARSED", {})
    assert collection_files.warm(tmp_path) == 2
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    assert load_yaml(str(defaults)) == [{"one_x": 1}] and opened == []
    defaults.write_text("one_x: 22\n")
    assert load_yaml(str(defaults)) == [{"one_x": 22}] and opened == [str(defaults)]
