"""Quantize a causal LM to AWQ 4-bit, atomically: the llmhost.vllm quantize role's worker.

Runs in the quantizer's own venv (llm-compressor for the current stack profile, AutoAWQ for the
seed). The output is written to DEST.partial and renamed to DEST only when complete and verified
(config with quantization_config, packed 4-bit weights, every safetensors file readable), so an
interrupted run leaves nothing the service could pick up. The tokenizer is never rewritten: its
files are copied byte for byte from the source.

usage: python llmhost_quantize.py --tool llm-compressor --source DIR --dest DIR --group-size 128
         --calibration FILE.jsonl --samples 32 --seq-len 512 --device auto --stamp STAMP.json"""
import argparse
import fcntl
import json
import os
import shutil
import struct
import sys
import time

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "special_tokens_map.json",
                   "added_tokens.json", "chat_template.jinja", "chat_template.json", "generation_config.json",
                   "tokenizer.model"]
STAMP = "llmhost-quantize.json"
# In DEST.partial while this worker writes it: an interrupted run's folder, not someone else's.
PARTIAL_MARK = ".llmhost-quantize-partial"


def hold(tmp):
    """Take DEST.partial for this process alone (an flock on the folder, released when the process ends,
    even killed): a second quantization into it is refused instead of writing beside the first."""
    os.makedirs(tmp, exist_ok=True)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit("%s is being written by another quantization (a run still going, perhaps one whose controller "
                 "died): nothing was touched; wait for it or stop it" % tmp)
    return fd


def refuse_foreign(dest, tmp, source):
    """Exit before anything is touched when DEST or DEST.partial is not this worker's to replace."""
    if dest == source or dest.startswith(source + os.sep) or source.startswith(dest + os.sep):
        sys.exit("--dest %s is, holds or lies in the source model %s: nothing is replaced" % (dest, source))
    if os.path.exists(dest) and not os.path.isfile(os.path.join(dest, STAMP)):
        sys.exit("--dest %s exists and holds no %s, so it is not an output of this worker: nothing is replaced"
                 % (dest, STAMP))
    if os.path.exists(tmp) and not os.path.isfile(os.path.join(tmp, PARTIAL_MARK)):
        sys.exit("%s exists and is not an interrupted run's folder (no %s): nothing is removed" % (tmp, PARTIAL_MARK))


def log(msg):
    print("[llmhost-quantize %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def texts(path, n):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line)["text"])
    if not out:
        sys.exit("calibration file %s holds no {\"text\": ...} lines" % path)
    while len(out) < n:  # a small set is repeated rather than padded with anything invented
        out += out[:n - len(out)]
    return out[:n]


def safetensors_names(path):
    """Tensor names of a safetensors file, after checking that its header and size agree."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    if os.path.getsize(path) != 8 + size + end:
        raise ValueError("%s: size does not match its header" % path)
    return [k for k in header if k != "__metadata__"]


def verify(out, tool):
    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)
    q = config.get("quantization_config")
    if not q:
        raise ValueError("config.json has no quantization_config")
    names = []
    for fn in os.listdir(out):
        if fn.endswith(".safetensors"):
            names += safetensors_names(os.path.join(out, fn))
    packed = [n for n in names if n.endswith(("weight_packed", "qweight"))]
    if not packed:
        raise ValueError("no packed 4-bit weights (weight_packed / qweight) in the output")
    log("verified: %s, %d packed weight tensors, quant_method=%s" % (out, len(packed), q.get("quant_method")))
    return q


def quantize_llm_compressor(args, model_dir, out, calib):
    import torch
    from datasets import Dataset
    from llmcompressor import oneshot
    from llmcompressor.modifiers.awq import AWQModifier
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    log("llm-compressor on %s, group size %d, %d samples of up to %d tokens" % (device, args.group_size,
                                                                                len(calib), args.seq_len))
    if device == "cpu":
        # llm-compressor pins host memory to speed up copies to the GPU, which needs a CUDA driver;
        # a CPU-only run copies nothing to a GPU, so pinning is skipped there.
        from llmcompressor.pipelines.cache import IntermediatesCache
        IntermediatesCache.pin_memory = lambda self, *a, **k: None
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype="auto", device_map=device)
    tok = AutoTokenizer.from_pretrained(model_dir)
    enc = tok(calib, truncation=True, max_length=args.seq_len, padding=False)
    ds = Dataset.from_dict({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]})
    weights = {"num_bits": 4, "type": "int", "symmetric": False,
               "strategy": "channel" if args.group_size == -1 else "group"}
    if args.group_size != -1:
        weights["group_size"] = args.group_size
    recipe = [AWQModifier(ignore=["lm_head"], config_groups={"group_0": {"targets": ["Linear"], "weights": weights}})]
    oneshot(model=model, dataset=ds, recipe=recipe, max_seq_length=args.seq_len, num_calibration_samples=len(calib))
    model.save_pretrained(out, save_compressed=True)


def quantize_autoawq(args, model_dir, out, calib):
    from awq import AutoAWQForCausalLM
    from transformers import AutoTokenizer

    log("AutoAWQ, group size %d, %d samples" % (args.group_size, len(calib)))
    model = AutoAWQForCausalLM.from_pretrained(model_dir, safetensors=True)
    tok = AutoTokenizer.from_pretrained(model_dir)
    quant_config = {"zero_point": True, "q_group_size": args.group_size, "w_bit": 4, "version": "GEMM"}
    model.quantize(tok, quant_config=quant_config, calib_data=calib, max_calib_seq_len=args.seq_len)
    model.save_quantized(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", choices=["llm-compressor", "autoawq"], required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--dest", required=True)
    ap.add_argument("--group-size", type=int, default=128)
    ap.add_argument("--calibration", required=True)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--stamp", required=True, help="JSON file with what this output is made of")
    ap.add_argument("--keep-previous", action=argparse.BooleanOptionalAction, default=True,
                    help="keep the output this one replaces as DEST.previous (else delete it)")
    args = ap.parse_args()
    if args.group_size not in (32, 64, 128, -1):
        sys.exit("group size %d: vLLM's AWQ kernels take 32, 64, 128 or -1 (per channel)" % args.group_size)
    dest = os.path.abspath(args.dest.rstrip("/"))
    tmp = dest + ".partial"
    refuse_foreign(dest, tmp, os.path.abspath(args.source.rstrip("/")))
    hold(tmp)
    if os.listdir(tmp):
        log("emptying %s left by an interrupted run" % tmp)
        for name in os.listdir(tmp):
            path = os.path.join(tmp, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
    open(os.path.join(tmp, PARTIAL_MARK), "w").close()
    calib = texts(args.calibration, args.samples)
    (quantize_llm_compressor if args.tool == "llm-compressor" else quantize_autoawq)(args, args.source, tmp, calib)
    # the tokenizer as it came, byte for byte; nothing the quantizer may have written in its place
    for fn in TOKENIZER_FILES:
        src = os.path.join(args.source, fn)
        if os.path.exists(src):
            shutil.copy2(src, os.path.join(tmp, fn))
        elif os.path.exists(os.path.join(tmp, fn)):
            os.remove(os.path.join(tmp, fn))
    verify(tmp, args.tool)
    os.remove(os.path.join(tmp, PARTIAL_MARK))
    shutil.copy2(args.stamp, os.path.join(tmp, STAMP))
    # readable by the service user (some writers create 0600 files); writable by root only
    os.chmod(tmp, 0o755)
    for fn in os.listdir(tmp):
        os.chmod(os.path.join(tmp, fn), 0o644)
    replace(tmp, dest, args.keep_previous)
    log("done: %s" % dest)


def replace(tmp, dest, keep_previous):
    """Rename the verified output into place; the output it replaces becomes DEST.previous or is deleted."""
    old = None
    if os.path.exists(dest):
        old = "%s.old-%d" % (dest, os.getpid())
        os.rename(dest, old)
    os.rename(tmp, dest)
    if old and keep_previous:
        previous = dest + ".previous"
        if os.path.exists(previous):
            shutil.rmtree(previous)
        os.rename(old, previous)
    elif old:
        shutil.rmtree(old)


if __name__ == "__main__":
    main()
