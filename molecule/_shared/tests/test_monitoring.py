"""monitoring on a real systemd host: Debian's Prometheus and node_exporter, the collection's GPU exporter, the alert
rules under promtool, and Prometheus scraping the serving stand-in's replicas (vLLM's real metric names).

There is no GPU here. The exporter first serves llmhost_gpu_nvml_up 0; then a test gives it a STAND-IN for NVML
(tests/unit/fake_pynvml.py answering from the H200 capture, through a unit drop-in that puts it first on the
exporter's path) and checks what Prometheus scrapes against the capture. Skipped in the VM scenario."""
import base64
import json
import re
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
RULES = "/etc/prometheus/llmhost/llmhost-alerts.yml"
PROM = "http://127.0.0.1:9090"
NODE = "http://127.0.0.1:9100"
EXPORTER = "http://127.0.0.1:9835/metrics"
UNIT = "llmhost-gpu-exporter.service"
STANDIN = "/srv/llmhost-test/nvml-standin"
DROPIN = "/etc/systemd/system/%s.d/50-nvml-standin.conf" % UNIT
WEBHOOK_LOG = "/var/lib/llmhost-test/webhook.jsonl"  # molecule/_shared/files/webhook_receiver.py (prepare.yml)

GET = """
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
    print(r.read().decode())
"""


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("monitoring is tested in the container scenario")


def get(host, url):
    out = host.run("python3 -c %s %s", GET, url)
    assert out.rc == 0, out.stderr
    return out.stdout


def query(host, promql):
    from urllib.parse import quote
    return json.loads(get(host, "%s/api/v1/query?query=%s" % (PROM, quote(promql))))["data"]["result"]


def put(host, path, data):
    encoded = base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
    assert host.run("mkdir -p %s && echo %s | base64 -d > %s", str(Path(path).parent), encoded, path).rc == 0


def wait_for(check, timeout=60):
    deadline = time.time() + timeout
    while True:
        result = check()
        if result or time.time() > deadline:
            return result
        time.sleep(2)


def test_services_run_and_listen_on_loopback_only(host):
    for unit in ("prometheus", "prometheus-alertmanager", "prometheus-node-exporter", UNIT):
        assert host.service(unit).is_running and host.service(unit).is_enabled, unit
    for port in (9090, 9093, 9100, 9835):
        assert host.socket("tcp://127.0.0.1:%d" % port).is_listening
        assert not host.socket("tcp://0.0.0.0:%d" % port).is_listening
    # Alertmanager's cluster gossip (9094 on every address by default) is off
    assert not host.socket("tcp://0.0.0.0:9094").is_listening and not host.socket("udp://0.0.0.0:9094").is_listening
    assert "--storage.tsdb.retention.time=15d" in host.file("/etc/default/prometheus").content_string


def test_alertmanager_s_configuration_is_checked_and_its_own(host):
    """The receivers' URLs often hold a token: the file is 0600, the service user's, and amtool takes it."""
    config = host.file("/etc/prometheus/alertmanager.yml")
    assert (config.user, config.group, config.mode) == ("prometheus", "prometheus", 0o600)
    assert host.run("amtool check-config /etc/prometheus/alertmanager.yml").rc == 0


def _posts(host):
    log = host.file(WEBHOOK_LOG)
    return [json.loads(line) for line in log.content_string.splitlines()] if log.exists else []


def test_a_firing_alert_reaches_the_webhook_and_the_watchdog_only_its_own(host):
    """LlmhostWatchdog fires from Prometheus's first evaluation; Prometheus sends it to the managed Alertmanager, which
    posts it to the watchdog's URL: a loopback webhook receiver the test host runs from before the converge
    (prepare.yml). It never goes to the receiver of the other alerts (/alerts)."""
    watchdog = wait_for(lambda: [p for p in _posts(host) if p["path"] == "/watchdog"], timeout=120)
    assert watchdog, _posts(host)
    alert = watchdog[0]["body"]["alerts"][0]
    assert (alert["labels"]["alertname"], alert["status"]) == ("LlmhostWatchdog", "firing"), alert
    assert watchdog[0]["body"]["receiver"] == "watchdog"
    for post in [p for p in _posts(host) if p["path"] == "/alerts"]:
        assert all(a["labels"]["alertname"] != "LlmhostWatchdog" for a in post["body"]["alerts"]), post
    assert json.loads(get(host, PROM + "/api/v1/alertmanagers"))["data"]["activeAlertmanagers"] == [
        {"url": "http://127.0.0.1:9093/api/v2/alerts"}]


def test_prometheus_scrapes_every_target_up(host):
    targets = json.loads(get(host, PROM + "/api/v1/targets?state=active"))["data"]["activeTargets"]
    kinds = sorted(t["labels"].get("llmhost_target") for t in targets)
    assert kinds == ["gpu", "node", "prometheus", "vllm", "vllm"], kinds
    assert all(t["health"] == "up" for t in targets), [(t["scrapeUrl"], t["lastError"]) for t in targets]
    replicas = {t["labels"]["replica"]: t["labels"] for t in targets if t["labels"]["llmhost_target"] == "vllm"}
    assert replicas["0"]["gpus"] == "0" and replicas["1"]["gpus"] == "1"
    assert replicas["0"]["model"] == "qwen-test"
    assert replicas["0"]["revision"] == "cfadfc797a22451d91044093f8227f9f97c8d57f"
    # A model swap earlier in the run (test_upgrade_model) changes the replicas' revision label, and the series with
    # the old label stays visible to an instant query for up to 5 minutes: count targets, not series.
    current = 'up{llmhost_target="vllm", revision="%s"} == 1' % replicas["0"]["revision"]
    assert len(query(host, current)) == 2, query(host, "up")
    assert {(r["metric"]["job"], r["metric"]["instance"]) for r in query(host, "up == 1")} == {
        (t["labels"]["job"], t["labels"]["instance"]) for t in targets}, query(host, "up")


def test_node_exporter_reports_the_state_of_the_collection_s_units_only(host):
    """node_exporter's systemd collector over the units whose names start llmhost- or vllm: the Ray node (the
    container's host is a one-node cluster), the replicas and the GPU exporter are active, no other unit is
    reported, and Prometheus holds the Ray node's state."""
    states = re.findall(r'^node_systemd_unit_state\{name="([^"]+)",state="([a-z]+)"', get(host, NODE + "/metrics"), re.M)
    names = {name for name, _state in states}
    assert {"llmhost-ray.service", "vllm@0.service", "vllm@1.service", "llmhost-gpu-exporter.service"} <= names, names
    assert all(re.match(r"(llmhost-|vllm).+\.service\Z", name) for name in names), names
    ray = wait_for(lambda: query(host, 'node_systemd_unit_state{name="llmhost-ray.service", state="active"} == 1'))
    assert len(ray) == 1, ray


def test_a_vllm_histogram_has_data(host):
    """The role's verify made a real completion on each replica: the TTFT histogram has counted them."""
    def p95():
        return query(host, "histogram_quantile(0.95, sum by (replica, le) (vllm:time_to_first_token_seconds_bucket))")
    result = wait_for(p95)
    assert {r["metric"]["replica"] for r in result} == {"0", "1"}, result
    assert all(0 < float(r["value"][1]) < 10 for r in result)


def test_every_exporter_metric_the_rules_use_is_scraped(host):
    """node_exporter's and the GPU exporter's names, as Prometheus holds them (vLLM's are checked per profile in
    tests/unit/test_monitoring_content.py, against the pinned vLLM's names)."""
    rules = host.file(RULES).content_string
    used = set(re.findall(r"\b(node_[a-z_]+|llmhost_gpu_nvml_up)\b", rules))
    names = set(json.loads(get(host, PROM + "/api/v1/label/__name__/values"))["data"])
    assert used and not used - names, sorted(used - names)


def test_without_nvml_the_exporter_says_so(host):
    text = get(host, EXPORTER)
    assert "llmhost_gpu_nvml_up 0.0" in text
    assert "llmhost_gpu_memory_total_bytes" not in text


def _promtool_case(rules, alert, series, eval_time, labels):
    """One test case: the alert's expected labels and its summary with the labels put in."""
    rule = next(r for g in rules["groups"] for r in g["rules"] if r["alert"] == alert)
    summary = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), rule["annotations"]["summary"])
    return {"interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": eval_time, "alertname": alert,
                                 "exp_alerts": [{"exp_labels": dict(labels, **rule["labels"]),
                                                 "exp_annotations": {"summary": summary}}] if labels else []}]}


def test_alert_rules_pass_promtool_each_firing_and_not(host):
    assert host.run("promtool check rules %s", RULES).rc == 0
    rules = yaml.safe_load(host.file(RULES).content_string)
    mount = re.search(r"mountpoint=~`([^`|]+)", host.file(RULES).content_string).group(1).replace("\\", "")
    gpu = {"gpu": "0", "instance": "h:9835", "pci_bus_id": "0000:01:00.0"}
    rep = {"instance": "h:8000", "replica": "0"}
    ray = {"instance": "h:9100", "name": "llmhost-ray.service", "state": "active", "type": "simple"}
    failed = {"instance": "h:9100", "name": "vllm@1.service", "state": "failed", "type": "simple"}

    def s(metric, labels, values):
        return {"series": "%s{%s}" % (metric, ",".join('%s="%s"' % kv for kv in sorted(labels.items()))), "values": values}

    cases = []
    for fire in (True, False):
        g = gpu if fire else dict(gpu, gpu="1")
        r = rep if fire else dict(rep, replica="1")
        cases += [
            _promtool_case(rules, "VllmReplicaDown", [s("up", dict(r, llmhost_target="vllm"), "0x5" if fire else "1x5")],
                           "3m", dict(r, llmhost_target="vllm") if fire else {}),
            _promtool_case(rules, "RayNodeDown", [s("node_systemd_unit_state", ray, "0x5" if fire else "1x5")],
                           "3m", ray if fire else {}),
            _promtool_case(rules, "LlmhostUnitFailed", [s("node_systemd_unit_state", failed, "1x5" if fire else "0x5")],
                           "3m", failed if fire else {}),
            # 10 requests a minute, all in the le=5 bucket (fires: P95 near 5 s) or the le=0.1 bucket (does not)
            _promtool_case(rules, "VllmTtftP95High",
                           [s("vllm:time_to_first_token_seconds_bucket", dict(r, le="0.1"), "0x15" if fire else "0+10x15"),
                            s("vllm:time_to_first_token_seconds_bucket", dict(r, le="5"), "0+10x15"),
                            s("vllm:time_to_first_token_seconds_bucket", dict(r, le="+Inf"), "0+10x15")],
                           "14m", r if fire else {}),
            _promtool_case(rules, "VllmKvCacheNearlyFull", [s("vllm:kv_cache_usage_perc", r, "0.99x10" if fire else "0.9x10")],
                           "8m", r if fire else {}),
            _promtool_case(rules, "VllmRequestsWaiting",
                           [s("vllm:num_requests_waiting", r, "3x10" if fire else "3 0 3 0 3 0 3 0 3 0 3")],
                           "8m", r if fire else {}),
            _promtool_case(rules, "GpuExporterWithoutNvml", [s("llmhost_gpu_nvml_up", {"instance": "h:9835"}, "0x10" if fire else "1x10")],
                           "8m", {"instance": "h:9835"} if fire else {}),
            _promtool_case(rules, "GpuTemperatureHigh", [s("llmhost_gpu_temperature_celsius", g, "91x10" if fire else "84x10")],
                           "8m", g if fire else {}),
            _promtool_case(rules, "GpuThermalThrottling",
                           [s("llmhost_gpu_clock_event_reason", dict(g, reason="hw_thermal_slowdown"), "1x10" if fire else "0x10"),
                            s("llmhost_gpu_clock_event_reason", dict(g, reason="gpu_idle"), "1x10")],
                           "8m", {"instance": "h:9835", "gpu": g["gpu"], "reason": "hw_thermal_slowdown"} if fire else {}),
            _promtool_case(rules, "GpuPowerThrottling",
                           [s("llmhost_gpu_clock_event_reason", dict(g, reason="sw_power_cap"), "1x30" if fire else "1x10 0x20")],
                           "25m", {"instance": "h:9835", "gpu": g["gpu"], "reason": "sw_power_cap"} if fire else {}),
            # a new Xid at minute 20 fires at 21 (an old count that stays does not)
            _promtool_case(rules, "GpuXidError",
                           [s("llmhost_gpu_xid_events", dict(g, xid="79"), "1x20 2x10" if fire else "1x30")],
                           "21m", dict(g, xid="79") if fire else {}),
            # a busy GPU at gen 3 of 4 fires; an idle one, trained down to save power, does not
            _promtool_case(rules, "GpuPcieLinkDegraded",
                           [s("llmhost_gpu_pcie_link_generation", g, "3x10"), s("llmhost_gpu_pcie_link_generation_max", g, "4x10"),
                            s("llmhost_gpu_pcie_link_width", g, "16x10"), s("llmhost_gpu_pcie_link_width_max", g, "16x10"),
                            s("llmhost_gpu_utilization_ratio", g, "0.9x10" if fire else "0x10")],
                           "8m", g if fire else {}),
            _promtool_case(rules, "ModelDiskNearlyFull",
                           [s("node_filesystem_avail_bytes", {"instance": "h:9100", "mountpoint": mount, "fstype": "ext4"},
                              "5x15" if fire else "50x15"),
                            s("node_filesystem_size_bytes", {"instance": "h:9100", "mountpoint": mount, "fstype": "ext4"}, "100x15")],
                           "12m", {"instance": "h:9100", "mountpoint": mount, "fstype": "ext4"} if fire else {}),
        ]
    tests = {"rule_files": [RULES], "evaluation_interval": "1m", "tests": cases}
    put(host, "/tmp/llmhost-alerts-test.yml", yaml.safe_dump(tests, sort_keys=False))
    out = host.run("promtool test rules /tmp/llmhost-alerts-test.yml")
    assert out.rc == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert len(cases) == 26 and "SUCCESS" in out.stdout + out.stderr


def test_gpu_metrics_from_the_nvml_standin_reach_prometheus(host):
    """STAND-IN for NVML: the capture-backed fake, first on the exporter's path. What Prometheus then holds for
    each H200 of the capture must be the capture's own readings."""
    capture = json.loads((ROOT / "tests/fixtures/hosts/h200x2/nvml.json").read_text())
    put(host, STANDIN + "/fake_pynvml.py", (ROOT / "tests/unit/fake_pynvml.py").read_text())
    put(host, STANDIN + "/nvml.json", json.dumps(capture))
    put(host, STANDIN + "/pynvml.py",
        "# STAND-IN for NVML (tests only): answers from a real H200 capture\n"
        "from fake_pynvml import FakePynvml\n_FAKE = FakePynvml.from_file(%r)\n\n\n"
        "def __getattr__(name):\n    return getattr(_FAKE, name)\n" % (STANDIN + "/nvml.json"))
    put(host, DROPIN, "[Service]\nEnvironment=PYTHONPATH=%s\n" % STANDIN)
    try:
        assert host.run("systemctl daemon-reload && systemctl restart %s", UNIT).rc == 0
        total = capture["devices"][1]["nvmlDeviceGetMemoryInfo"]["ok"]["total"]
        result = wait_for(lambda: query(host, 'llmhost_gpu_memory_total_bytes{gpu="1"}'))
        assert result and int(float(result[0]["value"][1])) == total, result
        temp = query(host, 'llmhost_gpu_temperature_celsius{gpu="0"}')
        assert float(temp[0]["value"][1]) == capture["devices"][0]["temperature"]["ok"]
        assert query(host, "llmhost_gpu_nvml_up == 1")
        # every llmhost_gpu_ name the rules use is now scraped, except utilisation (the capture has none)
        used = set(re.findall(r"\b(llmhost_gpu_[a-z_]+)\b", host.file(RULES).content_string))
        names = set(json.loads(get(host, PROM + "/api/v1/label/__name__/values"))["data"])
        assert used - names <= {"llmhost_gpu_utilization_ratio", "llmhost_gpu_xid_events"}, sorted(used - names)
    finally:
        host.run("rm -f %s && systemctl daemon-reload && systemctl restart %s", DROPIN, UNIT)
