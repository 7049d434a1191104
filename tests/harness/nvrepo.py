"""Build and serve a stand-in of NVIDIA's CUDA apt repository, and of nginx.org's, for tests only.

NVIDIA's repository (developer.download.nvidia.com) cannot be reached from the test machines, so
this builds one with the same layout (a flat repository per distribution, `<dist>/x86_64/`, with
`Packages`, a signed `InRelease`/`Release.gpg` and the signing key beside them as `3bf863cc.pub`).
Its packages are STAND-INS: they carry the real package names, versions and the dependencies
between the driver's own packages, but no driver. Their payload is empty, except:
  - nvidia-persistenced ships a labelled stand-in unit (the real package ships the real daemon's);
  - cuda-nvcc-* ships a labelled stand-in `nvcc` that prints the real `nvcc --version` format.
Each driver package exists in two releases, so the tests can prove that the apt pin refuses the
newer one. The key is a throwaway made at build time.

Beside it, under nginx/: a STAND-IN of nginx.org's repository for Debian 12 (nginx.org/packages/debian/, a
dists/bookworm/nginx/ layout whose Release says Origin: nginx), with nginx.org's package names, versions and
the module's dependency on its nginx, empty payloads, and its key as nginx_signing.key (the same throwaway key).

usage: nvrepo.py build OUT_DIR        (prints OUT_DIR; skips the build when OUT_DIR/.done exists)
       nvrepo.py serve OUT_DIR PORT   (plain HTTP on 127.0.0.1)
"""
import gzip
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

ARCH = "amd64"

# The debian12 flavour of NVIDIA's repository (driver branch 580, open kernel modules, CUDA 13.0).
DRIVER_VERSIONS = ["580.159.04-1", "580.172.08-1"]


def driver_packages(v):
    """Driver packages of one release, with the dependencies between them as NVIDIA declares them."""
    eq = "(= %s)" % v
    return {
        "nvidia-kernel-support": [],
        "nvidia-kernel-open-dkms": ["nvidia-kernel-support %s" % eq],
        "libnvidia-ml1": [],
        "libnvidia-cfg1": [],
        "libcuda1": ["libnvidia-ml1 %s" % eq],
        "nvidia-smi": ["libnvidia-ml1 %s" % eq],
        "nvidia-persistenced": ["libnvidia-cfg1 %s" % eq],
        "nvidia-driver-cuda": ["libcuda1 %s" % eq, "nvidia-smi %s" % eq, "nvidia-persistenced %s" % eq,
                               "nvidia-kernel-open-dkms %s | nvidia-kernel-dkms %s" % (eq, eq)],
    }


TOOLKIT = {
    # package: (version, depends)
    "cuda-nvcc-13-0": ("13.0.88-1", []),
    "cuda-cudart-dev-13-0": ("13.0.96-1", []),
    "cuda-toolkit-13-0": ("13.0.2-1", ["cuda-nvcc-13-0 (>= 13.0.88)", "cuda-cudart-dev-13-0 (>= 13.0.96)"]),
}

PERSISTENCED_UNIT = """\
# STAND-IN shipped by the test repository's nvidia-persistenced package (tests/harness/nvrepo.py);
# the real package ships NVIDIA's unit and daemon. It runs nothing and needs a GPU device node.
[Unit]
Description=NVIDIA Persistence Daemon (test stand-in)
ConditionPathExists=/dev/nvidiactl

[Service]
Type=oneshot
ExecStart=/bin/true
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
"""

NVCC = """\
#!/bin/sh
# STAND-IN nvcc from the test repository (tests/harness/nvrepo.py): prints what the real nvcc
# of CUDA 13.0 prints for --version and compiles nothing.
case "$1" in
  --version|-V)
    echo "nvcc: NVIDIA (R) Cuda compiler driver"
    echo "Copyright (c) 2005-2025 NVIDIA Corporation"
    echo "Cuda compilation tools, release 13.0, V13.0.88"
    echo "Build cuda_13.0.r13.0/compiler.36424714_0" ;;
  *) echo "nvcc stand-in: compiling is not available in tests" >&2; exit 1 ;;
esac
"""


# nginx.org's stable nginx and njs module for Debian 12 (package: (version, depends)).
NGINX_ORG = {
    "nginx": ("1.28.0-1~bookworm", []),
    "nginx-module-njs": ("1.28.0+0.9.0-1~bookworm", ["nginx (= 1.28.0-1~bookworm)"]),
}


def deb(pool, name, version, depends, files=None, vendor="NVIDIA's"):
    root = Path(tempfile.mkdtemp(dir=pool))
    (root / "DEBIAN").mkdir()
    control = ["Package: %s" % name, "Version: %s" % version, "Architecture: %s" % ARCH,
               "Maintainer: llmhost.vllm tests <tests@invalid>", "Section: non-free/libs", "Priority: optional"]
    if depends:
        control.append("Depends: %s" % ", ".join(depends))
    control.append("Description: test stand-in of %s %s (empty payload)" % (vendor, name))
    (root / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    for rel, (text, mode) in (files or {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        p.chmod(mode)
    out = pool / ("%s_%s_%s.deb" % (name, version, ARCH))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(root)


def build(out):
    out = Path(out)
    if (out / ".done").exists():
        print(out)
        return
    if out.exists():
        shutil.rmtree(out)
    repo = out / "debian12" / "x86_64"
    repo.mkdir(parents=True)
    for v in DRIVER_VERSIONS:
        for name, deps in driver_packages(v).items():
            files = {}
            if name == "nvidia-persistenced":
                files["lib/systemd/system/nvidia-persistenced.service"] = (PERSISTENCED_UNIT, 0o644)
            deb(repo, name, v, deps, files)
    for name, (v, deps) in TOOLKIT.items():
        files = {}
        if name.startswith("cuda-nvcc-"):
            files["usr/local/cuda-13.0/bin/nvcc"] = (NVCC, 0o755)
        deb(repo, name, v, deps, files)
    packages = subprocess.run(["dpkg-scanpackages", "-m", "."], cwd=repo, check=True, capture_output=True,
                              text=True).stdout
    (repo / "Packages").write_text(packages)
    with gzip.open(repo / "Packages.gz", "wt") as f:
        f.write(packages)
    lines = ["Origin: NVIDIA (llmhost.vllm test stand-in)", "Label: NVIDIA CUDA", "Architectures: %s" % ARCH,
             "Date: Sun, 29 Nov 2026 00:00:00 UTC", "SHA256:"]
    for name in ("Packages", "Packages.gz"):
        data = (repo / name).read_bytes()
        lines.append(" %s %d %s" % (hashlib.sha256(data).hexdigest(), len(data), name))
    (repo / "Release").write_text("\n".join(lines) + "\n")
    nginx = nginx_repo(out / "nginx" / "packages" / "debian")
    gnupg = Path(tempfile.mkdtemp())
    try:
        env = dict(os.environ, GNUPGHOME=str(gnupg))
        gpg = ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""]
        # No expiry: the repository is built once and kept in the test cache, and a key that expires
        # turns its signature into EXPKEYSIG a day later (it did, with "1d").
        subprocess.run(gpg + ["--quick-gen-key", "llmhost.vllm test repository <tests@invalid>", "ed25519",
                              "sign", "never"], check=True, env=env)
        subprocess.run(gpg + ["--armor", "--export", "--output", str(repo / "3bf863cc.pub")], check=True, env=env)
        subprocess.run(gpg + ["--clearsign", "--output", str(repo / "InRelease"), str(repo / "Release")],
                       check=True, env=env)
        subprocess.run(gpg + ["--armor", "--detach-sign", "--output", str(repo / "Release.gpg"),
                              str(repo / "Release")], check=True, env=env)
        shutil.copy(repo / "3bf863cc.pub", nginx.parents[3] / "nginx_signing.key")
        subprocess.run(gpg + ["--clearsign", "--output", str(nginx / "InRelease"), str(nginx / "Release")],
                       check=True, env=env)
    finally:
        shutil.rmtree(gnupg, ignore_errors=True)
    (out / ".done").write_text("built\n")
    print(out)


def nginx_repo(root):
    """nginx.org's layout: pool/ and dists/bookworm/nginx/binary-amd64/Packages, a Release (Origin: nginx) at
    dists/bookworm/, which the caller signs. Returns the dists/bookworm folder."""
    pool = root / "pool" / "nginx"
    pool.mkdir(parents=True)
    for name, (v, deps) in NGINX_ORG.items():
        deb(pool, name, v, deps, vendor="nginx.org's")
    dist = root / "dists" / "bookworm"
    binary = dist / "nginx" / "binary-amd64"
    binary.mkdir(parents=True)
    packages = subprocess.run(["dpkg-scanpackages", "-m", "pool"], cwd=root, check=True, capture_output=True,
                              text=True).stdout
    (binary / "Packages").write_text(packages)
    with gzip.open(binary / "Packages.gz", "wt") as f:
        f.write(packages)
    lines = ["Origin: nginx", "Label: nginx (llmhost.vllm test stand-in)", "Suite: bookworm", "Codename: bookworm",
             "Architectures: %s" % ARCH, "Components: nginx", "Date: Sun, 29 Nov 2026 00:00:00 UTC", "SHA256:"]
    for name in ("Packages", "Packages.gz"):
        data = (binary / name).read_bytes()
        lines.append(" %s %d nginx/binary-amd64/%s" % (hashlib.sha256(data).hexdigest(), len(data), name))
    (dist / "Release").write_text("\n".join(lines) + "\n")
    return dist


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("nvrepo: " + (fmt % args) + "\n")


def serve(out, port):
    handler = partial(Quiet, directory=str(out))
    http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), handler).serve_forever()


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "build":
        build(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
