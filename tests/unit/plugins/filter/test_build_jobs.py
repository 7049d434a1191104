"""MAX_JOBS for source builds: memory, not cores, limits nvcc on small boxes."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.llmhost.vllm.plugins.filter.build_jobs import build_jobs


@pytest.mark.parametrize("mem_gib,cores,jobs", [
    (24, 16, 3),     # the design card's 24 GB box: 16 cores would OOM, 3 jobs fit
    (128, 16, 16),   # a big box: cores limit
    (8, 8, 1),       # never below one job
    (64, 32, 10),
])
def test_jobs_fit_memory_and_cores(mem_gib, cores, jobs):
    assert build_jobs(mem_gib * 1024, cores) == jobs


def test_bad_input_is_a_clear_error():
    with pytest.raises(AnsibleFilterError, match="needs numbers"):
        build_jobs("lots", 4)
