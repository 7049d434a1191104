"""vllm_install's `source` method (the seed profile's default) on a real systemd host: the role's own tasks
fetch the profile's tag through a git mirror, build a wheel with a real nvcc for TORCH_CUDA_ARCH_LIST=8.9,
install it over a same-version vLLM already in the venv, and verify it with a real cuobjdump. The build's
two clones (CUTLASS, flash-attention) come from the offline-source variables, folders and archives on the
host, with no network; a later run takes vLLM's own source from an archive instead of the git mirror.

STAND-INS, labelled as such: the source tree is tests/harness/vllm_standin/source (two CUDA extensions,
vllm/_C and vllm/_moe_C, and no engine), and the CUDA toolkit is assembled from NVIDIA's CUDA 13.2 PyPI
wheels (tests/harness/cuda_home.sh). vLLM 0.6.3's own CMake build and CUDA 12.1 never run here
(molecule/README.md says why). It runs the role alone, with a venv, a wheel cache and a lock of its own,
so the scenario's serving venv stays as it is."""
import json
import os
import time

import pytest
import testinfra

HOME = "/opt/llmhost/vllm-source-test"
VENV = HOME + "/venv"
SITE = VENV + "/lib/python3.11/site-packages"
CUDA = "/srv/llmhost-test/cuda"
CACHE = "/var/cache/llmhost/wheels-source-test"
BUILD = "/var/tmp/llmhost-vllm-build"
UPSTREAM = "https://github.com/vllm-project/vllm.git"
OFFLINE = "/srv/llmhost-test/offline"
CUTLASS_URL = "https://github.com/nvidia/cutlass.git"
SAME_VERSION = "/srv/llmhost-test/wheels/vllm-0.33.0-py3-none-any.whl"  # the serving stand-in, no extensions
SOURCE = ["-e", json.dumps({
    "vllm_install_method": "source",
    "vllm_install_home": HOME,
    "vllm_install_lock_file": os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", ""),
                                           "molecule/_shared/files/source-test-vllm-lock.txt"),
    "vllm_install_find_links": ["/srv/llmhost-test/pypi-build"],
    "vllm_install_arch_list": "8.9",
    "vllm_install_cuda_home": CUDA,
    "vllm_install_git_mirrors": {UPSTREAM: "file:///srv/llmhost-test/vllm-src.git"},
    "vllm_install_wheel_cache": CACHE,
    "vllm_install_build_poll": 2,
    "vllm_install_build_min_free_gib": 1,   # the stand-in tree builds in a few MiB; 20 GiB is for vLLM's own
    # the scenario's profile (current) names no CUTLASS clone; the stand-in's clones.txt names seed's
    "llmhost_stack_overrides": {"vllm": {"build_clones": {"cutlass": {"url": CUTLASS_URL, "ref": "v3.5.1"}}}},
    # the scenario's host is a one-node Ray cluster, whose venv holds Ray; this venv of its own is not the cluster's
    "ray_cluster_group": "",
    "vllm_install_flash_attn_src": OFFLINE + "/flash-attention",
    "vllm_install_flash_attn_cutlass_src": OFFLINE + "/cutlass-v3.4.0.tar.gz",
    "vllm_install_cutlass_src": OFFLINE + "/cutlass-v3.5.1.tar.gz",
})]
# The offline sources as GitHub's archives have them: flash-attention's csrc/cutlass submodule empty, each
# archive with one top folder; a VERSION file says which CUTLASS the stand-in's build got.
MAKE_OFFLINE = """set -e; rm -rf {o}; mkdir -p {o}/flash-attention/csrc/cutlass {o}/w
echo stand-in flash-attention > {o}/flash-attention/README
for v in 3.4.0 3.5.1; do mkdir -p {o}/w/cutlass-$v/include/cutlass; echo $v > {o}/w/cutlass-$v/VERSION
  echo '#define CUTLASS_VERSION "'$v'"' > {o}/w/cutlass-$v/include/cutlass/version.h
  tar -C {o}/w -czf {o}/cutlass-v$v.tar.gz cutlass-$v; done; rm -rf {o}/w""".format(o=OFFLINE)


@pytest.fixture(autouse=True)
def _container_only(scenario):
    if scenario != "container":
        pytest.skip("the source build is tested in the container scenario")


def _first_build(playbook, after_the_other_lane):
    """The role's first source run, over a venv that already holds a vLLM of the same version (as PyPI's
    would be): pip would call that one "already satisfied" unless the role installs its build over it. It runs
    beside the checks (conftest.py's BESIDE), once `make test`'s other lane has ended or the checks reach the tag
    re-runs: its home, venv, wheel cache
    and build folder are its own, and the checks below (after the re-runs) read what it left."""
    after_the_other_lane()
    host = testinfra.get_host("docker://llmhost-ctr")
    host.run("rm -rf %s %s %s" % (HOME, CACHE, BUILD))
    host.run_expect([0], MAKE_OFFLINE)
    host.run_expect([0], "/usr/bin/python3.11 -m venv %s && %s/bin/pip install -q --no-index --no-deps %s"
                    % (VENV, VENV, SAME_VERSION))
    t0 = time.monotonic()
    changed, failed, out = playbook("--tags", "vllm_install", *SOURCE, nice=10)
    return changed, failed, out, time.monotonic() - t0


BESIDE = {"the source build": _first_build}
pytestmark = pytest.mark.after_the_reruns  # by then the build beside the checks has ended


@pytest.fixture(scope="module")
def built(beside_result):
    if os.environ.get("MOLECULE_SCENARIO_NAME") != "container":
        return None
    changed, failed, out, seconds = beside_result("the source build")
    print("source build through the vllm_install role (beside the checks): changed=%d in %.0f s" % (changed, seconds))
    return changed, failed, out


def elf_arches(host, path):
    listing = host.check_output("%s/bin/cuobjdump --list-elf %s" % (CUDA, path))
    return sorted(line.rsplit(".", 2)[-2] for line in listing.splitlines() if line.startswith("ELF file"))


def test_the_built_wheel_is_what_is_installed(host, built):
    changed, failed, out = built
    assert failed == 0 and changed > 0, out[-4000:]
    # the wait says how far the build is, once a poll (llmhost.vllm.job_wait), not "FAILED - RETRYING"
    assert "| vLLM build: " in out and "RETRYING" not in out, out[-4000:]
    record = host.file(SITE + "/vllm-0.33.0.dist-info/RECORD").content_string
    assert "vllm/_C.abi3.so" in record and "vllm/_moe_C.abi3.so" in record
    assert not host.file(SITE + "/vllm/standin.py").exists, "the same-version vLLM that was there first is gone"
    assert host.check_output("%s/bin/python -c \"import importlib.metadata as m; print(m.version('vllm'))\"" % VENV) == "0.33.0"


@pytest.mark.parametrize("ext", ["_C", "_moe_C"])
def test_the_installed_extensions_hold_exactly_the_gpus_architecture(host, built, ext):
    assert built[1] == 0
    arches = elf_arches(host, "%s/vllm/%s.abi3.so" % (SITE, ext))
    assert arches and set(arches) == {"sm_89"}, arches


def test_the_tag_came_through_the_mirror_and_the_stamp_records_the_build(host, built):
    assert built[1] == 0
    src = BUILD + "/src"
    assert host.check_output("git -C %s describe --tags" % src) == "v0.33.0"
    assert host.check_output("git -C %s remote get-url origin" % src) == UPSTREAM  # rewritten by insteadOf only
    stamp = json.loads(host.file(HOME + "/install-stamp.json").content_string)
    assert (stamp["method"], stamp["git_tag"], stamp["arch_list"], stamp["vllm"]) == ("source", "v0.33.0", "8.9", "0.33.0")
    wheels = host.check_output("find %s -name 'vllm-*.whl'" % CACHE).split()
    assert len(wheels) == 1 and "/vllm-0.33.0-" in wheels[0] and ".partial/" not in wheels[0], wheels
    assert "Successfully built vllm" in host.file(BUILD + "/build.log").content_string


def test_the_build_got_its_clones_from_the_offline_sources(host, built):
    """flash-attention through VLLM_FLASH_ATTN_SRC_DIR with its empty submodule filled by CUTLASS 3.4.0, and
    vLLM's CUTLASS 3.5.1 cloned by its upstream URL at its tag: from the local repository the role made."""
    assert built[1] == 0
    log = host.file(BUILD + "/build.log").content_string
    deps = BUILD + "/sources"
    assert "STAND-IN dependency: flash_attn from VLLM_FLASH_ATTN_SRC_DIR=%s/flash-attention" % deps in log, log[-2000:]
    assert "STAND-IN dependency: flash_attn's CUTLASS: 3.4.0" in log
    assert "STAND-IN dependency: cutlass cloned from %s at v3.5.1" % CUTLASS_URL in log
    assert "STAND-IN dependency: cutlass's CUTLASS: 3.5.1" in log
    assert host.check_output("git -C %s/cutlass describe --tags" % deps) == "v3.5.1"
    assert host.file(deps + "/cutlass/.llmhost-source").content_string.strip() == OFFLINE + "/cutlass-v3.5.1.tar.gz"
    gitconfig = host.file(BUILD + "/gitconfig")
    assert gitconfig.mode == 0o600
    assert 'insteadOf = %s' % CUTLASS_URL in gitconfig.content_string
    assert not host.file(deps + "/cutlass.partial").exists


def test_pip_gets_the_rest_of_the_lock_line_by_line(host, built):
    """The lock without vLLM (which the build provides) is what pip installs: one requirement per line.
    Under ansible-core 2.19 a "\\n" written in a folded block stayed two characters, so this file was
    one line, a comment, and pip installed none of the lock (fixed in _common/tasks/venv.yml)."""
    assert built[1] == 0
    lock = host.file(HOME + "/requirements.lock").content_string.splitlines()
    without = host.file(HOME + "/requirements-without-vllm.lock").content_string
    assert without.splitlines() == [line for line in lock if not line.startswith("vllm==")], without[:300]
    assert host.check_output("%s/bin/python -c \"import importlib.metadata as m; print(m.version('packaging'))\"" % VENV) == "26.4"


def test_a_second_run_builds_and_installs_nothing(host, built, playbook):
    assert built[1] == 0
    before = host.check_output("stat -c '%%n %%Y' %s/*/vllm-*.whl %s/build.log %s/vllm/_C.abi3.so" % (CACHE, BUILD, SITE))
    changed, failed, out = playbook("--tags", "vllm_install", *SOURCE)
    assert failed == 0 and changed == 0, out[-4000:]
    assert host.check_output("stat -c '%%n %%Y' %s/*/vllm-*.whl %s/build.log %s/vllm/_C.abi3.so"
                             % (CACHE, BUILD, SITE)) == before


def test_verify_refuses_an_extension_built_for_another_gpu(host, built, playbook):
    """What verify exists for: PyPI's build, or one for another GPU, in place of the build for these GPUs."""
    assert built[1] == 0
    real = SITE + "/vllm/_C.abi3.so"
    host.run_expect([0], "cp -p %s /tmp/_C.sm89.so && cd %s/src && %s/bin/nvcc -shared -Xcompiler -fPIC "
                    "-gencode arch=compute_80,code=sm_80 -o /tmp/_C.sm80.so csrc/standin.cu" % (real, BUILD, CUDA))
    try:
        host.run_expect([0], "cp /tmp/_C.sm80.so %s" % real)
        _changed, failed, out = playbook("--tags", "vllm_install_verify", *SOURCE)
        assert failed > 0, out[-3000:]
        assert "lacks sm_89" in out and "holds sm_80 beyond" in out, out[-3000:]
    finally:
        host.run_expect([0], "cp -p /tmp/_C.sm89.so %s" % real)


def test_vllms_own_source_from_an_archive_on_the_host(host, built, playbook):
    """vllm_install_vllm_src in place of the clone (PyPI's sdist, for a real build): a tar archive with one top
    folder, laid out over the clone's tree, built into a wheel cache of its own."""
    assert built[1] == 0
    archive = OFFLINE + "/vllm-src.tar.gz"
    host.run_expect([0], "rm -rf /tmp/vllm-0.33.0 && git clone -q --depth 1 --branch v0.33.0 file:///srv/llmhost-test/vllm-src.git "
                    "/tmp/vllm-0.33.0 && rm -rf /tmp/vllm-0.33.0/.git && tar -C /tmp -czf %s vllm-0.33.0 && rm -rf /tmp/vllm-0.33.0" % archive)
    args = json.loads(SOURCE[1])
    args.update({"vllm_install_vllm_src": archive, "vllm_install_wheel_cache": CACHE + "-archive",
                 "vllm_install_git_url": "https://vllm-src.invalid/unreachable.git"})   # never cloned now
    host.run_expect([0], "rm -f %s/install-stamp.json" % HOME)
    try:
        changed, failed, out = playbook("--tags", "vllm_install", "-e", json.dumps(args))
        assert failed == 0 and changed > 0, out[-4000:]
        assert host.file(BUILD + "/src/.llmhost-source").content_string.strip() == archive
        assert not host.file(BUILD + "/src/.git").exists, "the clone's tree is replaced, not mixed in"
        wheels = host.check_output("find %s-archive -name 'vllm-*.whl'" % CACHE).split()
        assert len(wheels) == 1 and wheels[0].endswith("/vllm-0.33.0-cp311-cp311-linux_x86_64.whl"), wheels
        assert set(elf_arches(host, SITE + "/vllm/_C.abi3.so")) == {"sm_89"}
    finally:
        host.run("rm -rf %s-archive %s/src %s/install-stamp.json" % (CACHE, BUILD, HOME))
