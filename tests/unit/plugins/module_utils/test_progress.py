"""One progress line of a long job (module_utils/progress.py), read from the end of a real vLLM build log."""
import pytest

from ansible_collections.llmhost.vllm.plugins.module_utils import progress

# the end of vLLM 0.6.3's build.log as pip wheel --verbose writes it (ninja's steps, indented by pip)
NINJA = """  -- Build files have been written to: /var/tmp/llmhost-vllm-build/src/build/temp.linux-x86_64-cpython-311
  [1/104] Building CXX object CMakeFiles/_core_C.dir/csrc/core/torch_bindings.cpp.o
  [2/104] Linking CXX shared module _core_C.abi3.so
  [15/104] Building CUDA object CMakeFiles/_C.dir/csrc/quantization/gptq_marlin/gptq_marlin.cu.o
"""


@pytest.mark.parametrize("elapsed,tail,want", [
    (754, NINJA, "vLLM build: 12 min, step 15/104 (14%): [15/104] Building CUDA object "
                 "CMakeFiles/_C.dir/csrc/quantization/gptq_marlin/gptq_marlin.cu.o"),
    (42, "Collecting torch==2.4.0\n  Downloading torch-2.4.0.whl (797 MB)\n\n", "vLLM build: 42 s: Downloading torch-2.4.0.whl (797 MB)"),
    (5, "", "vLLM build: 5 s"),
])
def test_one_line_says_the_time_the_step_and_the_last_line(elapsed, tail, want):
    assert progress.summary("vLLM build", elapsed, tail) == want


def test_a_long_last_line_is_cut_to_a_console_line():
    line = progress.last_line("x" * 300)
    assert len(line) == 100 and line.endswith("...")


def test_the_last_step_is_the_last_one_written():
    assert progress.last_step(NINJA) == (15, 104)
    assert progress.last_step("no steps here") is None
    assert progress.summary("b", 1, "[0/0] odd") == "b: 1 s: [0/0] odd"


@pytest.mark.parametrize("elapsed,done,total,want", [
    (180, 1288490189, 6657199308, "model download: 3 min, 1.2 of 6.2 GiB (19%), 6.8 MiB/s, about 13 min left"),
    (20, 0, 6657199308, "model download: 20 s, 0.0 of 6.2 GiB (0%), 0.0 MiB/s"),
    (30, 536870912, 0, "model download: 30 s, 512.0 MiB, 17.1 MiB/s"),
    (1, 4718592, 9437184, "model download: 1 s, 4.5 of 9.0 MiB (50%), 4.5 MiB/s, about 2 s left"),
    (50, 6657199308, 6657199308, "model download: 50 s, 6.2 of 6.2 GiB (100%), 127.0 MiB/s"),
])
def test_a_download_says_bytes_share_rate_and_time_left(elapsed, done, total, want):
    assert progress.size_summary("model download", elapsed, done, total) == want
