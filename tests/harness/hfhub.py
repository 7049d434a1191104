"""A STAND-IN of the Hugging Face Hub on loopback, for tests only: serves model repositories from local
folders to the real `huggingface_hub` client (through HF_ENDPOINT).

The test machines cannot reach huggingface.co. This answers the few routes the client uses to read a
public or gated model repository at a commit, in the Hub's own formats:
  GET  /api/models/<org>/<name>/revision/<rev>[?blobs=true]   model_info / repo_info (siblings, LFS sha256)
  GET  /api/models/<org>/<name>/tree/<rev>[/<dir>]            list_repo_tree (huggingface_hub >= 1.0)
  HEAD|GET /<org>/<name>/resolve/<rev>/<path>                 file metadata and bytes, Range for resumes
Errors carry the Hub's X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound), which the client
turns into its own exceptions. LFS files (weights, tokenizer.json) get their sha256 as X-Linked-Etag,
the others their git blob id as ETag, as on the Hub.

Layout: ROOT/<org>/<name>/<40-hex commit>/<files>. A revision folder appears atomically (write it
beside, then rename) and is read per request, so a harness can fill ROOT while the server runs.

Faults, for the tests of a client's failure paths, come from ROOT/faults.json, read per request:
  {"throttle_bps": N}         serve file bodies at about N bytes per second
  {"hold_after": N}           serve the first N bytes of a file body, then send nothing more while faults.json says
                              so (at most 120 s): a download held half-way, to be killed there
  {"corrupt": ["<path>"]}     serve bytes for <path> that differ from the sha256 the Hub metadata gives
Every request is appended to ROOT/requests.log as one JSON line (method, path, Range, Authorization).

usage: hfhub.py serve ROOT PORT      (plain HTTP on 127.0.0.1; PORT 0 picks one, printed on stdout)"""
import hashlib
import http.server
import json
import os
import re
import sys
import threading
import time
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf", ".msgpack")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
CHUNK = 16384


def is_lfs(path):
    return path.endswith(LFS_SUFFIXES) or os.path.basename(path) == "tokenizer.json"


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    """One revision folder: its files, with the ids the Hub gives them (cached by mtime and size)."""

    _cache = {}
    _lock = threading.Lock()

    def __init__(self, folder):
        self.folder = folder

    def files(self):
        out = []
        for top, dirs, names in os.walk(self.folder):
            dirs.sort()
            for name in sorted(names):
                full = os.path.join(top, name)
                out.append((os.path.relpath(full, self.folder), full))
        return out

    @classmethod
    def ids(cls, full):
        st = os.stat(full)
        key = (full, st.st_mtime_ns, st.st_size)
        with cls._lock:
            if key not in cls._cache:
                with open(full, "rb") as f:
                    data = f.read()
                cls._cache[key] = {"size": len(data), "blob": git_blob_id(data), "sha256": hashlib.sha256(data).hexdigest()}
            return cls._cache[key]

    def sibling(self, rel, full):
        i = self.ids(full)
        out = {"rfilename": rel, "size": i["size"], "blobId": i["blob"]}
        if is_lfs(rel):
            out["lfs"] = {"size": i["size"], "sha256": i["sha256"], "pointerSize": 134}
        return out

    def tree_entry(self, rel, full):
        i = self.ids(full)
        out = {"type": "file", "oid": i["blob"], "size": i["size"], "path": rel}
        if is_lfs(rel):
            out["lfs"] = {"oid": i["sha256"], "size": i["size"], "pointerSize": 134}
        return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."

    def log_message(self, fmt, *args):  # the request log below replaces the default stderr lines
        pass

    def _record(self):
        line = {"t": round(time.time(), 3), "method": self.command, "path": self.path,
                "range": self.headers.get("Range"), "authorization": self.headers.get("Authorization")}
        with open(os.path.join(self.root, "requests.log"), "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def _faults(self):
        try:
            with open(os.path.join(self.root, "faults.json"), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _send(self, code, body=b"", headers=None, head=False):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, code, error_code, message, head=False):
        body = json.dumps({"error": message}).encode()
        self._send(code, body, {"Content-Type": "application/json", "X-Error-Code": error_code,
                                "X-Error-Message": message}, head)

    def _json(self, obj, head=False):
        self._send(200, json.dumps(obj).encode(), {"Content-Type": "application/json"}, head)

    def _revision(self, org, name, rev):
        repo_dir = os.path.join(self.root, org, name)
        if not os.path.isdir(repo_dir):
            return None, ("RepoNotFound", "Repository Not Found for url: %s." % self.path)
        folder = os.path.join(repo_dir, rev)
        if not COMMIT.match(rev) or not os.path.isdir(folder):
            return None, ("RevisionNotFound", "Invalid rev id: %s" % rev)
        return Repo(folder), None

    def do_HEAD(self):  # noqa: N802  (http.server's naming)
        self._route(head=True)

    def do_GET(self):  # noqa: N802
        self._route(head=False)

    def _route(self, head):
        self._record()
        path = unquote(urlsplit(self.path).path)
        m = re.match(r"^/api/models/([^/]+)/([^/]+)/(revision|tree)/([^/]+)(/.*)?$", path)
        if m:
            return self._api(m.group(1), m.group(2), m.group(3), m.group(4), head)
        m = re.match(r"^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$", path)
        if m:
            return self._resolve(m.group(1), m.group(2), m.group(3), m.group(4), head)
        return self._error(404, "EntryNotFound", "no such route: %s" % path, head)

    def _api(self, org, name, kind, rev, head):
        repo, err = self._revision(org, name, rev)
        if err:
            return self._error(404, err[0], err[1], head)
        if kind == "tree":
            return self._json([repo.tree_entry(rel, full) for rel, full in repo.files()], head)
        return self._json({"_id": "%s/%s" % (org, name), "id": "%s/%s" % (org, name), "modelId": "%s/%s" % (org, name),
                           "sha": rev, "private": False, "disabled": False, "gated": False, "tags": [],
                           "lastModified": "2026-01-01T00:00:00.000Z",
                           "siblings": [repo.sibling(rel, full) for rel, full in repo.files()]}, head)

    def _resolve(self, org, name, rev, rel, head):
        repo, err = self._revision(org, name, rev)
        if err:
            return self._error(404, err[0], err[1], head)
        full = os.path.join(repo.folder, rel)
        if ".." in rel.split("/") or not os.path.isfile(full):
            return self._error(404, "EntryNotFound", "Entry not found: %s" % rel, head)
        ids = Repo.ids(full)
        headers = {"X-Repo-Commit": rev, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        if is_lfs(rel):
            headers.update({"X-Linked-Etag": '"%s"' % ids["sha256"], "X-Linked-Size": ids["size"], "ETag": '"%s"' % ids["blob"]})
        else:
            headers["ETag"] = '"%s"' % ids["blob"]
        with open(full, "rb") as f:
            data = f.read()
        faults = self._faults()
        if rel in faults.get("corrupt", []):
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        start = 0
        m = re.match(r"^bytes=(\d+)-$", self.headers.get("Range") or "")
        if m and int(m.group(1)) < len(data):
            start = int(m.group(1))
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, len(data) - 1, len(data))
        self.send_response(206 if start else 200)
        for k, v in headers.items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if not head:
            self._stream(data[start:], faults.get("throttle_bps"), faults.get("hold_after"))

    def _hold(self):
        """Wait while faults.json asks to hold (bounded), the connection open and silent."""
        for _tick in range(2400):
            if "hold_after" not in self._faults():
                return
            time.sleep(0.05)

    def _stream(self, data, bps, hold_after=None):
        try:
            for i in range(0, len(data), CHUNK):
                if hold_after is not None and i >= hold_after:
                    self.wfile.flush()
                    self._hold()
                    hold_after = None
                self.wfile.write(data[i:i + CHUNK])
                if bps:
                    self.wfile.flush()
                    time.sleep(CHUNK / float(bps))
        except (BrokenPipeError, ConnectionResetError):  # the client went away (a killed download)
            self.close_connection = True


def serve(root, port):
    handler = type("RootHandler", (Handler,), {"root": os.path.abspath(root)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def main(argv):
    if len(argv) != 4 or argv[1] != "serve":
        sys.exit(__doc__)
    os.makedirs(argv[2], exist_ok=True)
    server = serve(argv[2], int(argv[3]))
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv)
