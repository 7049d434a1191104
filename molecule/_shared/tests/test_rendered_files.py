"""Every rendered file, read by its real consumer: the units by `systemd-analyze verify`, the replicas'
environment files and the secrets file by systemd itself (a transient unit prints the environment it
was given), the scripts by their shell's parser. A value that broke out of its line or its quotes
shows here as a unit systemd refuses, a variable too many or a script that does not parse."""
import pytest

API_KEY = "test-key-of-the-molecule-scenario"
UNITS = ["vllm@0.service", "vllm@1.service", "llmhost-gpu-tuning.service", "llmhost-cpu-policy.service"]


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the serving layer's files are rendered in the container scenario")


@pytest.mark.parametrize("unit", UNITS)
def test_units_pass_systemd_analyze_verify(host, unit):
    result = host.run("systemd-analyze verify --man=no %s" % unit)
    # A container cannot read every cgroup attribute, and the stand-in driver packages bring no
    # nvidia-smi for the GPU unit to run; anything else about the unit file itself is an error.
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if unit.split("@")[0] in line and "cgroup" not in line
                  and "/nvidia-smi is not executable: No such file or directory" not in line]
    assert not complaints, result.stdout + result.stderr


@pytest.mark.parametrize("replica", ["0", "1"])
def test_systemd_reads_the_environment_files_as_written(host, replica):
    env_file = "/etc/llmhost/vllm/%s.env" % replica
    out = host.check_output(
        "systemd-run --quiet --wait --pipe --collect -p EnvironmentFile=%s -p EnvironmentFile=/etc/llmhost/vllm/secrets.env "
        "/usr/bin/env" % env_file)
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    written = [line for line in host.file(env_file).content_string.splitlines() if line and not line.startswith("#")]
    for line in written:                       # each KEY="value" line is one variable, unquoted by systemd
        key, value = line.split("=", 1)
        assert value.startswith('"') and value.endswith('"'), line
        assert seen[key] == value[1:-1], (key, seen.get(key))
    assert seen["VLLM_API_KEY"] == API_KEY       # the secrets file's quoted value, read back whole
    assert seen["CUDA_VISIBLE_DEVICES"] == replica


@pytest.mark.parametrize("script,shell", [("/usr/local/sbin/llmhost-cpu-policy", "sh"),
                                          ("/etc/profile.d/llmhost-cuda.sh", "sh")])
def test_scripts_parse(host, script, shell):
    result = host.run("%s -n %s" % (shell, script))
    assert result.rc == 0, result.stderr
