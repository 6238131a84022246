"""What the family golden modules share: the output folder, the sequence length, the
checkpoint dtypes, and the families' own norms and activations with their float64 loop versions
(the pieces every family shares are hf_eager.py's and golden_case.py's)."""

import math
import os

import torch
import torch.nn.functional as F


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "families")
PUBLISHED = os.path.join(OUT, "published")
N = 12  # tokens per sequence
torch.set_num_threads(1)  # one reduction order for every run

TORCH_DTYPE = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
STORAGE = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}

# =============================================================================================
# The families' own norms and activations (the pieces every family shares are hf_eager.py's)


def rms_norm_olmo2(hidden_states, weight, eps):
    """Olmo2RMSNorm: (weight * normalised).to(input_dtype) — the weight multiplies in float32."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.promote_types(input_dtype, torch.float32))
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return (weight * hidden_states).to(input_dtype)


def rms_norm_gemma(x, weight, eps):
    """Gemma2RMSNorm / Gemma3RMSNorm: _norm(x.float()) * (1.0 + weight.float()), type_as(x)."""
    ft = torch.promote_types(x.dtype, torch.float32)  # x.float(); float64 stays float64
    h = x.to(ft)
    output = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    output = output * (1.0 + weight.to(ft))
    return output.type_as(x)


def layer_norm(x, weight, bias, eps):
    """nn.LayerNorm(hidden, eps) with its weight and bias (GPT-NeoX)."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def gelu_tanh(x):
    """ACT2FN["gelu_pytorch_tanh"]: gelu(x, approximate="tanh")."""
    return F.gelu(x, approximate="tanh")


def floats(stored, ft):
    """The stored weights as ft; U8/BOOL buffers (GPT-NeoX's) are not read by any forward."""
    return {k: x.to(ft) for k, x in stored.items() if x.is_floating_point()}


def round_to(value, dtype):
    """A Python float rounded to a checkpoint dtype, as a Python float (exact in float64)."""
    return float(torch.tensor(value, dtype=torch.float64).to(STORAGE[dtype]).to(torch.float64))


# ---------------------------------------------------------------------------------------------
# The families' own pieces of the independent float64 loop implementation (golden_case.py's
# loop_* are the shared ones).


def loop_layer_norm(x, weight, bias, eps):
    out = torch.empty_like(x)
    for r in range(x.shape[0]):
        row = [float(v) for v in x[r]]
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        s = 1.0 / math.sqrt(var + eps)
        for i, v in enumerate(row):
            out[r, i] = (v - mean) * s * float(weight[i]) + float(bias[i])
    return out


def loop_gelu_erf(x):
    return torch.tensor([[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in row.tolist()]
                         for row in x], dtype=torch.float64)


def loop_gelu_tanh(x):
    c = math.sqrt(2 / math.pi)
    return torch.tensor([[0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v ** 3))) for v in
                          row.tolist()] for row in x], dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# Shared by the Llama-shaped families (Qwen3, Gemma 2 and 3, OLMo 2, Phi-3): a variant with pairs
# of weights swapped, and the parameter count of a published config.


def swap_weights(stored, pairs):
    out = dict(stored)
    for a, b in pairs:
        out[a], out[b] = stored[b], stored[a]
    return out


def llama_like_params(config, q_norm, k_norm, norms_per_layer, fused=False):
    """Parameters of a Llama-shaped checkpoint: embeddings (lm_head only when untied), per layer
    q/k/v/o (no biases), q_norm/k_norm of the given widths, norms_per_layer vectors of hidden,
    a gated MLP; final norm."""
    d, v, layers, inter = (config["hidden_size"], config["vocab_size"],
                           config["num_hidden_layers"], config["intermediate_size"])
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    hd = config.get("head_dim") or d // heads
    attn = d * heads * hd + 2 * d * kv * hd + heads * hd * d
    per_layer = attn + q_norm + k_norm + norms_per_layer * d + 3 * d * inter
    tied = config.get("tie_word_embeddings", True)
    return v * d * (1 if tied else 2) + layers * per_layer + d
