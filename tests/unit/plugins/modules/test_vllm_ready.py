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


def test_a_unit_that_gives_up_ends_the_wait_at_once_with_why():
    clock, states = FakeClock(), iter([None, None, "vllm@0.service failed (exit-code): see journalctl -u vllm@0.service"])
    waited = logic.wait_healthy(lambda *a: (0, ""), "http://x", 600, clock=clock, sleep=clock.sleep,
                                gone=lambda: next(states))
    assert waited.startswith("vllm@0.service failed") and clock.slept == [1.0, 1.0]


def test_a_server_that_answers_is_ready_whatever_its_unit_did_before():
    waited = logic.wait_healthy(lambda *a: (200, ""), "http://x", 5, gone=lambda: "never asked")
    assert waited == 0.0


def test_unit_gone_reads_systemds_state():
    unit = "vllm@0.service"
    assert logic.unit_gone({"NRestarts": "3"}, {"ActiveState": "activating", "NRestarts": "4"}, unit) is None
    assert "exited 2 times while starting" in logic.unit_gone({"NRestarts": "3"}, {"NRestarts": "5"}, unit)
    assert logic.unit_gone({}, {"ActiveState": "failed", "Result": "start-limit-hit"}, unit) == (
        "vllm@0.service failed (start-limit-hit): see journalctl -u vllm@0.service")
    assert logic.unit_gone({"NRestarts": "x"}, {"NRestarts": "1"}, unit) is None


def test_check_server_names_the_unit_that_gave_up():
    problem, facts = logic.check_server(lambda *a: (0, ""), "http://x", "m", 600, gone=lambda: "vllm@1.service failed")
    assert problem == "http://x/health never answered: vllm@1.service failed" and facts == {"url": "http://x"}
