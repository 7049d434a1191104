# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a vLLM server is ready: /health answers 200, /v1/models lists the served model, and one real
completion comes back. The HTTP client is passed in (``fetch(method, url, body) -> (status, text)``,
status 0 when nothing answered), so the logic runs the same under the module's client and in tests."""

from __future__ import annotations

import json
import time

PROMPT = "Reply with one word: ready?"


def parse_json(text):
    """The JSON document in ``text``, or None when it is not one."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def listed_models(text):
    """The ids in a /v1/models answer ({"data": [{"id": ...}]}); [] for anything else."""
    doc = parse_json(text)
    data = doc.get("data") if isinstance(doc, dict) else None
    return [item.get("id") for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def completion_text(text):
    """The first choice's text of a /v1/completions answer; None when there is no choice."""
    doc = parse_json(text)
    choices = doc.get("choices") if isinstance(doc, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    return choices[0].get("text") or ""


def wait_healthy(fetch, base, timeout, interval=1.0, clock=time.monotonic, sleep=time.sleep, gone=None):
    """Poll <base>/health until it answers 200; the seconds it took, or None after ``timeout`` seconds. ``gone()``,
    asked while it does not answer, says why waiting on is pointless (its unit gave up), or None: that reason is
    returned in place of the seconds."""
    start = clock()
    while True:
        status, _text = fetch("GET", base + "/health", None)
        if status == 200:
            return round(clock() - start, 1)
        why = gone() if gone else None
        if why:
            return why
        if clock() - start + interval > timeout:
            return None
        sleep(interval)


def unit_gone(first, now, unit):
    """Why a unit will not serve, from ``systemctl show -p ActiveState,Result,NRestarts`` at the wait's start
    (``first``) and now (each a dict): systemd gave up on it (failed), or it exited twice or more while it was
    waited for (a server that cannot start with its command line); None otherwise."""
    if now.get("ActiveState") == "failed":
        return "%s failed (%s): see journalctl -u %s" % (unit, now.get("Result", "?"), unit)
    try:
        exits = int(now.get("NRestarts", 0)) - int(first.get("NRestarts", 0))
    except ValueError:
        return None
    if exits >= 2:
        return "%s exited %d times while starting (systemd restarted it each time): see journalctl -u %s" % (
            unit, exits, unit)
    return None


def check_server(fetch, base, model, timeout, gone=None):
    """(problem, facts) for one server: problem is None when it is ready; facts say what was seen."""
    waited = wait_healthy(fetch, base, timeout, gone=gone)
    if isinstance(waited, str):
        return "%s/health never answered: %s" % (base, waited), {"url": base}
    if waited is None:
        return "%s/health did not answer 200 within %d s" % (base, timeout), {"url": base}
    status, text = fetch("GET", base + "/v1/models", None)
    models = listed_models(text)
    facts = {"url": base, "health_seconds": waited, "models": models}
    if status != 200 or model not in models:
        return "%s/v1/models (HTTP %s) lists %s, not %s" % (base, status, models or "no model", model), facts
    body = {"model": model, "prompt": PROMPT, "max_tokens": 8, "temperature": 0}
    status, text = fetch("POST", base + "/v1/completions", body)
    answer = completion_text(text) if status == 200 else None
    if answer is None:
        return "%s/v1/completions (HTTP %s) gave no completion: %s" % (base, status, (text or "")[:300]), facts
    facts["completion"] = answer
    return None, facts
