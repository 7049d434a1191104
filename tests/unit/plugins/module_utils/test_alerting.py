"""Where the alerts go (module_utils/alerting.py): Alertmanager's receivers and routes, Prometheus's block."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import alerting

NONE = {"webhook_url": "", "email_to": "", "email_from": "", "email_smarthost": "", "watchdog_url": ""}


def _plan(mode="managed", urls=(), prometheus="managed", **settings):
    return alerting.plan(mode, dict(NONE, **settings), "127.0.0.1", 9093, list(urls), prometheus)


def test_the_managed_alertmanager_sends_to_the_webhook_and_the_watchdog_to_its_own_url():
    got = _plan(webhook_url="http://127.0.0.1:3152/alerts", watchdog_url="https://hc-ping.com/abc")
    assert got["errors"] == [] and got["reaches_someone"]
    config = got["alertmanager"]
    receivers = {r["name"]: r for r in config["receivers"]}
    assert config["route"]["receiver"] == "llmhost"
    assert receivers["llmhost"]["webhook_configs"] == [{"url": "http://127.0.0.1:3152/alerts", "send_resolved": True}]
    watchdog = config["route"]["routes"][0]
    assert watchdog["matchers"] == ['alertname="LlmhostWatchdog"'] and watchdog["receiver"] == "watchdog"
    assert receivers["watchdog"]["webhook_configs"][0]["url"] == "https://hc-ping.com/abc"
    assert got["prometheus"] == [{"static_configs": [{"targets": ["127.0.0.1:9093"]}]}]


def test_without_receivers_nothing_reaches_anyone_and_the_watchdog_goes_nowhere():
    got = _plan()
    assert got["errors"] == [] and not got["reaches_someone"]
    assert "webhook_configs" not in got["alertmanager"]["receivers"][0]
    assert got["alertmanager"]["route"]["routes"][0]["receiver"] == "nowhere"


def test_e_mail_through_a_smarthost():
    got = _plan(email_to="ops@lab.example", email_from="gpu-box@lab.example", email_smarthost="mail.lab.example:25")
    user = got["alertmanager"]["receivers"][0]
    assert user["email_configs"][0]["smarthost"] == "mail.lab.example:25" and got["reaches_someone"]


@pytest.mark.parametrize("url,entry", [
    ("http://am.lan:9093", {"scheme": "http", "static_configs": [{"targets": ["am.lan:9093"]}]}),
    ("https://alerts.example.org/am/",
     {"scheme": "https", "static_configs": [{"targets": ["alerts.example.org"]}], "path_prefix": "/am/"}),
])
def test_external_alertmanagers_become_prometheus_s_block(url, entry):
    got = _plan("external", [url])
    assert got["errors"] == [] and got["alertmanager"] is None and got["prometheus"] == [entry]
    assert got["reaches_someone"]


def test_none_sends_nothing():
    got = _plan("none")
    assert {k: got[k] for k in ("errors", "alertmanager", "prometheus", "reaches_someone")} == {
        "errors": [], "alertmanager": None, "prometheus": [], "reaches_someone": False}
    assert got["said"].startswith("WARNING: alerts reach no one")


def test_the_sentence_says_where_they_go_but_never_the_webhook_s_url():
    got = _plan(webhook_url="https://hooks.example.org/T0KEN", email_to="ops@lab.example", email_from="a@lab.example",
                email_smarthost="mail.lab.example:25")
    assert got["said"] == "Alerts go to a webhook and e-mail to ops@lab.example, through the Alertmanager on 127.0.0.1:9093."
    assert "T0KEN" not in got["said"]


@pytest.mark.parametrize("kwargs,words", [
    ({"mode": "external"}, "monitoring_alertmanager=external needs monitoring_alertmanager_urls"),
    ({"mode": "external", "urls": ["am.lan:9093"]}, "monitoring_alertmanager_urls: 'am.lan:9093' is not an http(s) URL"),
    ({"prometheus": "external"}, "monitoring_alertmanager=managed goes with monitoring_prometheus=managed"),
    ({"webhook_url": "http://x/a\nb"}, "monitoring_alert_webhook_url: the value (not shown) is not an http(s) URL"),
    ({"watchdog_url": "file:///etc/passwd"}, "monitoring_alert_watchdog_url: the value (not shown) is not an http(s) URL"),
    ({"email_to": "ops@lab.example"}, "monitoring_alert_email_from='' must be an e-mail address"),
    ({"email_to": "ops@lab.example", "email_from": "a@b.example", "email_smarthost": "mail.lab"},
     "monitoring_alert_email_smarthost='mail.lab' must be host:port"),
])
def test_settings_neither_could_use_are_refused_by_name(kwargs, words):
    got = _plan(**kwargs)
    assert any(words in e for e in got["errors"]), got["errors"]
    assert got["alertmanager"] is None and got["prometheus"] == []
