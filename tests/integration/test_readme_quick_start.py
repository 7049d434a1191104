"""The README's quick start runs as written with the example inventory: every vaulted secret the inventory names is
made by a command of the quick start, and its playbook runs ask for the vault password."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_start():
    text = (ROOT / "README.md").read_text()
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_every_vaulted_secret_of_the_example_is_made_by_the_quick_start():
    named = set()
    for path in (ROOT / "inventories" / "example").rglob("*.yml"):
        named.update(re.findall(r"\{\{\s*(vault_\w+)\s*\}\}", path.read_text()))
    assert named, "the example inventory names no vaulted secret: drop this test's premise"
    text = quick_start()
    loop = re.search(r"for secret in ([\w ]+); do\s+ansible-vault encrypt_string --name \"\$secret\"", text)
    made = set(loop.group(1).split()) if loop else set()
    made.update(re.findall(r"ansible-vault encrypt_string --name (vault_\w+)", text))
    assert named <= made, "not made by the quick start: %s" % sorted(named - made)


def test_the_quick_starts_playbook_runs_ask_for_the_vault_password():
    runs = [line for line in quick_start().splitlines() if line.strip().startswith("ansible-playbook ")]
    assert runs and all("--ask-vault-pass" in line for line in runs), runs
