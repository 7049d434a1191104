"""playbooks/uninstall.yml on the converged host (last of all), then the site playbook in check mode from what it leaves.

What the host holds afterwards is compared, path by path, with what it held before any role ran (prepare.yml's
baseline): every path left over must be a distribution package's own file or be kept on purpose, each for its
stated reason. Here the uninstall keeps the models and the reports (the defaults), purges nginx's and Prometheus's
packages (the default) and is asked to release the holds (llmhost_uninstall_holds=true)."""
import json
import os
import re

import pytest

# Where the roles write (and the folders anyone's installs land in). Not the rest of /etc and /var: there the
# packages other tests install and keep (a compiler, stress-ng) leave what their scripts make (/etc/alternatives,
# /etc/fonts), which no role wrote.
SCANNED = ["/etc/llmhost", "/etc/systemd/system", "/etc/apt", "/etc/nginx", "/etc/prometheus", "/etc/default",
           "/etc/sysctl.d", "/etc/modprobe.d", "/etc/modules-load.d", "/etc/profile.d", "/etc/ansible", "/etc/dkms",
           "/opt", "/srv", "/usr/local/lib", "/usr/local/sbin", "/usr/local/bin", "/var/lib/llmhost", "/var/lib/llmhost-ray", "/var/lib/nginx",
           "/var/lib/prometheus", "/var/lib/grafana", "/var/cache/llmhost", "/var/cache/vllm", "/var/tmp",
           "/var/log/nginx", "/var/log/prometheus", "/usr/lib/systemd/system"]
# Installs other tests made with their own homes: removed by the same playbook, given the same variables.
TEST_INSTALLS = ["--tags", "vllm_install,quantize", "-e", "vllm_install_home=/opt/llmhost/vllm-source-test",
                 "-e", "vllm_install_wheel_cache=/var/cache/llmhost/wheels-source-test",
                 "-e", "quantize_home=/opt/llmhost/quantize-seed"]
PORTS = [8000, 8001, int(os.environ.get("LLMHOST_GATEWAY_PORT", "3150")), 9090, 9093, 9100, 9835, 3160]
# (pattern of paths left on purpose, why)
KEPT = [
    (r"/srv/llmhost(/models(/.*)?)?", "the models stay unless asked (llmhost_uninstall_models)"),
    (r"/etc/ansible(/facts\.d(/llmhost_(model|quantize)\.fact)?)?", "the models' records stay with the models"),
    (r"/var/lib/llmhost(/bench.*)?", "the benchmark's runs are reports: they stay unless asked"),
    (r"/etc/profile\.d/llmhost-cuda\.sh", "the CUDA toolkit stays installed and on PATH"),
    (r"/(var/lib|usr/local/lib|srv)/llmhost-test(/.*)?", "the tests' own receiver, request loop and fixtures"),
    (r"/var/tmp/systemd-private-.*", "systemd's private /tmp of units still running (the test's own)"),
    (r"/var/cache/llmhost/wheels-source-test-archive(/.*)?", "the source-build test's second wheel cache"),
    (r"/var/lib/(apt|dpkg|systemd|ucf|python|private|polkit-1)(/.*)?", "the package manager's and systemd's state"),
    (r"/var/log/nginx(/(access|error)\.log)?", "nginx's own logs (Debian's package keeps them; not the gateway's)"),
    (r"/var/cache/(apt|debconf|ldconfig|man)(/.*)?", "the package manager's caches"),
    (r"/var/log/(journal|apt|dpkg\.log|alternatives\.log|private)(/.*)?", "the system's logs"),
    (r"/etc/(ld\.so\.cache|passwd-?|group-?|shadow-?|gshadow-?|subuid-?|subgid-?|systemd/system/.*\.wants)(/.*)?",
     "the system's own databases (users and groups removed, the files stay)"),
]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the uninstall round trip runs in the container scenario")


def _paths(host, listing):
    return set(host.check_output(listing).splitlines())


def leftovers(host):
    """Paths the host holds now that it did not before the roles ran, that no installed package owns and that no
    KEPT pattern names."""
    before = _paths(host, "cat /root/llmhost-test-baseline.txt")
    now = _paths(host, "find %s -xdev 2>/dev/null || true" % " ".join(SCANNED))
    # dpkg names /lib/... what a merged /usr holds at /usr/lib/... too
    packaged = _paths(host, "cat /var/lib/dpkg/info/*.list")
    packaged |= {"/usr" + path for path in packaged if path.startswith("/lib/")}
    return sorted(path for path in now - before - packaged
                  if not any(re.fullmatch(pattern, path) for pattern, _why in KEPT))


@pytest.mark.changes_the_host(order=4)
def test_uninstall_leaves_only_what_it_keeps_and_the_site_plans_its_install_again(host, playbook):
    model = json.loads(host.file("/etc/ansible/facts.d/llmhost_model.fact").content_string)["path"]
    changed, failed, out = playbook(*TEST_INSTALLS, path="playbooks/uninstall.yml")
    assert not failed and changed, out[-4000:]
    assert not host.file("/opt/llmhost/vllm-source-test").exists and not host.file("/opt/llmhost/quantize-seed").exists
    changed, failed, out = playbook("-e", "llmhost_uninstall_holds=true", path="playbooks/uninstall.yml")
    assert not failed and changed, out[-4000:]
    # what went, one path a line at the default verbosity (under --check the same task says what would go); the run
    # before was the test installs' alone (--tags vllm_install,quantize)
    said = " ".join(out.split())
    assert "'vllm_service: removed /etc/systemd/system/vllm@.service'" in said, \
        [line for line in out.splitlines() if ": removed " in line] or out[-4000:]
    listening = host.run("ss -Hltn").stdout
    assert not [port for port in PORTS if ":%d " % port in listening], listening
    units = host.run("systemctl list-units --all --plain --no-legend 'vllm@*' 'llmhost-*' 'nginx*' 'prometheus*'").stdout
    assert [line for line in units.splitlines() if not line.startswith("llmhost-test-")] == [], units
    assert not host.package("nginx").is_installed and not host.package("prometheus").is_installed
    assert host.run("apt-mark showhold").stdout.strip() == ""
    # kept: the model, its record and its owner
    assert host.file(model).is_directory and host.user("vllm").exists
    left = leftovers(host)
    assert not left, "left behind by the uninstall (%d paths):\n%s" % (len(left), "\n".join(left[:200]))

    changed, failed, out = playbook("-e", "llmhost_uninstall_holds=true", path="playbooks/uninstall.yml")
    assert not failed and changed == 0, out[-4000:]

    # The site from here, in check mode: every first-play refusal and every role's preflight reads what the uninstall
    # kept (the model and its records, the vllm user, the CUDA profile script, the packages no longer held) and must
    # take it, and the run must plan the install again (changes predicted, none made). The install itself is the
    # scenario's converge from a host that holds less; a real second converge here cost ~5 minutes of the scenario.
    changed, failed, out = playbook("--check")
    assert not failed and changed, out[-4000:]
    assert not host.service("vllm@0.service").is_running
