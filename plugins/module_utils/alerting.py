# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the alerts go: Alertmanager's configuration (its receivers and routes), the alerting block of
Prometheus's configuration, and the sentences that refuse settings neither could use.

Receivers: a webhook (anything that takes Alertmanager's JSON: a chat relay, ntfy, a script of one's own) and
e-mail through a smarthost (no authentication: a local relay), both optional. A dead man's switch: the rule
LlmhostWatchdog always fires, and goes only to its own URL (healthchecks.io and the like), so that silence
there means the alerting path itself is down; it never reaches the other receivers."""

from __future__ import annotations

import re

WATCHDOG = "LlmhostWatchdog"
MODES = ("managed", "external", "none")
_HTTP_RE = re.compile(r"(https?)://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[^\s\"'$`\\]*)?\Z")
_MAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\Z")
_SMARTHOST_RE = re.compile(r"[A-Za-z0-9.-]+:[0-9]{1,5}\Z")


def _receivers(settings):
    """The user's receiver (named llmhost), the watchdog's, and one that sends nowhere."""
    user = {"name": "llmhost"}
    if settings.get("webhook_url"):
        user["webhook_configs"] = [{"url": settings["webhook_url"], "send_resolved": True}]
    if settings.get("email_to"):
        user["email_configs"] = [{"to": settings["email_to"], "from": settings["email_from"],
                                  "smarthost": settings["email_smarthost"], "require_tls": False,
                                  "send_resolved": True}]
    out = [user, {"name": "nowhere"}]
    if settings.get("watchdog_url"):
        out.append({"name": "watchdog", "webhook_configs": [{"url": settings["watchdog_url"], "send_resolved": False}]})
    return out


def alertmanager_config(settings):
    """alertmanager.yml as a dict, from {"webhook_url", "email_to", "email_from", "email_smarthost", "watchdog_url"}."""
    watchdog = {"matchers": ['alertname="%s"' % WATCHDOG],
                "receiver": "watchdog" if settings.get("watchdog_url") else "nowhere",
                "group_wait": "10s", "group_interval": "1m", "repeat_interval": "5m"}
    return {"route": {"receiver": "llmhost", "group_by": ["alertname", "instance"], "group_wait": "30s",
                      "group_interval": "5m", "repeat_interval": "4h", "routes": [watchdog]},
            "receivers": _receivers(settings)}


def prometheus_alerting(mode, listen, port, urls):
    """The alertmanagers block of prometheus.yml: the managed one on this host, or each external URL; [] for none."""
    if mode == "managed":
        return [{"static_configs": [{"targets": ["%s:%s" % (listen, port)]}]}]
    if mode != "external":
        return []
    out = []
    for url in urls:
        scheme, hostname, colon_port, path = _HTTP_RE.match(url).groups()
        entry = {"scheme": scheme, "static_configs": [{"targets": [hostname + (colon_port or "")]}]}
        if path and path != "/":
            entry["path_prefix"] = path
        out.append(entry)
    return out


def _url_errors(name, items, secret=False):
    """A webhook's URL often holds a token: a secret one is named, never quoted."""
    return ["%s: %s is not an http(s) URL (such as https://hooks.example.org/alerts)"
            % (name, "the value (not shown)" if secret else repr(u))
            for u in items if not (isinstance(u, str) and _HTTP_RE.match(u))]


def _email_errors(settings):
    out = []
    for key, rule, words in (("email_to", _MAIL_RE, "an e-mail address"), ("email_from", _MAIL_RE, "an e-mail address"),
                             ("email_smarthost", _SMARTHOST_RE, "host:port")):
        if not (isinstance(settings.get(key), str) and rule.match(settings[key])):
            out.append("monitoring_alert_%s=%r must be %s (with monitoring_alert_email_to, all three are needed)"
                       % (key, settings.get(key), words))
    return out


def errors(mode, settings, urls, prometheus_mode):
    """Sentences naming each setting Alertmanager or Prometheus could not use."""
    out = []
    if mode == "external" and not urls:
        out.append("monitoring_alertmanager=external needs monitoring_alertmanager_urls (such as http://am.lan:9093)")
    if mode == "managed" and prometheus_mode != "managed":
        out.append("monitoring_alertmanager=managed goes with monitoring_prometheus=managed; for a Prometheus of your "
                   "own, point it at your Alertmanager yourself and set monitoring_alertmanager=none")
    out += _url_errors("monitoring_alertmanager_urls", urls if isinstance(urls, list) else [urls])
    for key in ("webhook_url", "watchdog_url"):
        if settings.get(key):
            out += _url_errors("monitoring_alert_" + key, [settings[key]], secret=True)
    if settings.get("email_to") or settings.get("email_from") or settings.get("email_smarthost"):
        out += _email_errors(settings)
    return out


def receivers_set(settings):
    """Whether any alert reaches someone: a webhook or an e-mail address."""
    return bool(settings.get("webhook_url") or settings.get("email_to"))


def said(mode, settings, listen, port, urls):
    """One sentence: where the alerts go (never a webhook's URL, which often holds a token), or a warning."""
    if mode == "external":
        return "Alerts go to the Alertmanagers at %s." % ", ".join(urls)
    if mode == "managed" and receivers_set(settings):
        ways = (["a webhook"] if settings.get("webhook_url") else []) + (
            ["e-mail to %s" % settings["email_to"]] if settings.get("email_to") else [])
        return "Alerts go to %s, through the Alertmanager on %s:%s." % (" and ".join(ways), listen, port)
    return ("WARNING: alerts reach no one: set monitoring_alert_webhook_url or monitoring_alert_email_to "
            "(roles/monitoring/README.md).")


def plan(mode, settings, listen, port, urls, prometheus_mode):
    """Everything the role writes about alerting, and why it could not: {"errors", "alertmanager", "prometheus",
    "reaches_someone"}."""
    wrong = errors(mode, settings, urls, prometheus_mode)
    return {"errors": wrong,
            "alertmanager": alertmanager_config(settings) if mode == "managed" and not wrong else None,
            "prometheus": prometheus_alerting(mode, listen, port, urls) if not wrong else [],
            "reaches_someone": mode == "external" or (mode == "managed" and receivers_set(settings)),
            "said": said(mode, settings, listen, port, urls)}
