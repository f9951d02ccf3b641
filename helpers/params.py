"""Parameter counts of an FFN block's parts, and the FLOPs of its matrix products, from the model's sizes."""
import math


def ffn_params(d: int, d_ff: int, bias: bool = True) -> int:
    """W1 (d x d_ff) + b1 (d_ff) + W2 (d_ff x d) + b2 (d)."""
    return d * d_ff + d_ff * d + ((d_ff + d) if bias else 0)


def attention_params(d: int, bias: bool = False) -> int:
    """The four d x d projections Q, K, V and O (and their biases if bias=True)."""
    return 4 * d * d + (4 * d if bias else 0)


def swiglu_params(d: int, d_ff: int) -> int:
    """W_gate and W_up (d x d_ff each) and W_down (d_ff x d); SwiGLU FFNs have no biases."""
    return 3 * d * d_ff


def swiglu_hidden(d: int, multiple_of: int = 256) -> int:
    """Llama's SwiGLU width: 2/3 of 4d (so three matrices hold as many weights as two at 4d), rounded up to a
    multiple of `multiple_of`. For d = 4096 that is 11,008."""
    return multiple_of * math.ceil(int(2 * 4 * d / 3) / multiple_of)


def ffn_flops(T: int, d: int, d_ff: int) -> int:
    """FLOPs of the FFN's two matrix products over T tokens: x @ W1, then h @ W2 (a multiply-add is two)."""
    return 2 * T * d * d_ff + 2 * T * d_ff * d


def attention_mix_flops(T: int, d: int, n_heads: int = 1) -> int:
    """FLOPs of attention's scores and mixing over T tokens: per head Q @ K.T, then A @ V, on d / n_heads
    coordinates."""
    d_head = d // n_heads
    return n_heads * (2 * T * d_head * T + 2 * T * T * d_head)
