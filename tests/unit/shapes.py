"""config.json shapes of the models the serving plan is tested on: the published configs' numbers (Hugging Face model
cards, config.json of each repository), with their published parameter counts. Shared by the unit tests and the
lent-GPU proof (tests/device/plan_shapes.py), which serves each with random weights."""

AWQ_CONFIG = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}

QWEN25_3B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 36,
             "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 11008,
             "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True,
             "torch_dtype": "bfloat16"}
QWEN3_4B = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 2560, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 9728,
            "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": True,
            "torch_dtype": "bfloat16"}
QWEN3_8B = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
            "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16"}
QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 5120, "num_hidden_layers": 64,
             "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600,
             "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16"}
QWEN25_32B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 5120, "num_hidden_layers": 64,
              "num_attention_heads": 40, "num_key_value_heads": 8, "intermediate_size": 27648,
              "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16"}
QWEN25_32B_AWQ = dict(QWEN25_32B, quantization_config=AWQ_CONFIG, torch_dtype="float16")
QWEN25_72B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 8192, "num_hidden_layers": 80,
              "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 29568,
              "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16"}
# Mixture of experts
QWEN3_30B_A3B = {"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 48,
                 "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
                 "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
                 "mlp_only_layers": [], "norm_topk_prob": True, "vocab_size": 151936,
                 "max_position_embeddings": 40960, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
QWEN3_235B_A22B = {"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 94,
                   "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 12288,
                   "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8,
                   "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936,
                   "max_position_embeddings": 40960, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
QWEN15_MOE_A27B = {"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 24,
                   "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
                   "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
                   "num_experts_per_tok": 4, "decoder_sparse_step": 1, "vocab_size": 151936,
                   "max_position_embeddings": 8192, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
QWEN2_57B_A14B = {"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 3584, "num_hidden_layers": 28,
                  "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
                  "moe_intermediate_size": 2560, "shared_expert_intermediate_size": 20480, "num_experts": 64,
                  "num_experts_per_tok": 8, "decoder_sparse_step": 1, "vocab_size": 151936,
                  "max_position_embeddings": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
MIXTRAL_8X7B = {"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
                "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
                "max_position_embeddings": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}

# Published parameter counts, billions (total, active per token): the model cards.
PUBLISHED = {
    "Qwen2.5-3B": (QWEN25_3B, 3.09, None), "Qwen3-4B": (QWEN3_4B, 4.0, None), "Qwen3-8B": (QWEN3_8B, 8.2, None),
    "Qwen3-32B": (QWEN3_32B, 32.8, None), "Qwen2.5-32B": (QWEN25_32B, 32.5, None),
    "Qwen2.5-72B": (QWEN25_72B, 72.7, None),
    "Qwen3-30B-A3B": (QWEN3_30B_A3B, 30.5, 3.3), "Qwen3-235B-A22B": (QWEN3_235B_A22B, 235, 22),
    "Qwen1.5-MoE-A2.7B": (QWEN15_MOE_A27B, 14.3, 2.7), "Qwen2-57B-A14B": (QWEN2_57B_A14B, 57.4, 14),
    "Mixtral-8x7B": (MIXTRAL_8X7B, 46.7, 12.9),
}

# The shapes served on a lent GPU (tests/device/plan_shapes_proof.sh), by folder name.
SHAPES = {"qwen2.5-3b": QWEN25_3B, "qwen3-4b": QWEN3_4B, "qwen3-8b": QWEN3_8B, "qwen2.5-32b-awq": QWEN25_32B_AWQ,
          "qwen3-30b-a3b": QWEN3_30B_A3B}
