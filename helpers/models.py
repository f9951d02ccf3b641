"""The published sizes of the models the course counts, every dimension in one commented place."""

VASWANI_BASE = {
    "d": 512,          # d_model of the original Transformer, base size (Vaswani et al. 2017)
    "d_ff": 2048,      # FFN hidden width, 4 * d
    "n_layers": 6,     # encoder layers (and as many decoder layers)
    "activation": "ReLU",
}
GPT2_SMALL = {
    "d": 768,          # d_model of GPT-2 small (124M parameters)
    "d_ff": 3072,      # 4 * d
    "n_layers": 12,
    "n_heads": 12,     # attention heads, each of width d / n_heads = 64
    "context": 1024,   # maximum sequence length T
    "activation": "GELU (tanh approximation)",
}
GPT2_MEDIUM = {
    "d": 1024,         # d_model of GPT-2 medium (the 345M model of Radford et al. 2019, Table 2: 24 layers)
    "d_ff": 4096,      # 4 * d: OpenAI's src/model.py builds every block's FFN as mlp(..., nx*4)
    "n_layers": 24,
    "n_heads": 16,     # n_head in its Hugging Face config.json
}
GPT3 = {
    "d": 12288,        # d_model of GPT-3 175B (Brown et al. 2020, Table 2.1)
    "d_ff": 49152,     # 4 * d
    "n_layers": 96,
    # The paper never names the activation: GPT-3 uses "the same model and architecture as GPT-2" except for
    # sparse attention (section 2.1), so GELU by inheritance.
    "activation": "GELU (as GPT-2)",
}
LLAMA_7B = {
    "d": 4096,         # d_model of Llama 7B
    "d_ff": 11008,     # SwiGLU hidden width: 8/3 * d rounded up to a multiple of 256
    "n_layers": 32,
    "activation": "SwiGLU",
}
MIXTRAL_8X7B = {
    "d": 4096,         # d_model of Mixtral 8x7B
    "d_ff": 14336,     # SwiGLU hidden width of each expert
    "n_experts": 8,    # expert FFNs per layer
    "top_k": 2,        # experts each token is routed to
    "n_layers": 32,
    "n_heads": 32,     # query heads of width head_dim
    "n_kv_heads": 8,   # key/value heads (grouped-query attention), each shared by 4 query heads
    "head_dim": 128,
    "vocab": 32000,    # tokens; the input and output embeddings are not tied
    "activation": "SwiGLU",
}
