"""Re-runs on the converged container host, as a user re-tunes one part: the site playbook with one
role's tag, alone. (A change that restarts the replicas one at a time under a request loop is
test_upgrade_model.py's model swap.)

- Every role's tag, alone, on the converged host: 0 changed, 0 failed (what a role needs from an earlier
  one it reads from the host: the model's and quantizer's local facts, deterministic paths); the model's
  re-run with the hub unreachable, and no request reaches the stand-in hub. Three of these runs go at once
  (each is its own `ansible-playbook --tags <role>`; a no-op run only reads the host).

Container scenario only (the VM converges only the kernel-bound tags)."""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

ROLE_TAGS = ["kernel", "nvidia_driver", "cuda_toolkit", "system_tuning", "gpu_tuning",
             "vllm_install", "model", "quantize", "ray_cluster", "vllm_service", "gateway", "monitoring"]
TAG_RUNS_AT_ONCE = 3


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("re-runs by tag are tested in the container scenario")


@pytest.fixture(scope="module")
def tag_runs(playbook, hub_requests, reruns_started):
    """Each role's tag alone, on the converged host: the runs are independent re-runs that change nothing, so
    they run TAG_RUNS_AT_ONCE at a time (the host's no-op runs read; none takes apt's or dpkg's lock). Returns
    {tag: (changed, failed, output, seconds)} and the hub requests made meanwhile."""
    # A module fixture is set up before the autouse _container_only above: it skips by itself.
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        pytest.skip("re-runs by tag are tested in the container scenario")
    reruns_started()  # the source build beside the checks starts now, if the other lane has not ended yet
    asked = len(hub_requests())

    def run(tag):
        # The model in place needs no hub: its re-run points at an address where nothing listens.
        extra = ["-e", "model_hf_endpoint=http://127.0.0.1:9"] if tag == "model" else []
        t0 = time.monotonic()
        return tag, playbook("--tags", tag, *extra) + (time.monotonic() - t0,)

    with ThreadPoolExecutor(max_workers=TAG_RUNS_AT_ONCE) as pool:
        runs = dict(pool.map(run, ROLE_TAGS))
    return runs, hub_requests()[asked:]


@pytest.mark.parametrize("tag", ROLE_TAGS)
def test_each_role_tag_alone_changes_nothing(tag, tag_runs):
    runs, hub_asked = tag_runs
    changed, failed, out, seconds = runs[tag]
    print("--tags %s: changed=%d in %.0f s (%d at once)" % (tag, changed, seconds, TAG_RUNS_AT_ONCE))
    assert failed == 0, out[-4000:]
    assert changed == 0, out[-6000:]
    assert not hub_asked, "a re-run asked the hub: %s" % hub_asked[:3]
