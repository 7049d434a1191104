"""gpu_tuning on a GPU-less host: the boot-time unit is installed, enabled, and skips itself cleanly."""
UNIT = "llmhost-gpu-tuning.service"


def test_unit_installed_and_enabled(host):
    unit = host.file("/etc/systemd/system/" + UNIT)
    assert unit.is_file and unit.mode == 0o644
    text = unit.content_string
    assert "ExecStart=/usr/bin/nvidia-smi --lock-gpu-clocks=2100,2100" in text
    assert "ConditionPathExists=/dev/nvidiactl" in text and "After=nvidia-persistenced.service" in text
    assert "--gpu-reset" not in text and " -r " not in text  # never resets a GPU
    assert host.service(UNIT).is_enabled


def test_unit_skips_cleanly_without_a_gpu(host):
    assert not host.file("/dev/nvidiactl").exists
    host.run_test("systemctl start %s" % UNIT)
    show = host.check_output("systemctl show -p ConditionResult -p ActiveState -p Result %s" % UNIT)
    assert "ConditionResult=no" in show
    assert "Result=success" in show and "ActiveState=inactive" in show


def test_nothing_was_locked_without_a_gpu(host):
    assert not host.file("/var/lib/llmhost/gpu_clocks.json").exists
