"""The canary's rules (module_utils/canary.py): the gateway's weights, the prompt set's parser and checks, the SLO
figures from Prometheus' answers, and the decision, one table per rule."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import canary

ROOT = Path(__file__).resolve().parents[4]
DEFAULT_SET = ROOT / "playbooks" / "files" / "canary-prompts.yml"
LIMITS = {"score_tolerance": 0.0, "max_error_rate_increase": 0.01, "max_ttft_ratio": 1.5}


@pytest.mark.parametrize("endpoints,percent,want", [
    (["a:8000", "a:8001"], 10, {"a:8000": 1, "a:8001": 9}),
    (["a:8000", "a:8001", "a:8002"], 10, {"a:8000": 2, "a:8001": 9}),
    (["a:8000", "a:8001", "a:8002", "a:8003"], 25, {"a:8000": 1, "a:8001": 1}),
    (["a:8000", "a:8001"], 50, {"a:8000": 1, "a:8001": 1}),
    (["a:8000", "a:8001"], 1, {"a:8000": 1, "a:8001": 99}),
])
def test_the_canary_gets_its_share_of_the_requests(endpoints, percent, want):
    got = canary.weights(endpoints, "a:8000", percent)
    share = got["a:8000"] / sum(got.values())
    assert share == pytest.approx(percent / 100)
    assert {e: got[e] for e in want} == want
    assert all(isinstance(w, int) and w >= 1 for w in got.values())


def test_no_weights_without_a_canary_among_the_endpoints_or_others_beside_it():
    assert canary.weights(["a:8000"], "a:8000", 10) == {}
    assert canary.weights(["a:8000", "a:8001"], "b:8000", 10) == {}


def test_the_default_prompt_set_is_a_prompt_set_with_chinese_and_the_byte_token_check():
    data = yaml.safe_load(DEFAULT_SET.read_text())
    assert canary.prompt_set_errors(data, "canary-prompts.yml") == []
    assert any("\u4e00" <= c <= "\u9fff" for item in data for c in item["prompt"])
    assert sum({"clean_text": True} in item["checks"] for item in data) >= 3


@pytest.mark.parametrize("data,words", [
    ({}, "f.yml: a prompt set is a non-empty list of prompts"),
    ([], "f.yml: a prompt set is a non-empty list of prompts"),
    (["hi"], "f.yml prompt 1: a prompt is a mapping"),
    ([{"name": "a", "prompt": " ", "checks": [{"contains": "x"}]}], "f.yml prompt 1 (a): needs a name and a non-empty"),
    ([{"name": "a", "prompt": "p", "checks": []}], "f.yml prompt 1 (a): needs a list of checks"),
    ([{"name": "a", "prompt": "p", "checks": [{"contain": "x"}]}], "f.yml prompt 1 (a) check 1: a check is one of"),
    ([{"name": "a", "prompt": "p", "checks": [{"contains": "x", "regex": "y"}]}], "check 1: a check is one of"),
    ([{"name": "a", "prompt": "p", "checks": [{"regex": "("}]}], "check 1: regex '(' does not compile"),
    ([{"name": "a", "prompt": "p", "checks": [{"length": [5, 2]}]}], "check 1: length needs [min, max]"),
    ([{"name": "a", "prompt": "p", "checks": [{"length": [1, True]}]}], "check 1: length needs [min, max]"),
    ([{"name": "a", "prompt": "p", "checks": [{"clean_text": "yes"}]}], "check 1: clean_text takes true"),
    ([{"name": "a", "prompt": "p", "checks": [{"contains": ""}]}], "check 1: contains needs a non-empty string"),
    ([{"name": "a", "prompt": "p", "max_tokens": 0, "checks": [{"contains": "x"}]}], "max_tokens must be a whole"),
    ([{"name": "a", "prompt": "p", "max_tokens": 8.5, "checks": [{"contains": "x"}]}], "max_tokens must be a whole"),
    ([{"name": "a", "prompt": "p", "temperature": 1, "checks": [{"contains": "x"}]}], "temperature is not a key"),
    ([{"name": "a", "prompt": "p", "checks": [{"contains": "x"}]}] * 2, "f.yml: the name a is given twice"),
])
def test_a_bad_prompt_set_is_refused_naming_the_file_the_prompt_and_the_check(data, words):
    errors = canary.prompt_set_errors(data, "f.yml")
    assert any(words in e for e in errors), errors


@pytest.mark.parametrize("one,text,reason,passed", [
    ({"contains": "北京"}, "北京。", "stop", True),
    ({"contains": "北京"}, "<0xE5><0x8C><0x97>", "stop", False),
    ({"not_contains": "Sorry"}, "Paris", "stop", True),
    ({"not_contains": "Sorry"}, "Sorry, no", "stop", False),
    ({"regex": "\\b42\\b"}, " 42.", "stop", True),
    ({"regex": "\\b42\\b"}, " 420", "stop", False),
    ({"clean_text": True}, "我爱北京", "stop", True),
    ({"clean_text": True}, "我<0x00><0x01>", "stop", False),
    ({"clean_text": True}, "我\ufffd", "stop", False),
    ({"clean_text": True}, "a\ud800b", "stop", False),
    ({"length": [2, 5]}, "abc", "stop", True),
    ({"length": [2, 5]}, "abcdef", "stop", False),
    ({"finish_reason": "stop"}, "x", "stop", True),
    ({"finish_reason": "stop"}, "x", "length", False),
])
def test_each_check_type(one, text, reason, passed):
    assert canary.check(one, text, reason)[0] is passed


def test_the_byte_token_check_says_what_it_saw():
    assert "byte tokens in place of characters (<0x00><0x01>" in canary.clean_text_problem("答：<0x00><0x01>")


PROMPTS = [{"name": "zh", "prompt": "p", "checks": [{"contains": "北京"}, {"clean_text": True}]},
           {"name": "en", "prompt": "p", "checks": [{"contains": "Paris"}]}]


def test_a_score_counts_every_check_and_a_failed_answer_fails_its_checks():
    good = {"zh": {"text": "北京", "finish_reason": "stop"}, "en": {"text": "Paris", "finish_reason": "stop"}}
    assert canary.score(PROMPTS, good)["score"] == 1.0
    broken = dict(good, zh={"text": "<0xE5><0x8C>", "finish_reason": "stop"})
    got = canary.score(PROMPTS, broken)
    assert (got["passed"], got["total"], got["score"]) == (1, 3, 0.3333)
    failed = canary.score(PROMPTS, {"en": {"error": "HTTP 500"}})
    assert failed["passed"] == 0 and failed["checks"][2]["seen"] == "no answer: HTTP 500"


def prom(value):
    """Prometheus' /api/v1/query answer with one sample, or none (value None)."""
    result = [] if value is None else [{"metric": {}, "value": [1765000000.0, str(value)]}]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def responses(canary_req=100, canary_err=0, old_req=900, old_err=0, canary_ttft=0.2, old_ttft=0.2):
    return {"canary_requests": prom(canary_req), "canary_errors": prom(canary_err), "canary_ttft_p95": prom(canary_ttft),
            "old_requests": prom(old_req), "old_errors": prom(old_err), "old_ttft_p95": prom(old_ttft)}


def test_the_queries_name_the_groups_instances_and_the_window():
    q = canary.slo_queries({"http_requests": "http_requests_total", "ttft": "vllm:time_to_first_token_seconds"}, 120,
                           "127.0.0.1:8000", ["127.0.0.1:8001", "127.0.0.1:8002"])
    assert q["canary_errors"] == ('sum(increase(http_requests_total{instance=~"127\\\\.0\\\\.0\\\\.1:8000", '
                                  'llmhost_target="vllm", method="POST", status="5xx"}[120s]))')
    assert 'instance=~"127\\\\.0\\\\.0\\\\.1:8001|127\\\\.0\\\\.0\\\\.1:8002"' in q["old_ttft_p95"]
    assert q["old_ttft_p95"].startswith("histogram_quantile(0.95, sum by (le) (increase(vllm:time_to_first_token")


@pytest.mark.parametrize("evidence,decision,words", [
    (responses(), "promote", "P95 time to first token 0.200 s on the canary, 0.200 s on the old replicas"),
    (responses(canary_err=5), "rollback", "5.00% of the canary's 100 requests failed (5xx), 0.00% of the old"),
    (responses(canary_err=1, old_err=9), "promote", "1.00% of the canary's 100 requests failed"),
    (responses(canary_ttft=0.31), "rollback", "0.310 s on the canary, 0.200 s on the old replicas (at most 0.300 s"),
    (responses(canary_ttft=None), "rollback", "no first token of the canary was measured"),
    (responses(canary_req=0), "rollback", "the canary answered no request in the soak window"),
    (responses(canary_req=None, old_req=None), "promote", "not measured: this vLLM exports no HTTP status counter"),
    (responses(old_ttft=None), "promote", "none measured on the old replicas to compare with"),
    (dict(responses(), canary_ttft_p95=prom("NaN")), "rollback", "no first token of the canary was measured"),
    # no 5xx series at all (no answer was ever 5xx): sum() over nothing answers an empty result, read as 0
    (responses(canary_err=None, old_err=None), "promote", "0.00% of the canary's 100 requests failed (5xx)"),
])
def test_the_slo_rules_decide_on_the_figures(evidence, decision, words):
    figures = canary.slo_figures(evidence)
    got = canary.decide(1.0, 1.0, figures, LIMITS)
    assert got["decision"] == decision and words in " ".join(r["reason"] for r in got["rules"]), got


@pytest.mark.parametrize("new,old,tolerance,decision", [
    (1.0, 1.0, 0.0, "promote"), (0.8, 1.0, 0.0, "rollback"), (0.8, 1.0, 0.2, "promote"), (0.0, 0.0, 0.0, "promote"),
    (0.79, 1.0, 0.2, "rollback"),
])
def test_the_answers_rule_holds_the_canary_to_the_old_score_less_the_tolerance(new, old, tolerance, decision):
    got = canary.decide(new, old, canary.slo_figures(responses()), dict(LIMITS, score_tolerance=tolerance))
    assert got["decision"] == decision
    assert got["rules"][0]["rule"] == "answers" and got["rules"][0]["passed"] is (decision == "promote")


def test_a_rollback_says_only_the_failed_rules_and_the_report_shows_both_sides():
    answers = {"canary": {"zh": {"text": "<0x00><0x01>", "finish_reason": "length"}, "en": {"error": "HTTP 500"}},
               "old": {"zh": {"text": "北京", "finish_reason": "stop"}, "en": {"text": "Paris", "finish_reason": "stop"}}}
    verdict = canary.judge(PROMPTS, answers, responses(canary_err=10), LIMITS)
    assert verdict["decision"] == "rollback" and "prompt checks" in verdict["why"] and "P95" not in verdict["why"]
    report = canary.report_markdown(verdict, {"old_source": "q@a", "new_source": "q@b", "canary_endpoint": "h:8000",
                                              "old_endpoints": ["h:8001"], "percent": 10, "soak_s": 120})
    assert report.startswith("# Canary: rollback\n")
    assert "| zh | `clean_text` | FAIL byte tokens in place of characters (<0x00><0x01>) | pass clean UTF-8 text |" \
        in report
    assert "| en | `contains` | FAIL no answer: HTTP 500 | pass contains 'Paris' |" in report
    assert "| 5xx answers | 10.000 | 0.000 |" in report and "- FAIL errors: 10.00% of the canary's" in report


SETTINGS = {"upgrade_model_canary": "auto", "upgrade_model_canary_percent": 10,
            "upgrade_model_canary_soak_seconds": 120, "upgrade_model_canary_score_tolerance": 0.0,
            "upgrade_model_canary_max_error_rate_increase": 0.01, "upgrade_model_canary_max_ttft_ratio": 1.5}


@pytest.mark.parametrize("change,replicas,words", [
    ({"upgrade_model_canary_percent": 0}, 2, "upgrade_model_canary_percent=0 must be a number from 1 to 50"),
    ({"upgrade_model_canary_percent": 51}, 2, "upgrade_model_canary_percent=51 must be a number from 1 to 50"),
    ({"upgrade_model_canary_percent": 10.5}, 2, "upgrade_model_canary_percent: got 10.5 (a number); needs a whole"),
    ({"upgrade_model_canary_soak_seconds": 29}, 2,
     "upgrade_model_canary_soak_seconds=29 must be a number from 30 to 86400 (at least two of Prometheus' scrape "
     "intervals, monitoring_scrape_interval=15s)"),
    ({"upgrade_model_canary_max_ttft_ratio": float("nan")}, 2, "upgrade_model_canary_max_ttft_ratio: got nan"),
    ({"upgrade_model_canary_max_ttft_ratio": "inf"}, 2, "upgrade_model_canary_max_ttft_ratio: got 'inf'"),
    ({"upgrade_model_canary_score_tolerance": -0.1}, 2, "upgrade_model_canary_score_tolerance=-0.1 must be a number"),
    ({"upgrade_model_canary_max_error_rate_increase": "x"}, 2, "upgrade_model_canary_max_error_rate_increase: got 'x'"),
    ({"upgrade_model_canary": True}, 1, "upgrade_model_canary=true needs two replicas or more on the host (it "
                                        "serves 1)"),
    ({"upgrade_model_canary": "maybe"}, 2, "upgrade_model_canary must be auto (on with two replicas or more), true"),
    ({"upgrade_model_canary_prometheus_url": ""}, 2, "upgrade_model_canary_prometheus_url='' must be the http(s)://"),
    ({"upgrade_model_canary_prometheus_url": "127.0.0.1:9090"}, 2, "upgrade_model_canary_prometheus_url='127.0.0.1"),
    ({"upgrade_model_canary_prometheus_url": "http://127.0.0.1:9090/graph"}, 2, "must be the http(s)://host:port"),
])
def test_the_first_play_refuses_bad_canary_settings_by_name(change, replicas, words):
    errors = canary.input_errors(dict(SETTINGS, **change), replicas, "15s")
    assert any(words in e for e in errors), errors


@pytest.mark.parametrize("setting,replicas,on", [("auto", 2, True), ("auto", 1, False), (True, 3, True),
                                                 ("false", 2, False), (False, 1, False), ("yes", 2, True)])
def test_the_canary_runs_when_asked_or_with_two_replicas(setting, replicas, on):
    assert canary.canary_wanted(setting, replicas) is on


def test_settings_that_stay_off_are_not_judged_and_good_ones_pass():
    assert canary.input_errors(dict(SETTINGS, upgrade_model_canary_percent=99), 1, "15s") == []
    assert canary.input_errors(SETTINGS, 2, "15s") == []
    assert canary.input_errors(dict(SETTINGS, upgrade_model_canary_prometheus_url="http://[::1]:9090"), 2, "15s") == []
    assert canary.input_errors(dict(SETTINGS, upgrade_model_canary_soak_seconds=10), 2, "5s") == []
    assert canary.duration_seconds("1m") == 60 and canary.duration_seconds("soon") is None


def test_figures_prometheus_did_not_give_roll_the_canary_back():
    answers = {"canary": {"en": {"text": "Paris"}}, "old": {"en": {"text": "Paris"}}}
    assert canary.judge(PROMPTS[1:], answers, responses(), LIMITS)["decision"] == "promote"
    unasked = canary.judge(PROMPTS[1:], answers, {}, LIMITS)
    assert unasked["decision"] == "rollback" and "Prometheus did not answer: it was not asked" in unasked["why"]
    failed = dict(responses(), old_errors={"status": "error", "error": "HTTP 503: down"})
    assert "Prometheus did not answer: old_errors: HTTP 503: down" in canary.judge(PROMPTS[1:], answers, failed,
                                                                                   LIMITS)["why"]


def test_the_first_play_reads_the_prompt_set_and_names_what_is_wrong():
    from ansible_collections.llmhost.vllm.plugins.filter.canary_settings import canary_settings
    good = (Path(__file__).resolve().parents[4] / "playbooks" / "files" / "canary-prompts.yml").read_text()
    on = canary_settings(dict(SETTINGS, upgrade_model_canary_prometheus_url="http://127.0.0.1:9090"), 2, "15s", good,
                         "canary-prompts.yml")
    assert on["wanted"] and on["errors"] == [] and len(on["prompts"]) == 5
    assert on["limits"] == {"score_tolerance": 0.0, "max_error_rate_increase": 0.01, "max_ttft_ratio": 1.5}
    off = {"wanted": False, "errors": [], "prompts": [], "limits": {}}
    assert canary_settings(SETTINGS, 1, "15s", "", "x.yml") == off
    words = {"": "upgrade_model_canary_prompts=mine.yml cannot be read on the controller, or is empty",
             "- [": "upgrade_model_canary_prompts=mine.yml is not YAML",
             "- {name: a, prompt: hi, checks: [{contains: x}, {lenght: [1, 2]}]}":
             "upgrade_model_canary_prompts=mine.yml prompt 1 (a) check 2: a check is one of contains"}
    for text, word in words.items():
        errors = canary_settings(SETTINGS, 2, "15s", text, "mine.yml")["errors"]
        assert len(errors) == 1 and errors[0].startswith(word), errors
