"""Write the option table of `vllm serve` for one vLLM version (roles/vllm_service/files/vllm-options/).

The table is what vLLM's own argument parser reports: every option string with takes_value,
nargs and choices. The serving plan checks every rendered option against it, so a table must
come from the exact vLLM version a stack profile pins.

Regenerate, in a throwaway venv holding that vLLM (no GPU needed):
    python -m venv /tmp/v && /tmp/v/bin/pip install vllm==0.33.0
    VLLM_TARGET_DEVICE=cpu /tmp/v/bin/python tools/vllm_option_table.py parser > roles/vllm_service/files/vllm-options/0.33.0.json
VLLM_TARGET_DEVICE=cpu matters on a GPU-less machine: without it recent vLLM cannot infer a
device and fails before it builds the parser. Or convert a table dumped elsewhere in the same
shape ({"vllm_version", "options": {flag: {...}}}):
    python tools/vllm_option_table.py compact dump.json > roles/vllm_service/files/vllm-options/<version>.json
"""
import argparse
import json
import sys

KEEP = ("takes_value", "nargs", "choices")


def from_parser():
    import vllm  # noqa: F401  (the venv's vLLM; imported only here)
    try:  # 0.7 and later
        from vllm.entrypoints.common.cli_args import make_arg_parser
    except ImportError:
        try:
            from vllm.entrypoints.openai.cli_args import make_arg_parser
        except ImportError:
            sys.exit("this vLLM has no make_arg_parser where the tool looks for it")
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    parser = make_arg_parser(FlexibleArgumentParser())
    options = {}
    for action in parser._actions:  # pylint: disable=protected-access  # argparse keeps no public list
        for flag in action.option_strings:
            if flag in ("-h", "--help"):
                continue
            options[flag] = {"takes_value": action.nargs != 0, "nargs": action.nargs,
                             "choices": sorted(str(c) for c in action.choices) if action.choices else None}
    return {"vllm_version": vllm.__version__, "options": dict(sorted(options.items()))}


def compact(path):
    with open(path) as f:
        data = json.load(f)
    return {"vllm_version": data["vllm_version"],
            "options": {k: {f: v.get(f) for f in KEEP} for k, v in sorted(data["options"].items())}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("parser", help="read the installed vLLM's parser")
    c = sub.add_parser("compact", help="convert a dumped table")
    c.add_argument("path")
    args = ap.parse_args()
    table = from_parser() if args.cmd == "parser" else compact(args.path)
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
