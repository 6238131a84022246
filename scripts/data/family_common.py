"""What the family golden modules share: the output folder, the sequence length, the
checkpoint dtypes, a family's entry for the driver, the families' own norms and activations with
their float64 loop versions, and the forward and variants of the Llama-shaped ones (the pieces
every family shares are hf_eager.py's and golden_case.py's)."""

import math
import os

import torch
import torch.nn.functional as F

from hf_eager import eager_mask, embed, position_embeddings, rms_norm


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "families")
PUBLISHED = os.path.join(OUT, "published")
N = 12  # tokens per sequence
torch.set_num_threads(1)  # one reduction order for every run

TORCH_DTYPE = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
STORAGE = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}



def every_layer(value):
    """A case's per-layer list: value(c) on each of its layers."""
    return lambda c: [value(c)] * c["layers"]


def family(*, cases, weights, config, forward, loops, variants, params, meta, head_dim, rope,
           kv_heads=lambda c: c["kv"], windows=every_layer(lambda c: None), attn_scale=None):
    """A family's entry for make-family-golden.py: its cases and, per case c, weights(c),
    config(c), forward(stored, ids, c, ft), loops(stored, ids, c), variants(c, stored),
    meta(c), head_dim(c), kv_heads(c) (default c["kv"]), every layer's RoPE rope(c) as (base,
    rotary dim, scaling) and window windows(c) (None: full, the default on every layer), and
    attn_scale(c) (default head_dim(c)**-0.5); params(config) of a published config."""
    return dict(cases=cases, weights=weights, config=config, forward=forward, loops=loops,
                variants=variants, params=params, meta=meta, head_dim=head_dim, kv_heads=kv_heads,
                windows=windows, rope=rope,
                attn_scale=attn_scale or (lambda c: head_dim(c) ** -0.5))


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
# Shared by the Llama-shaped families (Qwen3, Gemma 2 and 3, OLMo 2, Phi-3): the forward of those
# whose decoder layer is LlamaDecoderLayer's, the variants of those with a pair of per-layer
# weights a loader could mix up, and the parameter count of a published config.


def llama_decoder_forward(stored, ids, c, ft, attention, mlp, head_dim, window):
    """<Family>ForCausalLM(input_ids[None]) in dtype ft for a family that keeps Llama's decoder
    (Qwen3, Phi-3) with its own attention(w, p, c, hidden_states, position_embeddings, mask) and
    mlp(w, p, hidden_states): every layer x + attn(rms_norm(x)), then x + mlp(rms_norm(x)), full
    RoPE of rope_theta over head_dim, the mask's window on every layer; final norm, lm_head
    (embed_tokens when c["tied"]): (logits [n, vocab], [heads, n, n] per layer)."""
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids)
    causal_mask = eager_mask(len(ids), window, ft)
    rope = position_embeddings(c["theta"], head_dim, None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "input_layernorm.weight"], eps)
        hidden_states, attn_weights = attention(w, p + "self_attn.", c, hidden_states, rope,
                                                causal_mask)
        hidden_states = residual + hidden_states  # resid dropouts: identity in eval
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
        hidden_states = mlp(w, p + "mlp.", hidden_states)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm(hidden_states, w["model.norm.weight"], eps)
    lm_head = w["model.embed_tokens.weight"] if c.get("tied") else w["lm_head.weight"]
    return F.linear(hidden_states, lm_head)[0], attentions


def swapped_pair_variants(c, stored, label, a, b):
    """A loader's slips for a family with a pair of per-layer weights: rope_theta left at the
    default 10000, and model.layers.<l>.a and .b swapped on every layer (named label)."""
    swapped = dict(stored)
    for l in range(c["layers"]):
        name_a, name_b = f"model.layers.{l}.{a}", f"model.layers.{l}.{b}"
        swapped[name_a], swapped[name_b] = stored[name_b], stored[name_a]
    return [("rope_theta 10000", dict(c, theta=10000), stored), (label, c, swapped)]


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
