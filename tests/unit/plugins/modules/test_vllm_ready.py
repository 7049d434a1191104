"""vllm_ready's waits on a fake clock: exact probes and sleeps, no seconds spent (the module against a real HTTP
server on loopback: tests/integration/test_vllm_ready_http.py)."""
from ansible_collections.llmhost.vllm.plugins.module_utils import vllm_ready as logic


class FakeClock:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_the_wait_ends_at_the_first_200_with_the_seconds_it_took():
    clock, answers = FakeClock(), iter([(503, ""), (503, ""), (200, "")])
    waited = logic.wait_healthy(lambda *a: next(answers), "http://x", 10, clock=clock, sleep=clock.sleep)
    assert waited == 2.0 and clock.slept == [1.0, 1.0]


def test_the_wait_is_bounded_by_its_timeout():
    clock, calls = FakeClock(), []
    waited = logic.wait_healthy(lambda *a: calls.append(a) or (503, ""), "http://x", 5, clock=clock, sleep=clock.sleep)
    # probes at 0, 1, 2, 3, 4 and 5 s; none after the timeout, and no sleep past it
    assert waited is None and len(calls) == 6 and sum(clock.slept) == 5.0
