"""Write a Qwen3-4B-shaped model folder for `vllm serve --load-format dummy` (random weights).

Device proof only (not part of `make test`): no download is possible on the lent machines, so the
folder holds Qwen3-4B's published config.json numbers and a word-level tokenizer over Qwen's
151,936 ids with Qwen's special tokens at their real ids (<|endoftext|> 151643, <|im_start|>
151644, <|im_end|> 151645). vLLM needs no weights with --load-format dummy.
usage: python3 qwen_shape.py DIR"""
import json
import os
import sys

from tokenizers import Tokenizer, models, pre_tokenizers

VOCAB = 151936
SPECIAL = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
CONFIG = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560, "intermediate_size": 9728,
    "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 262144, "vocab_size": VOCAB, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "rms_norm_eps": 1e-06, "rope_theta": 5000000, "hidden_act": "silu", "attention_bias": False,
    "bos_token_id": 151643, "eos_token_id": 151645,
}


def main(out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    vocab = {"w%d" % i: i for i in range(VOCAB) if i not in SPECIAL.values()}
    vocab.update(SPECIAL)
    vocab["[UNK]"] = vocab.pop("w0")
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(list(SPECIAL))
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                   "model_max_length": 262144,
                   "chat_template": "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                                    "{% endfor %}<|im_start|>assistant\n"}, f)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [151645, 151643], "bos_token_id": 151643}, f)
    print(out)


if __name__ == "__main__":
    main(sys.argv[1])
