"""The monitoring role's alert rules and dashboard, rendered by Ansible's own templating for each stack profile:
every metric name they use exists in that profile's vLLM (../shared/fixtures/vllm/*-metric-names.txt) or is one
the GPU exporter serves. Promtool checks and tests the rules in the container scenario, where Prometheus is."""
import json
import re
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.llmhost.vllm.plugins.module_utils import alerting
from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_metrics as gm
from fake_pynvml import FakePynvml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "monitoring"
PROFILES = ["seed", "current"]
NAME_RE = re.compile(r"\b(vllm:[A-Za-z0-9_:]+|llmhost_gpu_[a-z0-9_]+|node_[a-z0-9_]+)")
SUFFIXES = ("_bucket", "_sum", "_count", "_total")


def profile(name):
    return yaml.safe_load((ROOT / "roles" / "llmhost_stack" / "vars" / (name + ".yml")).read_text())["__llmhost_stack_data"]


def render(template, name, **extra):
    variables = dict(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), llmhost_stack_profile=profile(name),
                     ansible_managed="Ansible managed", __monitoring_mountpoints=["/", "/srv/data-1"], **extra)
    templar = Templar(loader=DataLoader(), variables=variables)
    return templar.template(trust_as_template((ROLE / "templates" / template).read_text()))


def exprs_of_rules(text):
    return [rule["expr"] for group in yaml.safe_load(text)["groups"] for rule in group["rules"]]


def exprs_of_dashboard(text):
    return [t["expr"] for panel in json.loads(text)["panels"] for t in panel["targets"]]


def vllm_names(shared, version):
    return set((shared.parent / "vllm" / ("vllm-%s-metric-names.txt" % version)).read_text().split())


def exporter_names(h200x2):
    dump = h200x2.nvml()
    for dev in dump["devices"]:  # the capture lacks the utilisation reading a GeForce or busy card gives
        dev["nvmlDeviceGetUtilizationRates"] = {"ok": {"gpu": 97, "memory": 40}}
    return set(gm.families(gm.read_devices(FakePynvml(dump)), {("0000:00:07.0", 79): 1}))


def known(name, vllm, exporter):
    if name.startswith("vllm:"):
        return name in vllm or any(name.endswith(s) and name[:-len(s)] in vllm for s in SUFFIXES)
    if name.startswith("llmhost_gpu_"):
        return name in exporter
    # node_exporter's file system and systemd collectors; the container scenario sees them scraped
    return name.startswith(("node_filesystem_", "node_systemd_"))


@pytest.mark.parametrize("name", PROFILES)
def test_every_metric_the_rules_and_dashboard_use_exists(shared, h200x2, name):
    vllm = vllm_names(shared, profile(name)["vllm"]["version"])
    exporter = exporter_names(h200x2)
    exprs = exprs_of_rules(render("alerts.yml.j2", name)) + exprs_of_dashboard(render("dashboard.json.j2", name))
    used = {n for e in exprs for n in NAME_RE.findall(e)}
    assert {n for n in used if n.startswith("vllm:")}, "no vLLM metric used"
    missing = sorted(n for n in used if not known(n, vllm, exporter))
    assert not missing, "%s's metric names unknown to vLLM %s or the GPU exporter: %s" % (
        name, profile(name)["vllm"]["version"], missing)


def test_the_check_can_fail(shared, h200x2):
    """A name of one version is unknown to the other: the KV-cache gauge was renamed."""
    assert not known("vllm:kv_cache_usage_perc", vllm_names(shared, "0.6.3"), exporter_names(h200x2))
    assert not known("vllm:gpu_cache_usage_perc", vllm_names(shared, "0.33.0"), exporter_names(h200x2))
    assert not known("llmhost_gpu_fan_speed", set(), exporter_names(h200x2))


@pytest.mark.parametrize("name", PROFILES)
def test_rules_carry_the_thresholds_and_every_alert_the_issue_lists(name):
    text = render("alerts.yml.j2", name, monitoring_alert_ttft_p95_seconds=1.5, monitoring_alert_waiting_minutes=7)
    rules = {r["alert"]: r for g in yaml.safe_load(text)["groups"] for r in g["rules"]}
    assert set(rules) == {"LlmhostWatchdog", "VllmReplicaDown", "LlmhostUnitFailed", "RayNodeDown",
                          "VllmTtftP95High", "VllmKvCacheNearlyFull", "VllmRequestsWaiting",
                          "GpuExporterWithoutNvml", "GpuTemperatureHigh", "GpuThermalThrottling", "GpuPowerThrottling",
                          "GpuXidError", "GpuPcieLinkDegraded", "ModelDiskNearlyFull"}
    assert rules["VllmTtftP95High"]["expr"].rstrip().endswith("> 1.5")
    assert rules["VllmRequestsWaiting"]["for"] == "7m"
    # mount points are matched literally (a raw PromQL string; "-" escaped for the regex)
    assert "mountpoint=~`/|/srv/data\\-1`" in rules["ModelDiskNearlyFull"]["expr"]


@pytest.mark.parametrize("name", PROFILES)
def test_the_dashboard_has_the_panels_users_look_for(name):
    board = json.loads(render("dashboard.json.j2", name))
    titles = [p["title"] for p in board["panels"]]
    for want in ("Time to first token", "Inter-token latency", "Throughput", "Requests running and waiting",
                 "KV-cache usage", "GPU utilisation", "GPU memory", "GPU temperature", "GPU power",
                 "Clock event (throttle) reasons"):
        assert want in titles
    assert len({p["id"] for p in board["panels"]}) == len(titles)
    assert all(t["expr"] and t["refId"] for p in board["panels"] for t in p["targets"])


@pytest.mark.parametrize("alertmanager,urls,want", [
    ("managed", [], [{"static_configs": [{"targets": ["127.0.0.1:9093"]}]}]),
    ("external", ["https://am.lan:9443/am"], [{"scheme": "https", "static_configs": [{"targets": ["am.lan:9443"]}],
                                              "path_prefix": "/am"}]),
    ("none", [], None),
])
def test_prometheus_sends_its_alerts_where_monitoring_alertmanager_says(alertmanager, urls, want):
    """prometheus.yml as Ansible renders it, with the plan of module_utils/alerting.py (the role's filter
    llmhost.vllm.alerting, wired in the container scenario, where promtool checks it and Prometheus reports the
    Alertmanager it sends to)."""
    plan = alerting.plan(alertmanager, {}, "127.0.0.1", 9093, urls, "managed")
    text = render("prometheus.yml.j2", "current", monitoring_alertmanager=alertmanager, __monitoring_alerting=plan,
                  __monitoring_rules_file="/etc/prometheus/llmhost/llmhost-alerts.yml",
                  __monitoring_targets_file="/etc/prometheus/llmhost/exporters.json", __monitoring_vllm_targets="/x.json")
    config = yaml.safe_load(text)
    assert config.get("alerting", {}).get("alertmanagers") == want, text
