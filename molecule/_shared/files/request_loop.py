"""A bounded request loop the Molecule tests run on the host under test while a playbook changes it.

usage: request_loop.py OUT MAX_SECONDS STOP_FILE TARGET...   (TARGET: URL,KEY[,CA_FILE])
Each tick asks every target for one completion (5 s timeout each), then pauses 20 ms, until STOP_FILE appears
or MAX_SECONDS pass. OUT gets the ticks as JSON: [seconds, [ok per target], [latency per target]]."""
import json
import os
import ssl
import sys
import time
import urllib.request

BODY = json.dumps({"model": "qwen-test", "prompt": "hi", "max_tokens": 2}).encode()


def ask(url, key, context):
    req = urllib.request.Request(url + "/v1/completions", data=BODY)
    req.add_header("Authorization", "Bearer " + key)
    req.add_header("Content-Type", "application/json")
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=5, context=context) as r:
            ok = r.status == 200 and bool(json.loads(r.read())["choices"])
    except Exception:  # any failure is what the loop counts
        ok = False
    return ok, round(time.monotonic() - start, 4)


def main(out, limit, stop, *targets):
    parsed = []
    for target in targets:
        url, key, ca = (target.split(",") + [""])[:3]
        parsed.append((url, key, ssl.create_default_context(cafile=ca) if ca else None))
    ticks, t0 = [], time.monotonic()
    while time.monotonic() - t0 < float(limit) and not os.path.exists(stop):
        now = round(time.monotonic() - t0, 2)
        answers = [ask(*t) for t in parsed]
        ticks.append([now, [a[0] for a in answers], [a[1] for a in answers]])
        time.sleep(0.02)
    with open(out + ".tmp", "w") as f:
        json.dump(ticks, f)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(*sys.argv[1:])
