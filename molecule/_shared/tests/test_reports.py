"""The site playbook's first play writes the host report on the controller, in llmhost_reports_dir (the scenario
sets it to its ephemeral folder), under --check as on a converge."""
import json
import os
from pathlib import Path


def test_the_site_run_left_the_host_report_in_llmhost_reports_dir(host):
    reports = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "reports"
    name = host.backend.host  # the inventory name
    report = reports / ("host-report-%s-current.json" % name)
    assert report.is_file(), sorted(p.name for p in reports.glob("*")) if reports.exists() else "no %s" % reports
    data = json.loads(report.read_text())
    assert data["profile"] == "current" and set(data["summary"]) >= {"PASS", "WARN", "FAIL"}
    assert (reports / ("host-report-%s-current.md" % name)).read_text().strip()
