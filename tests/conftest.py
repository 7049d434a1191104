"""Make this checkout importable as ``ansible_collections.llmhost.vllm`` for the unit tests."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = ROOT / ".cache" / "collections" / "ansible_collections" / "llmhost" / "vllm"
if not LINK.exists():
    LINK.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(ROOT, LINK)
sys.path.insert(0, str(ROOT / ".cache" / "collections"))
