"""Package the stand-in `vllm serve` (server.py) as a wheel named vllm, at a given version.

usage: build.py VERSION OPTIONS_TABLE METRIC_NAMES OUT_DIR   -> prints the wheel's path

The wheel is a plain zip in the wheel format (no build backend needed, nothing fetched). Its
`vllm` console script runs the stand-in; VERSION, options.json and metric-names.txt ride inside."""
import base64
import hashlib
import os
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main(version, table, metrics, out):
    here = os.path.dirname(os.path.abspath(__file__))
    dist = "vllm-%s.dist-info" % version
    files = {
        "vllm/__init__.py": b'"""STAND-IN vllm package for tests (tests/harness/vllm_standin)."""\n'
                            b"__version__ = %r\n" % version.encode(),
        "vllm/standin.py": open(os.path.join(here, "server.py"), "rb").read(),
        "vllm/VERSION": version.encode() + b"\n",
        "vllm/options.json": open(table, "rb").read(),
        "vllm/metric-names.txt": open(metrics, "rb").read(),
        dist + "/METADATA": ("Metadata-Version: 2.1\nName: vllm\nVersion: %s\n"
                             "Summary: STAND-IN of vllm serve for tests without a GPU\n"
                             "Requires-Dist: torch\n" % version).encode(),
        dist + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: llmhost-standin\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        dist + "/entry_points.txt": b"[console_scripts]\nvllm = vllm.standin:main\n",
    }
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "vllm-%s-py3-none-any.whl" % version)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        lines = []
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
            lines.append(record_line(name, data))
        lines.append(dist + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(dist + "/RECORD", date_time=(2026, 1, 1, 0, 0, 0)), "\n".join(lines) + "\n")
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
