"""Fetch a Hugging Face model revision into a folder: the llmhost.vllm model role's worker.

Runs with an interpreter that has huggingface_hub (vLLM's venv has it). Honours HF_ENDPOINT
(mirrors), HF_HUB_OFFLINE=1 (a pre-seeded cache only), HF_HOME (the cache) and HF_TOKEN_PATH (a
0600 token file; the token never passes through argv). Downloads resume: interrupted files are
completed on the next run, and progress bars show on stderr.

usage: llmhost_fetch.py size --repo ID --revision SHA            -> bytes of the revision's files
       llmhost_fetch.py download --repo ID --revision SHA --dest DIR"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["size", "download"])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--dest")
    args = ap.parse_args()
    try:
        from huggingface_hub import HfApi, snapshot_download
        from huggingface_hub.utils import HfHubHTTPError
    except ImportError:
        sys.exit("huggingface_hub is not installed for %s (model_python)" % sys.executable)
    try:
        if args.action == "size":
            info = HfApi().model_info(args.repo, revision=args.revision, files_metadata=True)
            print(sum(s.size or 0 for s in info.siblings or []))
        else:
            path = snapshot_download(repo_id=args.repo, revision=args.revision, local_dir=args.dest)
            print(path)
    except HfHubHTTPError as e:
        sys.exit("model_repo=%s model_revision=%s: %s" % (args.repo, args.revision, e))
    except Exception as e:  # pylint: disable=broad-except  # repository-not-found and offline misses, said plainly
        sys.exit("model_repo=%s model_revision=%s: %s: %s" % (args.repo, args.revision, type(e).__name__, e))


if __name__ == "__main__":
    main()
