"""Helpers shared by the testinfra checks of every Molecule scenario."""
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "")


@pytest.fixture
def scenario():
    """Name of the Molecule scenario under test (``container`` or ``vm``)."""
    return SCENARIO


@pytest.fixture
def kernel_tier(scenario):
    """True where the host has its own kernel (the VM); container checks skip kernel-only facts."""
    return scenario == "vm"


# The vm scenario converges only the kernel-bound tags (molecule/vm/molecule.yml); the apt work of
# nvidia_driver and cuda_toolkit, and the serving layer, are proven in the container scenario.
IN_CONTAINER_ONLY = "proven in the container scenario; the vm converges only kernel-bound tags"


@pytest.fixture
def container_scope(kernel_tier):
    """Skips a check of work that the vm scenario does not converge."""
    if kernel_tier:
        pytest.skip(IN_CONTAINER_ONLY)


def pytest_collection_modifyitems(items):
    """Checks marked changes_the_host run last (by their order, then as collected): each leaves the converged
    host changed, so none has to spend a second run putting it back for the checks after it. Checks marked
    after_the_reruns run just before them: they read what work beside the checks made late (see BESIDE). Checks
    marked before_the_others run first: they leave state every later check reads (the adopted tuning)."""
    def key(item):
        mark = item.get_closest_marker("changes_the_host")
        if mark is not None:
            return (2, mark.kwargs.get("order", 0))
        if item.get_closest_marker("before_the_others"):
            return (-1, 0)
        return (1, 0) if item.get_closest_marker("after_the_reruns") else (0, 0)
    items.sort(key=key)


def _playbook(*args, path="molecule/_shared/converge.yml", inventory=(), recap_host="llmhost-ctr", nice=0):
    """Run the scenario's converge (the real site playbook) again, or another playbook of the checkout (`path`),
    with the scenario's inventory and any more inventory files; returns (changed, failed, output) of `recap_host`.
    `nice`: the controller's niceness (work beside the checks yields to them)."""
    project = Path(os.environ["MOLECULE_PROJECT_DIRECTORY"])
    more = [arg for source in inventory for arg in ("-i", str(source))]
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", os.environ["MOLECULE_INVENTORY_FILE"], *more,
           str(project / path), *args]
    run = subprocess.run(["nice", "-n", str(nice), *cmd], capture_output=True, text=True, timeout=900, check=False)
    out = run.stdout + run.stderr
    recap = re.search(r"%s\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)" % re.escape(recap_host),
                      out)
    assert recap, out[-3000:]
    return int(recap.group(1)), int(recap.group(2)) + int(recap.group(3)) + run.returncode, out


LOOP_SCRIPT = Path(__file__).resolve().parents[1] / "files" / "request_loop.py"


def _under_load(host, name, targets, action, limit=300):
    """Run action() while files/request_loop.py asks each target ("URL,KEY[,CA_FILE]") for a completion once
    a tick on the host, as the unit `name`; returns (action's result, ticks), a tick being
    [seconds, [ok per target], [latency per target]]. The loop stops when action() ends, or after `limit` s."""
    stop, out = "/run/%s.stop" % name, "/run/%s.json" % name
    host.run_test("rm -f %s %s && mkdir -p /usr/local/lib/llmhost-test" % (stop, out))
    host.run_test("cat > /usr/local/lib/llmhost-test/request_loop.py <<'EOF'\n%sEOF" % LOOP_SCRIPT.read_text())
    host.run_test("systemd-run --unit=%s --collect /usr/bin/python3 /usr/local/lib/llmhost-test/request_loop.py %s %d %s %s"
                  % (name, out, limit, stop, " ".join(targets)))
    time.sleep(1)
    try:
        result = action()
    finally:
        host.run("touch %s" % stop)
        for _try in range(30):
            if host.file(out).exists:
                break
            time.sleep(1)
    return result, json.loads(host.file(out).content_string)


@pytest.fixture(scope="session")
def under_load():
    """Run a playbook (or anything) under a bounded request loop on the host; see _under_load."""
    return _under_load


@pytest.fixture(scope="session")
def playbook():
    """The site playbook again on the converged host, with the given arguments (container scenario)."""
    return _playbook


# --- work beside the checks ------------------------------------------------------------------------------------------
# A test module may name long work that needs none of the converged host's serving state and changes none of what
# other checks read: `BESIDE = {name: work}`, `work` called with the playbook runner and with a
# function that waits until the other lane of `make test` has ended or the checks reach the tag re-runs. Each starts
# with the first
# check, on a thread of its own, and yields to the checks: its playbooks' controller runs niced (nice=10) and a
# second host it makes takes a small CPU share. The check that needs its result waits for it (fixture
# beside_result). Where the CPU goes while both lanes run, the checks lose what the work gains; after the VM lane and
# unit end, one core is free, and the work runs there (the source build, unless the re-runs come first: the checks
# after them wait for it). The work never asks the stand-in hub (the checks count its
# requests). What could meet it is ordered, not timed:
# - every check marked changes_the_host, and any check that takes the fixture beside_done, starts once all the work
#   has ended (it would change what the work's playbook runs read);
# - a check's own apt or dpkg command waits for a lock that the work's apt holds (apt_command).
BESIDE_LIMIT = 1800
OTHER_LANE_LIMIT = 1200
_BESIDE_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="beside")
_BESIDE_JOBS = {}  # name: future


_RERUNS_STARTED = threading.Event()


def _after_the_other_lane():
    """Wait (at most OTHER_LANE_LIMIT s) until `make test`'s other lane has ended (tests/harness/run-layers.sh makes
    LLMHOST_LANE_B_DONE then), or until the checks reach the tag re-runs (test_vllm_service_rerun.py), whichever
    comes first: the checks after those wait for this work, and a wait for the other lane there costs more than
    sharing the cores; at once where the scenario runs alone."""
    done = os.environ.get("LLMHOST_LANE_B_DONE")
    deadline = time.monotonic() + OTHER_LANE_LIMIT
    while done and not os.path.exists(done) and not _RERUNS_STARTED.is_set() and time.monotonic() < deadline:
        _RERUNS_STARTED.wait(5)


@pytest.fixture(scope="session")
def reruns_started():
    """Says that the checks have reached the tag re-runs: work beside the checks that waits for the other lane
    starts now (see _after_the_other_lane)."""
    return _RERUNS_STARTED.set


@pytest.fixture(scope="session", autouse=True)
def _beside(request):
    """Start every collected module's BESIDE work (container scenario); at the end, wait for what is still running."""
    if SCENARIO == "container":
        modules = {item.module: None for item in request.session.items}  # in collection order, once each
        for module in modules:
            for name, work in getattr(module, "BESIDE", {}).items():
                _BESIDE_JOBS[name] = _BESIDE_POOL.submit(work, _playbook, _after_the_other_lane)
    yield
    _BESIDE_POOL.shutdown(wait=True)


def _beside_result(name):
    """The result of the work started beside the checks under `name` (waits for it; raises what it raised)."""
    return _BESIDE_JOBS[name].result(timeout=BESIDE_LIMIT)


@pytest.fixture(scope="session")
def beside_result():
    return _beside_result


def _beside_ended():
    """Wait until the work beside the checks has ended, however it ended."""
    for future in list(_BESIDE_JOBS.values()):
        future.exception(timeout=BESIDE_LIMIT)  # what it raised is for the check that needs its result


@pytest.fixture
def beside_done():
    """For a check that changes what the work beside the checks reads: it starts once that work has ended."""
    _beside_ended()


@pytest.fixture(autouse=True)
def _changes_the_host_after_the_work_beside(request):
    if request.node.get_closest_marker("changes_the_host") is not None:
        _beside_ended()


def _apt_command(host, command, limit=300):
    """Run an apt or dpkg command on the host, again while another apt holds dpkg's or the lists' lock (apt-mark and
    `apt-get update` do not wait for it); returns the last result."""
    deadline = time.monotonic() + limit
    while True:
        result = host.run(command)
        if result.rc == 0 or "lock" not in result.stdout + result.stderr or time.monotonic() > deadline:
            return result
        time.sleep(2)


@pytest.fixture(scope="session")
def apt_command():
    return _apt_command


def _hub_requests():
    """Every request the harness's stand-in hub has answered (tests/harness/hfhub.py), oldest first. No work beside
    the checks asks the hub (the second host's model comes from a folder), so no check counts its requests."""
    log = Path(os.environ["LLMHOST_HFHUB_ROOT"]) / "requests.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture(scope="session")
def hub_requests():
    return _hub_requests
