"""Write a tiny Qwen2-architecture model with random weights and a Qwen-style tokenizer, for tests.

Nothing can be downloaded in the test machines' network, so the model the model and quantize
roles work on is made here, in pure Python (no torch): 2 layers, hidden size 128, Qwen's full
vocabulary size (151,936) so that Qwen's special tokens sit at their real ids (<|endoftext|>
151643, <|im_start|> 151644, <|im_end|> 151645), bf16 weights in one safetensors file drawn from
a seeded generator (the same bytes every time), and a word-level tokenizer whose first entries are
the words and characters of the collection's calibration set. It answers nothing sensible; it has
the shapes, files and tokens of a real Qwen checkpoint.

usage: tiny_qwen.py OUT_DIR [CALIBRATION_JSONL]"""
import json
import os
import random
import re
import struct
import sys

VOCAB = 151936
SPECIAL = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
H, INTER, LAYERS, HEADS, KV_HEADS = 128, 256, 2, 4, 2
HEAD_DIM = H // HEADS
CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": H, "intermediate_size": INTER,
    "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
    "max_position_embeddings": 4096, "max_window_layers": LAYERS, "vocab_size": VOCAB, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16", "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "hidden_act": "silu",
    "sliding_window": None, "use_sliding_window": False, "use_cache": True, "attention_dropout": 0.0,
    "initializer_range": 0.02, "bos_token_id": 151643, "eos_token_id": 151645, "transformers_version": "4.45.2",
}
CHAT_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
                 " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                 "{% endif %}")


def tensors():
    """(name, shape) of every weight, in Qwen2's naming."""
    out = [("model.embed_tokens.weight", (VOCAB, H)), ("model.norm.weight", (H,))]
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        out += [(p + "input_layernorm.weight", (H,)), (p + "post_attention_layernorm.weight", (H,)),
                (p + "self_attn.q_proj.weight", (HEADS * HEAD_DIM, H)), (p + "self_attn.q_proj.bias", (HEADS * HEAD_DIM,)),
                (p + "self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, H)),
                (p + "self_attn.k_proj.bias", (KV_HEADS * HEAD_DIM,)),
                (p + "self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, H)),
                (p + "self_attn.v_proj.bias", (KV_HEADS * HEAD_DIM,)),
                (p + "self_attn.o_proj.weight", (H, HEADS * HEAD_DIM)),
                (p + "mlp.gate_proj.weight", (INTER, H)), (p + "mlp.up_proj.weight", (INTER, H)),
                (p + "mlp.down_proj.weight", (H, INTER))]
    return out


def random_bf16(rng, n):
    """n bf16 values of magnitude about 0.008-0.03 with random signs (little endian)."""
    data = bytearray(rng.randbytes(2 * n))
    # high byte: keep the sign, exponent 0x78/0x79 (2^-7 .. 2^-6 range with the mantissa)
    table = bytes((b & 0x80) | 0x3C for b in range(256))
    data[1::2] = bytes(data[1::2]).translate(table)
    return bytes(data)


def write_safetensors(path, rng):
    header, blobs, offset = {}, [], 0
    for name, shape in tensors():
        n = 1
        for d in shape:
            n *= d
        blob = (b"\x80\x3f" * n) if name.endswith("norm.weight") else random_bf16(rng, n)  # norms: 1.0
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for blob in blobs:
            f.write(blob)


def vocabulary(calibration):
    words = []
    if calibration and os.path.exists(calibration):
        with open(calibration, encoding="utf-8") as f:
            for line in f:
                for w in re.findall(r"\w+|[^\w\s]+", json.loads(line)["text"]):
                    if w not in words:
                        words.append(w)
    vocab, i = {"[UNK]": 0}, 1
    for w in words:
        while i in SPECIAL.values():
            i += 1
        vocab[w] = i
        i += 1
    for k in range(i, VOCAB):
        if k not in SPECIAL.values():
            vocab["w%d" % k] = k
    vocab.update(SPECIAL)
    return vocab


def main(out, calibration=None):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 151643, "eos_token_id": [151645, 151643], "pad_token_id": 151643}, f, indent=2)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for t, i in sorted(SPECIAL.items(), key=lambda kv: kv[1])]
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
           "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": vocabulary(calibration), "unk_token": "[UNK]"}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": None, "eos_token": "<|im_end|>",
                   "pad_token": "<|endoftext|>", "unk_token": "[UNK]", "model_max_length": 4096,
                   "added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added},
                   "chat_template": CHAT_TEMPLATE}, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), random.Random(20261129))
    print(out)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
