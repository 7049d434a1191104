"""Fetch a Hugging Face model revision into a folder, checked against the Hub: the llmhost.vllm model role's worker.

The role copies this file to the host and runs it there with an interpreter that has huggingface_hub
(vLLM's venv has it; 0.26 for the seed profile, 1.x and 2.x for current ones). It honours HF_ENDPOINT
(mirrors), HF_HUB_OFFLINE=1 (a pre-seeded cache only), HF_HOME (the cache) and HF_TOKEN_PATH (a 0600
file); with --token-stdin it reads the token from its first line of input instead. The token never
passes through argv or the environment of a command line, and nothing here prints it.

  plan      prints JSON: the commit, the total size, every file with its size and the Hub's own hashes
            (sha256 of LFS files, git blob id of the others), and the revision's config.json. A
            repository or revision that does not exist is refused here, before anything is written.
  download  fills DEST with the revision. DEST is the role's scratch folder (<model>.partial): an
            interrupted download of the same revision continues there: the files it finished are kept,
            and huggingface_hub 0.x resumes a partial file (1.x starts that file again: its partial
            files are per process). A folder of another revision, or anything else, is removed first;
            the client's bookkeeping under DEST/.cache, stale partial files included, goes at the end.
            Then every file is checked against the Hub's sha256 or blob id; a file that does not
            match is deleted (so a re-run fetches it again) and the run fails naming it. Offline
            (HF_HUB_OFFLINE=1) nothing can be asked, and the output says the files were not checked.

usage: llmhost_fetch.py plan --repo ID --revision SHA [--token-stdin]
       llmhost_fetch.py download --repo ID --revision SHA --dest DIR [--token-stdin]"""
import argparse
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile

MARKER = os.path.join(".cache", "llmhost-origin")


def hub():
    try:
        import huggingface_hub  # pylint: disable=import-outside-toplevel
    except ImportError:
        sys.exit("huggingface_hub is not installed for %s (model_python)" % sys.executable)
    return huggingface_hub


def revision_files(repo, revision):
    """{path: {size, sha256 (LFS only), blob_id}} of the revision, as the Hub lists them."""
    info = hub().HfApi().model_info(repo, revision=revision, files_metadata=True)
    files = {}
    for s in info.siblings or []:
        files[s.rfilename] = {"size": s.size, "blob_id": s.blob_id, "sha256": s.lfs.sha256 if s.lfs else None}
    return info.sha, files


def read_config(repo, revision):
    with tempfile.TemporaryDirectory(prefix="llmhost-fetch-") as tmp:
        path = hub().hf_hub_download(repo, "config.json", revision=revision, cache_dir=tmp)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def plan(args):
    sha, files = revision_files(args.repo, args.revision)
    config = read_config(args.repo, args.revision) if "config.json" in files else None
    return {"sha": sha, "size": sum(f["size"] or 0 for f in files.values()), "files": files, "config": config}


def digests(path):
    """(sha256, git blob id) of a file, read once in 8 MiB blocks."""
    sha256, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(8 << 20), b""):
            sha256.update(block)
            blob.update(block)
    return sha256.hexdigest(), blob.hexdigest()


def mismatch(dest, rel, want):
    """Why the downloaded file differs from the Hub's record of it, or None."""
    path = os.path.join(dest, rel)
    if not os.path.isfile(path):
        return "missing"
    sha256, blob = digests(path)
    if want["sha256"] and sha256 != want["sha256"]:
        return "sha256 %s, the Hub says %s" % (sha256, want["sha256"])
    if not want["sha256"] and want["blob_id"] and blob != want["blob_id"]:
        return "git blob id %s, the Hub says %s" % (blob, want["blob_id"])
    return None


def forget(dest, rel):
    """Delete a bad file and the client's record of it, so that the next run fetches it again."""
    for path in (os.path.join(dest, rel), os.path.join(dest, ".cache", "huggingface", "download", rel + ".metadata")):
        if os.path.lexists(path):
            os.remove(path)


def hold(dest):
    """Take DEST for this process alone (an flock on the folder, released when the process ends, even
    killed): a second download into the same folder, say from a run whose controller died and a new
    run, is refused instead of writing beside the first."""
    os.makedirs(dest, exist_ok=True)
    fd = os.open(dest, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit("%s is being written by another download (a run still going, perhaps one whose controller "
                 "died): nothing was touched; wait for it or stop it" % dest)
    return fd


def prepare(dest, origin):
    """Keep DEST when it holds an interrupted download of ORIGIN; otherwise start from an empty one
    (emptied, not removed: the folder is what this process holds)."""
    try:
        with open(os.path.join(dest, MARKER), encoding="utf-8") as f:
            have = f.read().strip()
    except OSError:
        have = None
    if have != origin and os.listdir(dest):
        print("starting over in %s (it held %s)" % (dest, have or "no download of this worker"), file=sys.stderr)
        for name in os.listdir(dest):
            path = os.path.join(dest, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
    os.makedirs(os.path.join(dest, ".cache"), exist_ok=True)
    with open(os.path.join(dest, MARKER), "w", encoding="utf-8") as f:
        f.write(origin + "\n")
    return have == origin


def download(args):
    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")
    files = None if offline else revision_files(args.repo, args.revision)[1]  # a missing revision stops here
    hold(args.dest)
    continued = prepare(args.dest, "%s@%s" % (args.repo, args.revision))
    hub().snapshot_download(repo_id=args.repo, revision=args.revision, local_dir=args.dest)
    bad = {rel: why for rel, why in ((rel, mismatch(args.dest, rel, want)) for rel, want in (files or {}).items()) if why}
    for rel in bad:
        forget(args.dest, rel)
    if bad:
        sys.exit("model_repo=%s model_revision=%s: refused, not what the Hub lists (deleted; a re-run fetches them "
                 "again): %s" % (args.repo, args.revision, "; ".join("%s: %s" % kv for kv in sorted(bad.items()))))
    shutil.rmtree(os.path.join(args.dest, ".cache"))
    return {"files": len(files) if files is not None else None, "continued": continued,
            "checked": "sha256 and git blob ids from the Hub" if files is not None else "not checked: offline"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["plan", "download"])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--dest")
    ap.add_argument("--token-stdin", action="store_true", help="read the token from the first line of input")
    args = ap.parse_args()
    if args.token_stdin:
        token = sys.stdin.readline().strip()
        if token:
            os.environ["HF_TOKEN"] = token  # before huggingface_hub is imported; this process only
    if args.action == "download" and not args.dest:
        ap.error("download needs --dest")
    try:
        result = plan(args) if args.action == "plan" else download(args)
    except Exception as e:  # pylint: disable=broad-except  # not-found, gated and offline misses, said plainly
        sys.exit("model_repo=%s model_revision=%s: %s: %s" % (args.repo, args.revision, type(e).__name__, " ".join(str(e).split())))
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
