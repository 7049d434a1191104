"""Device diagnosis: every NVML call the collector makes, timed, to stderr (faulthandler after 50 s)."""
import faulthandler, sys, time, pynvml
faulthandler.dump_traceback_later(50, exit=True)
sys.path.insert(0, "/tmp/coll")
from ansible_collections.llmhost.vllm.plugins.module_utils import nvml as nv
orig = nv._call
def traced(fn, *a):
    t = time.time(); print("CALL", getattr(fn, "__name__", fn), a[1:] if len(a) > 1 else "", file=sys.stderr, flush=True)
    r = orig(fn, *a); print("  ->", round(time.time() - t, 3), str(r)[:120], file=sys.stderr, flush=True); return r
nv._call = traced
d = nv.collect(pynvml, clocks=False)
print("DONE facts", file=sys.stderr)
