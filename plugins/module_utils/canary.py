# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary stage of a model upgrade: the gateway's share for the canary, the prompt set and its checks, the
SLO figures read from Prometheus, and the decision to promote or roll back, each with its reason.

Pure functions. Evidence comes in as data: each replica's answers to the prompt set (greedy decoding), and
Prometheus' answers to the queries ``slo_queries`` names. ``decide`` applies the rules in order and says each one's
verdict; any rule that fails rolls the canary back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.module_utils.six.moves.urllib.parse import urlencode

from ansible_collections.llmhost.vllm.plugins.module_utils import input_types, value_checks

# Qwen's byte-fallback tokens, printed when the tokenizer chain breaks (the seed's mojibake: <0x00><0x01> in place
# of Chinese characters), and the replacement character a broken decode leaves.
BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
REPLACEMENT = u"\ufffd"
CHECKS = ("contains", "not_contains", "regex", "clean_text", "length", "finish_reason")
PROMPT_KEYS = ("name", "prompt", "max_tokens", "checks")
MAX_TOKENS = 4096


def weights(endpoints, canary, percent):
    """nginx upstream weights that send ``percent`` of the requests to ``canary`` and the rest evenly to the other
    endpoints: the canary weighs percent x (others), each other one 100 - percent, divided by their common factor."""
    others = [e for e in endpoints if e != canary]
    if canary not in endpoints or not others:
        return {}
    raw = dict({canary: int(percent) * len(others)}, **{e: 100 - int(percent) for e in others})
    common = 0
    for value in raw.values():
        common = math.gcd(common, value)
    return {e: w // common for e, w in raw.items()}


# The prompt set: a list of prompts, each a mapping.

def _check_errors(where, check):
    if not isinstance(check, dict) or len(check) != 1 or list(check)[0] not in CHECKS:
        return ["%s: a check is one of %s with its value; got %r" % (where, ", ".join(CHECKS), check)]
    kind, value = list(check.items())[0]
    if kind in ("contains", "not_contains", "finish_reason") and not (isinstance(value, str) and value):
        return ["%s: %s needs a non-empty string" % (where, kind)]
    if kind == "regex":
        try:
            re.compile(value)
        except (re.error, TypeError) as e:
            return ["%s: regex %r does not compile (%s)" % (where, value, e)]
    if kind == "clean_text" and value is not True:
        return ["%s: clean_text takes true" % where]
    if kind == "length" and not _length_range(value):
        return ["%s: length needs [min, max] characters, whole numbers with 0 <= min <= max; got %r" % (where, value)]
    return []


def _length_range(value):
    return (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                for v in value) and 0 <= value[0] <= value[1])


def _prompt_errors(where, item):
    if not isinstance(item, dict):
        return ["%s: a prompt is a mapping with %s; got %r" % (where, ", ".join(PROMPT_KEYS), item)]
    out = ["%s: %s is not a key of a prompt (%s)" % (where, k, ", ".join(PROMPT_KEYS)) for k in item if k not in PROMPT_KEYS]
    if not (isinstance(item.get("name"), str) and item["name"]) or not (isinstance(item.get("prompt"), str)
                                                                        and item["prompt"].strip()):
        out.append("%s: needs a name and a non-empty prompt" % where)
    tokens = item.get("max_tokens", 64)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= MAX_TOKENS:
        out.append("%s: max_tokens must be a whole number from 1 to %d; got %r" % (where, MAX_TOKENS, tokens))
    checks = item.get("checks")
    if not isinstance(checks, list) or not checks:
        return out + ["%s: needs a list of checks (at least one)" % where]
    for n, check in enumerate(checks):
        out += _check_errors("%s check %d" % (where, n + 1), check)
    return out


def prompt_set_errors(data, source):
    """Why ``data`` (the parsed file) is not a prompt set, each line naming the file and the prompt; [] when it is."""
    if not isinstance(data, list) or not data:
        return ["%s: a prompt set is a non-empty list of prompts" % source]
    out = []
    for n, item in enumerate(data):
        name = item.get("name") if isinstance(item, dict) else None
        out += _prompt_errors("%s prompt %d%s" % (source, n + 1, " (%s)" % name if name else ""), item)
    names = [item.get("name") for item in data if isinstance(item, dict)]
    out += ["%s: the name %s is given twice" % (source, n) for n in sorted(set(x for x in names if names.count(x) > 1))]
    return out


# Judging one answer.

def clean_text_problem(text):
    """Why an answer is not clean text (a byte token, a replacement character, an unpaired surrogate), or None."""
    found = BYTE_TOKEN.search(text)
    if found:
        seen = text[found.start():]
        return "byte tokens in place of characters (%s)" % (seen if len(seen) <= 24 else seen[:24] + "...")
    if REPLACEMENT in text:
        return "replacement characters (U+FFFD): bytes that were not valid UTF-8"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "characters that are not valid UTF-8"
    return None


def check(one, text, finish_reason):
    """(passed, what was seen) for one check of an answer."""
    kind, value = list(one.items())[0]
    if kind == "contains":
        return value in text, "contains %r" % value if value in text else "lacks %r" % value
    if kind == "not_contains":
        return value not in text, "has %r" % value if value in text else "free of %r" % value
    if kind == "regex":
        found = re.search(value, text) is not None
        return found, ("matches %s" if found else "does not match %s") % value
    if kind == "clean_text":
        problem = clean_text_problem(text)
        return problem is None, problem or "clean UTF-8 text"
    if kind == "length":
        return value[0] <= len(text) <= value[1], "%d characters (wanted %d to %d)" % (len(text), value[0], value[1])
    return finish_reason == value, "finished by %s (wanted %s)" % (finish_reason, value)


def score(prompts, answers):
    """Each prompt's checks against a replica's answers ({name: {text, finish_reason} or {error}}): the passed share
    and every check's verdict. An answer that failed counts every check of its prompt as failed."""
    results, passed, total = [], 0, 0
    for prompt in prompts:
        answer = answers.get(prompt["name"]) or {"error": "no answer"}
        for one in prompt["checks"]:
            ok, seen = (False, "no answer: %s" % answer["error"]) if "error" in answer else check(
                one, answer.get("text", ""), answer.get("finish_reason"))
            results.append({"prompt": prompt["name"], "check": one, "passed": ok, "seen": seen})
            passed, total = passed + ok, total + 1
    return {"score": round(passed / total, 4) if total else 0.0, "passed": passed, "total": total, "checks": results}


# The SLO half: what Prometheus measured on the canary and on the old replicas over the soak window.

def instance(url):
    """Prometheus' instance label of a replica: its host:port, as vllm_service lists it for scraping."""
    return url.split("://", 1)[-1].split("/", 1)[0]


def _matcher(instances):
    """A PromQL label matcher for the instances: a regular expression inside a double-quoted PromQL string, where a
    backslash is itself escaped (Prometheus refuses "127\\.0" as an unknown escape sequence)."""
    return 'instance=~"%s"' % "|".join(re.escape(i).replace("\\", "\\\\") for i in instances)


def slo_queries(metrics, window_s, canary, old):
    """PromQL for each group (``canary``: its instance; ``old``: theirs), over the last ``window_s`` seconds:
    requests to the API and those answered 5xx (vLLM's HTTP counter, where its version exports one), and the P95
    time to first token from vLLM's own histogram. The API's requests are its POSTs: vLLM 0.25 labels every route
    handler="none" (its instrumentator cannot name FastAPI's lazily included routers; seen on a running 0.25), and
    its GETs are health checks and listings."""
    out = {}
    for group, instances in (("canary", [canary]), ("old", list(old))):
        where = '%s, llmhost_target="vllm"' % _matcher(instances)
        api = '%s, method="POST"' % where
        out[group + "_requests"] = 'sum(increase(%s{%s}[%ds]))' % (metrics["http_requests"], api, window_s)
        out[group + "_errors"] = 'sum(increase(%s{%s, status="5xx"}[%ds]))' % (metrics["http_requests"], api, window_s)
        out[group + "_ttft_p95"] = ('histogram_quantile(0.95, sum by (le) (increase(%s_bucket{%s}[%ds])))'
                                    % (metrics["ttft"], where, window_s))
    return out


def _value(response):
    """The one number of an instant query's answer (Prometheus' /api/v1/query JSON), or None when it has none."""
    result = ((response or {}).get("data") or {}).get("result") or []
    try:
        number = float(result[0]["value"][1])
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def slo_figures(responses):
    """{group: {requests, errors, error_rate, ttft_p95_s}} from the answers to ``slo_queries``' queries."""
    out = {}
    for group in ("canary", "old"):
        requests, errors = _value(responses.get(group + "_requests")), _value(responses.get(group + "_errors"))
        # no 5xx series yet is no 5xx answer: sum() over nothing answers an empty result
        out[group] = {"requests": requests, "errors": (errors or 0.0) if requests is not None else None,
                      "error_rate": (errors or 0.0) / requests if requests else None,
                      "ttft_p95_s": _value(responses.get(group + "_ttft_p95"))}
    return out


def _rule(name, passed, reason):
    return {"rule": name, "passed": bool(passed), "reason": reason}


def answers_rule(canary_score, old_score, tolerance):
    floor = old_score - tolerance
    return _rule("answers", canary_score >= floor,
                 "the canary passed %.0f%% of the prompt checks, the old model %.0f%% (it must reach %.0f%%: the old "
                 "score less upgrade_model_canary_score_tolerance=%s)"
                 % (canary_score * 100, old_score * 100, floor * 100, tolerance))


def errors_rule(figures, max_increase):
    canary, old = figures["canary"], figures["old"]
    if canary["requests"] is None and old["requests"] is None:
        return _rule("errors", True, "not measured: this vLLM exports no HTTP status counter (http_requests_total); "
                                     "the answers and the time to first token decide")
    if not canary["requests"]:
        return _rule("errors", False, "the canary answered no request in the soak window: nothing to judge it by")
    limit = (old["error_rate"] or 0.0) + max_increase
    return _rule("errors", canary["error_rate"] <= limit,
                 "%.2f%% of the canary's %d requests failed (5xx), %.2f%% of the old replicas' %d (the canary may "
                 "fail at most %.2f%%: upgrade_model_canary_max_error_rate_increase=%s)"
                 % (canary["error_rate"] * 100, canary["requests"], (old["error_rate"] or 0.0) * 100,
                    old["requests"] or 0, limit * 100, max_increase))


def ttft_rule(figures, max_ratio):
    canary, old = figures["canary"]["ttft_p95_s"], figures["old"]["ttft_p95_s"]
    if canary is None:
        return _rule("ttft", False, "no first token of the canary was measured in the soak window")
    if old is None:
        return _rule("ttft", True, "P95 time to first token %.3f s on the canary; none measured on the old replicas "
                                   "to compare with" % canary)
    return _rule("ttft", canary <= old * max_ratio,
                 "P95 time to first token %.3f s on the canary, %.3f s on the old replicas (at most %.3f s: "
                 "upgrade_model_canary_max_ttft_ratio=%s)" % (canary, old, old * max_ratio, max_ratio))


def prometheus_rule(responses):
    """Prometheus must have answered every query: a canary is not judged on figures it lacks."""
    missing = prometheus_errors(responses)
    return _rule("prometheus", responses and not missing,
                 "Prometheus answered every query" if responses and not missing
                 else "Prometheus did not answer: %s" % ("; ".join(missing) or "it was not asked"))


def decide(canary_score, old_score, figures, limits, asked=None):
    """Promote when every rule passes, else roll back; with each rule's verdict and reason, in order. ``asked``:
    Prometheus' answers, when the verdict should also hold it to having answered (prometheus_rule)."""
    rules = [answers_rule(canary_score, old_score, limits["score_tolerance"]),
             errors_rule(figures, limits["max_error_rate_increase"]),
             ttft_rule(figures, limits["max_ttft_ratio"])]
    rules += [prometheus_rule(asked)] if asked is not None else []
    failed = [r for r in rules if not r["passed"]]
    return {"decision": "rollback" if failed else "promote", "rules": rules,
            "why": "; ".join(r["reason"] for r in (failed or rules))}


def judge(prompts, answers, responses, limits):
    """The whole verdict from the raw evidence: each replica group's scored answers, the SLO figures, the decision."""
    scores = {group: score(prompts, answers.get(group) or {}) for group in ("canary", "old")}
    figures = slo_figures(responses)
    result = decide(scores["canary"]["score"], scores["old"]["score"], figures, limits, asked=responses)
    return dict(result, scores=scores, figures=figures)


def _figure(value, unit=""):
    return "-" if value is None else ("%.3f%s" % (value, unit) if isinstance(value, float) else "%s%s" % (value, unit))


def report_markdown(verdict, context):
    """The canary's report: what was compared, the SLO figures side by side, each prompt's checks old against new,
    and the decision with its reasons. ``context``: old and new source, canary and old endpoints, share, window."""
    f, s = verdict["figures"], verdict["scores"]
    lines = ["# Canary: %s" % verdict["decision"], "",
             "%s (old, on %s) against %s (canary, on %s): %s%% of the gateway's requests for %s s."
             % (context["old_source"], ", ".join(context["old_endpoints"]), context["new_source"],
                context["canary_endpoint"], context["percent"], context["soak_s"]), "",
             "| | canary | old replicas |", "| --- | --- | --- |"]
    for key, label in (("requests", "requests"), ("errors", "5xx answers"), ("error_rate", "error rate"),
                       ("ttft_p95_s", "P95 TTFT (s)")):
        lines.append("| %s | %s | %s |" % (label, _figure(f["canary"][key]), _figure(f["old"][key])))
    counts = (s["canary"]["passed"], s["canary"]["total"], s["old"]["passed"], s["old"]["total"])
    lines.append("| prompt checks passed | %d of %d | %d of %d |" % counts)
    lines += ["", "| prompt | check | canary | old |", "| --- | --- | --- | --- |"]
    for new, old in zip(s["canary"]["checks"], s["old"]["checks"]):
        lines.append("| %s | `%s` | %s %s | %s %s |" % (
            new["prompt"], list(new["check"])[0], "pass" if new["passed"] else "FAIL", new["seen"].replace("|", "\\|"),
            "pass" if old["passed"] else "FAIL", old["seen"].replace("|", "\\|")))
    lines += ["", "## Decision: %s" % verdict["decision"], ""]
    lines += ["- %s %s: %s" % ("pass" if r["passed"] else "FAIL", r["rule"], r["reason"]) for r in verdict["rules"]]
    return "\n".join(lines) + "\n"


# Asking for the evidence, with a ``fetch(method, url, body) -> (status, text)`` (module_utils/http_fetch.py).

def _answer(status, text):
    if status != 200:
        return {"error": "HTTP %s: %s" % (status or "no answer", " ".join(text.split())[:200])}
    try:
        choice = json.loads(text)["choices"][0]
        return {"text": choice["text"], "finish_reason": choice.get("finish_reason")}
    except (ValueError, KeyError, IndexError, TypeError):
        return {"error": "not a completion: %s" % " ".join(text.split())[:200]}


def ask_prompts(fetch, url, model, prompts):
    """{prompt name: {text, finish_reason} or {error}}: each prompt as one completion, greedy (temperature 0)."""
    out = {}
    for prompt in prompts:
        body = {"model": model, "prompt": prompt["prompt"], "max_tokens": prompt.get("max_tokens", 64),
                "temperature": 0, "seed": 0}
        out[prompt["name"]] = _answer(*fetch("POST", url.rstrip("/") + "/v1/completions", body))
    return out


def ask_prometheus(fetch, url, queries):
    """{query name: Prometheus' JSON answer} for instant queries; an answer Prometheus did not give is an error."""
    out = {}
    for name, query in sorted(queries.items()):
        status, text = fetch("GET", "%s/api/v1/query?%s" % (url.rstrip("/"), urlencode({"query": query})), None)
        try:
            failed = {"status": "error", "error": "HTTP %s: %s" % (status or "no answer", text[:200])}
            out[name] = json.loads(text) if status == 200 else failed
        except ValueError:
            out[name] = {"status": "error", "error": "not JSON: %s" % text[:200]}
    return out


def prometheus_errors(responses):
    """The queries Prometheus did not answer, in one line each: a canary is not judged on figures it lacks."""
    return ["%s: %s" % (name, r.get("error", "no data")) for name, r in sorted(responses.items())
            if r.get("status") != "success"]


# The first play's refusals of the canary's settings (playbooks/upgrade_model.yml).

NUMBERS = {  # variable: (type, low, high)
    "upgrade_model_canary_percent": ("int", 1, 50),
    "upgrade_model_canary_score_tolerance": ("float", 0, 1),
    "upgrade_model_canary_max_error_rate_increase": ("float", 0, 1),
    "upgrade_model_canary_max_ttft_ratio": ("float", 1, 100),
}
_DURATION = re.compile(r"([0-9]+)(ms|s|m|h)\Z")


def duration_seconds(text):
    """Seconds of a Prometheus duration such as 15s, 1m or 500ms (None when it is not one)."""
    found = _DURATION.match(str(text).strip())
    if not found:
        return None
    return int(found.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[found.group(2)]


def _number_errors(v):
    out = []
    for name, (kind, low, high) in sorted(NUMBERS.items()):
        problem = input_types.problem(name, v.get(name), {"type": kind})
        out += [problem] if problem else value_checks.range_errors({name: [v.get(name), low, high]})
    return out


def canary_wanted(setting, replicas):
    """Whether the stage runs: upgrade_model_canary true, or auto with two replicas or more."""
    return str(setting).lower() != "auto" and boolean(setting, strict=False) or (
        str(setting).lower() == "auto" and replicas >= 2)


def input_errors(v, replicas, scrape_interval):
    """The canary's settings the first play refuses, each naming its variable and what it may be."""
    setting = v.get("upgrade_model_canary")
    if str(setting).lower() != "auto" and input_types.problem("upgrade_model_canary", setting, {"type": "bool"}):
        return ["upgrade_model_canary must be auto (on with two replicas or more), true or false; got %r" % (setting,)]
    if not canary_wanted(setting, replicas):
        return []
    out = _number_errors(v)
    soak, scrape = v.get("upgrade_model_canary_soak_seconds"), duration_seconds(scrape_interval) or 15
    problem = input_types.problem("upgrade_model_canary_soak_seconds", soak, {"type": "int"})
    out += [problem] if problem else [e + " (at least two of Prometheus' scrape intervals, monitoring_scrape_interval=%s)"
                                      % scrape_interval for e in value_checks.range_errors(
                                          {"upgrade_model_canary_soak_seconds": [soak, int(math.ceil(2 * scrape)), 86400]})]
    if replicas < 2:
        out.append("upgrade_model_canary=true needs two replicas or more on the host (it serves %d): the canary is "
                   "compared with a replica of the old model; set upgrade_model_canary=false to swap without it"
                   % replicas)
    return out + _prometheus_url_errors(v.get("upgrade_model_canary_prometheus_url"))


_HTTP_URL = re.compile(r"https?://[^\s/?#]+/?\Z")


def _prometheus_url_errors(url):
    if url is None or _HTTP_URL.match(str(url)):
        return []
    return ["upgrade_model_canary_prometheus_url=%r must be the http(s)://host:port of the Prometheus that scrapes the "
            "replicas (empty: the monitoring role's, with monitoring_prometheus=managed); the canary's SLO figures come "
            "from it" % (url,)]
