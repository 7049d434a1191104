"""Device diagnosis: every NVML call the collector makes, timed, to stderr (faulthandler after 50 s)."""
import faulthandler
import sys
import time

import pynvml

faulthandler.dump_traceback_later(50, exit=True)
sys.path.insert(0, "/tmp/coll")
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv  # noqa: E402  pylint: disable=wrong-import-position

ORIG = nv.call


def traced(fn, *args):
    start = time.time()
    print("CALL", getattr(fn, "__name__", fn), args[1:] if len(args) > 1 else "", file=sys.stderr, flush=True)
    result = ORIG(fn, *args)
    print("  ->", round(time.time() - start, 3), str(result)[:120], file=sys.stderr, flush=True)
    return result


nv.call = traced
nv.collect(pynvml, clocks=False)
print("DONE facts", file=sys.stderr)
