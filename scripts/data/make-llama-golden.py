#!/usr/bin/env python3
"""Llama-family checkpoint golden data: tests/data/llama/<case>.safetensors, .config.json,
.expected.safetensors, for the families `llama`, `qwen2` and `mistral`.

Each case is a tiny checkpoint with random weights written as a Hugging Face `model.safetensors`
really is: LlamaForCausalLM / Qwen2ForCausalLM / MistralForCausalLM names (`model.embed_tokens`,
`model.layers.<i>.{input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm,
mlp.{gate,up,down}_proj}`, `model.norm`, `lm_head` only when untied), nn.Linear weights [out, in],
the header's tensors sorted by name (as the safetensors library writes them), metadata
{"format": "pt"}, every tensor in the case's dtype (F32, BF16 or F16). Next to it, its
config.json (the keys `transformers` writes for the family, sorted as save_pretrained sorts them)
and <case>.expected.safetensors, all F64:
  ids                  the token ids of one sequence of N = 12 tokens (F64 holding integers)
  logits32 / logits64  the logits [n, vocab] of the reference below in float32 and in float64
  attn32.<l> / attn64.<l>  layer l's attention weights [heads, n, n] of the QUERY heads (after
                       repeat_kv: what transformers returns with output_attentions=True, eager)
and the config's numbers as metadata (family, layers, heads, kv_heads, head_dim, d_model, vocab,
context = max_position_embeddings, n, dtype). "32" is the reference run in float32 exactly as
transformers runs a float32 model; "64" is the same stored weights cast to float64 and the same
code run in float64 throughout (inv_freq, cos/sin, RMSNorm and softmax included). A BF16/F16
case's expected values are computed from the weights as stored (rounded, then upcast: the
forward reads them back from the written file), never in bf16/f16 arithmetic.

The reference follows transformers' eager code line by line (no `transformers` package here):
  models/llama/modeling_llama.py
    LlamaRMSNorm.forward      h.to(float32); variance = h.pow(2).mean(-1, keepdim=True);
                              h * rsqrt(variance + eps); weight * h.to(input_dtype)
    LlamaRotaryEmbedding.forward  inv_freq[None, :, None] @ position_ids[:, None, :] (float32,
                              autocast off), emb = cat(freqs, freqs), cos/sin * attention_scaling
                              (1.0 for default and llama3), cast to the activations' dtype
    rotate_half, apply_rotary_pos_emb  q·cos + rotate_half(q)·sin, rotate_half(x) = cat(-x2, x1)
    repeat_kv                 kv head g serves query heads g·n_rep … g·n_rep + n_rep − 1
    eager_attention_forward   (q @ repeat_kv(k)ᵀ) * head_dim**-0.5 + mask;
                              softmax(dim=-1, dtype=float32).to(q.dtype); @ repeat_kv(v)
    LlamaAttention            head_dim = config.head_dim if set, else hidden // heads;
                              q/k/v/o biases when attention_bias; o_proj [d, heads·head_dim]
    LlamaMLP                  down(act(gate(x)) * up(x)), biases when mlp_bias, act = silu
    LlamaDecoderLayer         x += attn(input_layernorm(x)); x += mlp(post_attention_layernorm(x))
    LlamaModel / ForCausalLM  embed_tokens, position_ids = arange(n), final norm, lm_head (tied:
                              the embedding matrix)
  modeling_rope_utils.py      _compute_default_rope_parameters: inv_freq = 1 / base **
                              (arange(0, dim, 2, int64).float() / dim), dim = head_dim;
                              _compute_llama3_parameters: wavelen = 2π / inv_freq;
                              wavelen > orig / low_freq_factor: inv_freq / factor;
                              wavelen < orig / high_freq_factor: unchanged; between:
                              (1 − s)·inv_freq / factor + s·inv_freq, s = (orig / wavelen −
                              low_freq_factor) / (high_freq_factor − low_freq_factor)
  masking_utils.py            causal_mask_function (kv_idx <= q_idx), sliding_window_overlay
                              (kv_idx > q_idx − sliding_window), eager_mask: where(mask, 0,
                              finfo(dtype).min), added to the scores
  models/qwen2/               Qwen2Attention: q/k/v biases, no o bias; Qwen2Config:
                              sliding_window is None unless use_sliding_window, then layers
                              i >= max_window_layers slide
  models/mistral/             MistralAttention / MistralModel: config.sliding_window, every layer
The float64 run departs from transformers in one way only, on purpose: transformers would upcast
RMSNorm, RoPE and softmax to float32 even in a float64 model; here they stay float64.

Checks (a failing one stops the script before the case's expected file is written): the file
reads back as written; float32 and float64 agree; a second, independent float64 implementation
(per-head, per-row loops, kv head h // (heads / kv_heads), explicit pair rotations, explicit
window) gives the same logits and attention to 1e-12; the rotate_half RoPE equals rotating the
pairs (x_i, x_{i+hd/2}) by t·θ_i; the llama3 case's scaling leaves some frequencies unchanged,
divides some by factor and smooths some; every sliding window (mistral's) and causal mask zeroes
exactly the keys j <= i − window and j > i; every row sums to 1.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-llama-golden.py (deterministic).
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import (read_checkpoint, read_safetensors, write_checkpoint,  # noqa: E402
                            write_safetensors)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "llama")
N = 12  # tokens per sequence

# original_max_position_embeddings 32 (not 16): with head_dim 24 and theta 5e5 the wavelengths
# 2π/inv_freq are 6.3, 18.8, 56, 167, …; at 16 (high_freq_wavelen 4) none stays unchanged, at 32
# (high 8, low 32) the first stays, the second is smoothed and the other ten are divided by 8.
LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 32}

# family, sizes, switches, stored dtype, seed. head_dim None: not in config.json (d / heads).
CASES = [
    dict(name="llama-f32", family="llama", layers=2, heads=4, kv=2, d=64, head_dim=None, inter=96,
         vocab=96, ctx=64, theta=10000.0, eps=1e-5, tied=False, attention_bias=False,
         rope_scaling=None, bos=1, eos=2, dtype="F32", seed=11),
    dict(name="llama-bf16", family="llama", layers=2, heads=4, kv=2, d=64, head_dim=None, inter=96,
         vocab=96, ctx=64, theta=10000.0, eps=1e-5, tied=False, attention_bias=False,
         rope_scaling=None, bos=1, eos=2, dtype="BF16", seed=11),
    dict(name="llama3-f32", family="llama", layers=2, heads=4, kv=4, d=64, head_dim=24, inter=64,
         vocab=64, ctx=64, theta=500000.0, eps=1e-5, tied=True, attention_bias=True,
         rope_scaling=LLAMA3_SCALING, bos=62, eos=63, dtype="F32", seed=12),
    dict(name="qwen2-f32", family="qwen2", layers=2, heads=4, kv=1, d=64, head_dim=None, inter=128,
         vocab=72, ctx=128, theta=1000000.0, eps=1e-6, tied=True, sliding_window=4096,
         use_sliding_window=False, max_window_layers=2, bos=71, eos=71, dtype="F32", seed=13),
    dict(name="qwen2-bf16", family="qwen2", layers=2, heads=4, kv=1, d=64, head_dim=None, inter=128,
         vocab=72, ctx=128, theta=1000000.0, eps=1e-6, tied=True, sliding_window=4096,
         use_sliding_window=False, max_window_layers=2, bos=71, eos=71, dtype="BF16", seed=13),
    dict(name="mistral-f32", family="mistral", layers=3, heads=4, kv=2, d=64, head_dim=None,
         inter=112, vocab=80, ctx=64, theta=10000.0, eps=1e-5, tied=False, sliding_window=5,
         bos=1, eos=2, dtype="F32", seed=14),
    dict(name="smollm2-f16", family="llama", layers=3, heads=3, kv=1, d=48, head_dim=None,
         inter=128, vocab=64, ctx=64, theta=100000.0, eps=1e-5, tied=True, attention_bias=False,
         rope_scaling=None, bos=0, eos=0, dtype="F16", seed=15),
]

ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM"}
TORCH_DTYPE = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}


def head_dim(c):
    """LlamaAttention: getattr(config, "head_dim", None) or hidden_size // num_attention_heads."""
    return c["head_dim"] or c["d"] // c["heads"]


def q_bias(c):
    return c["family"] == "qwen2" or c.get("attention_bias", False)


def o_bias(c):
    return c["family"] == "llama" and c.get("attention_bias", False)


def layer_windows(c):
    """The sliding window of each layer (None: full causal attention)."""
    if c["family"] == "mistral":
        return [c["sliding_window"]] * c["layers"]
    if c["family"] == "qwen2":
        # Qwen2Config: sliding_window = sliding_window if use_sliding_window else None; layer_types
        # "sliding_attention" if sliding_window is not None and i >= max_window_layers.
        window = c["sliding_window"] if c["use_sliding_window"] else None
        return [window if window is not None and i >= c["max_window_layers"] else None
                for i in range(c["layers"])]
    return [None] * c["layers"]


# ---------------------------------------------------------------------------------------------
# Weights and files


def make_weights(c):
    """HF state dict (float32) and the token ids, from one generator seeded per case."""
    g = torch.Generator().manual_seed(c["seed"])
    d, v, hd, inter = c["d"], c["vocab"], head_dim(c), c["inter"]
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def randn(*shape, std=1.0, mean=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean

    w = {"model.embed_tokens.weight": randn(v, d, std=0.5)}
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        # q and k large enough that the heads attend unevenly (scores of a few units).
        w[p + "self_attn.q_proj.weight"] = randn(hq, d, std=1.4 / math.sqrt(d))
        w[p + "self_attn.k_proj.weight"] = randn(hkv, d, std=1.4 / math.sqrt(d))
        w[p + "self_attn.v_proj.weight"] = randn(hkv, d, std=1.0 / math.sqrt(d))
        if q_bias(c):
            w[p + "self_attn.q_proj.bias"] = randn(hq, std=0.1)
            w[p + "self_attn.k_proj.bias"] = randn(hkv, std=0.1)
            w[p + "self_attn.v_proj.bias"] = randn(hkv, std=0.1)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        if o_bias(c):
            w[p + "self_attn.o_proj.bias"] = randn(d, std=0.1)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        w[p + "mlp.gate_proj.weight"] = randn(inter, d, std=1.0 / math.sqrt(d))
        w[p + "mlp.up_proj.weight"] = randn(inter, d, std=1.0 / math.sqrt(d))
        w[p + "mlp.down_proj.weight"] = randn(d, inter, std=1.0 / math.sqrt(inter))
    w["model.norm.weight"] = randn(d, std=0.1, mean=1.0)
    if not c["tied"]:
        w["lm_head.weight"] = randn(v, d, std=0.3)
    ids = torch.randint(0, v, (N,), generator=g)
    return w, ids


def write_config(path, c):
    """The Hugging Face config.json of case c (keys sorted, indent 2, as save_pretrained)."""
    config = {
        "architectures": [ARCH[c["family"]]], "model_type": c["family"],
        "attention_dropout": 0.0, "bos_token_id": c["bos"], "eos_token_id": c["eos"],
        "hidden_act": "silu", "hidden_size": c["d"], "initializer_range": 0.02,
        "intermediate_size": c["inter"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "rms_norm_eps": c["eps"],
        "rope_scaling": c.get("rope_scaling"), "rope_theta": c["theta"],
        "tie_word_embeddings": c["tied"], "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.46.3", "use_cache": True, "vocab_size": c["vocab"],
    }
    if c["head_dim"] is not None:
        config["head_dim"] = c["head_dim"]
    if c["family"] == "llama":
        config.update(attention_bias=c["attention_bias"], mlp_bias=False, pretraining_tp=1)
    if c["family"] == "qwen2":
        config.update(sliding_window=c["sliding_window"],
                      use_sliding_window=c["use_sliding_window"],
                      max_window_layers=c["max_window_layers"])
    if c["family"] == "mistral":
        config.update(sliding_window=c["sliding_window"])
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# The reference: transformers' eager Llama / Qwen2 / Mistral forward, line by line.


def rope_init(c, ft):
    """ROPE_INIT_FUNCTIONS[rope_type](config): (inv_freq, attention_scaling), in ft."""
    # _compute_default_rope_parameters
    base = c["theta"]
    dim = head_dim(c)  # partial_rotary_factor 1.0
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(ft) / dim))
    attention_factor = 1.0
    rs = c.get("rope_scaling")
    if rs is None:
        return inv_freq, attention_factor
    assert rs["rope_type"] == "llama3"
    # _compute_llama3_parameters
    factor = rs["factor"]
    low_freq_factor = rs["low_freq_factor"]
    high_freq_factor = rs["high_freq_factor"]
    old_context_len = rs["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    # wavelen < high_freq_wavelen: do nothing; wavelen > low_freq_wavelen: divide by factor
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # otherwise: interpolate between the two, using a smooth factor
    smooth_factor = ((old_context_len / wavelen - low_freq_factor)
                     / (high_freq_factor - low_freq_factor))
    smoothed_inv_freq = ((1 - smooth_factor) * inv_freq_llama / factor
                         + smooth_factor * inv_freq_llama)
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, attention_factor


def rotary_embedding(inv_freq, attention_scaling, x, position_ids):
    """LlamaRotaryEmbedding.forward (float32 in transformers; the inv_freq's dtype here)."""
    ft = inv_freq.dtype
    inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].to(ft)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos() * attention_scaling
    sin = emb.sin() * attention_scaling
    return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, hd = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen,
                                                           hd)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, hd)


def rms_norm(hidden_states, weight, eps):
    """LlamaRMSNorm.forward. transformers upcasts to float32; the float64 run stays float64."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.promote_types(input_dtype, torch.float32))
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return weight * hidden_states.to(input_dtype)


def eager_mask(n, window, dtype):
    """masking_utils.eager_mask of causal_mask_function [and sliding_window_overlay]:
    [1, 1, n, n]."""
    q_idx = torch.arange(n)[:, None]
    kv_idx = torch.arange(n)[None, :]
    mask = kv_idx <= q_idx
    if window is not None:
        mask = mask & (kv_idx > q_idx - window)
    min_dtype = torch.finfo(dtype).min
    mask = torch.where(mask, torch.tensor(0.0, dtype=dtype), torch.tensor(min_dtype, dtype=dtype))
    return mask[None, None, :, :]


def eager_attention_forward(num_key_value_groups, query, key, value, attention_mask, scaling):
    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    # transformers: softmax(..., dtype=torch.float32).to(query.dtype); float64 run: float64.
    softmax_dtype = torch.promote_types(query.dtype, torch.float32)
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=softmax_dtype).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """LlamaAttention / Qwen2Attention / MistralAttention .forward (eager, no cache)."""
    hd = head_dim(c)
    input_shape = hidden_states.shape[:-1]
    hidden_shape = (*input_shape, -1, hd)
    b = lambda name: w.get(p + name)  # noqa: E731  (None when the checkpoint has no such bias)
    proj = lambda s: F.linear(hidden_states, w[p + s + ".weight"], b(s + ".bias"))  # noqa: E731
    query_states = proj("q_proj").view(hidden_shape).transpose(1, 2)
    key_states = proj("k_proj").view(hidden_shape).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    attn_output, attn_weights = eager_attention_forward(
        c["heads"] // c["kv"], query_states, key_states, value_states, attention_mask,
        scaling=hd ** -0.5)
    attn_output = attn_output.reshape(*input_shape, -1).contiguous()
    attn_output = F.linear(attn_output, w[p + "o_proj.weight"], b("o_proj.bias"))
    return attn_output, attn_weights


def mlp(w, p, x):
    """LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn = SiLU."""
    gate = F.linear(x, w[p + "gate_proj.weight"])
    up = F.linear(x, w[p + "up_proj.weight"])
    return F.linear(F.silu(gate) * up, w[p + "down_proj.weight"])


def forward(stored, ids, c, ft):
    """LlamaForCausalLM(input_ids[None]) in dtype ft: (logits [n, vocab], attentions, one
    [heads, n, n] per layer)."""
    w = {k: x.to(ft) for k, x in stored.items()}
    input_ids = ids[None, :]
    inputs_embeds = F.embedding(input_ids, w["model.embed_tokens.weight"])
    cache_position = torch.arange(0, inputs_embeds.shape[1])
    position_ids = cache_position.unsqueeze(0)
    hidden_states = inputs_embeds
    inv_freq, attention_scaling = rope_init(c, ft)
    position_embeddings = rotary_embedding(inv_freq, attention_scaling, hidden_states, position_ids)
    attentions = []
    for l, window in enumerate(layer_windows(c)):
        p = f"model.layers.{l}."
        mask = eager_mask(input_ids.shape[1], window, ft)
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "input_layernorm.weight"], c["eps"])
        hidden_states, attn_weights = attention(w, p + "self_attn.", c, hidden_states,
                                                position_embeddings, mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"], c["eps"])
        hidden_states = mlp(w, p + "mlp.", hidden_states)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm(hidden_states, w["model.norm.weight"], c["eps"])
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    logits = F.linear(hidden_states, lm_head)
    return logits[0], attentions


# ---------------------------------------------------------------------------------------------
# An independent float64 implementation (loops, explicit pairs and windows), for the checks.


def forward_loops(stored, ids, c):
    w = {k: x.to(torch.float64) for k, x in stored.items()}
    n, heads, kv, hd, d = len(ids), c["heads"], c["kv"], head_dim(c), c["d"]
    half, group = hd // 2, heads // kv
    inv_freq, _ = rope_init(c, torch.float64)

    def norm(x, weight):
        return torch.stack([row / math.sqrt(float((row * row).sum()) / d + c["eps"]) * weight
                            for row in x])

    def rotate(vec, t):  # one head's vector at position t: pairs (i, i + half) by angle t·θ_i
        out = vec.clone()
        for i in range(half):
            a = t * float(inv_freq[i])
            x0, x1 = float(vec[i]), float(vec[i + half])
            out[i] = x0 * math.cos(a) - x1 * math.sin(a)
            out[i + half] = x1 * math.cos(a) + x0 * math.sin(a)
        return out

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l, window in enumerate(layer_windows(c)):
        p = f"model.layers.{l}."
        h = norm(x, w[p + "input_layernorm.weight"])
        q, k, v = (lin(h, p + "self_attn." + s) for s in ("q_proj", "k_proj", "v_proj"))
        A = torch.zeros(heads, n, n, dtype=torch.float64)
        ctx = torch.zeros(n, heads * hd, dtype=torch.float64)
        for hh in range(heads):
            g = hh // group
            qs = [rotate(q[t, hh * hd:(hh + 1) * hd], t) for t in range(n)]
            ks = [rotate(k[t, g * hd:(g + 1) * hd], t) for t in range(n)]
            vs = [v[t, g * hd:(g + 1) * hd] for t in range(n)]
            for i in range(n):
                lo = 0 if window is None else max(0, i - window + 1)
                js = list(range(lo, i + 1))
                s = [float(qs[i] @ ks[j]) / math.sqrt(hd) for j in js]
                m = max(s)
                e = [math.exp(sj - m) for sj in s]
                z = sum(e)
                for j, ej in zip(js, e):
                    A[hh, i, j] = ej / z
                    ctx[i, hh * hd:(hh + 1) * hd] += (ej / z) * vs[j]
        attentions.append(A)
        x = x + lin(ctx, p + "self_attn.o_proj")
        h2 = norm(x, w[p + "post_attention_layernorm.weight"])
        gate = lin(h2, p + "mlp.gate_proj")
        x = x + lin(gate / (1 + torch.exp(-gate)) * lin(h2, p + "mlp.up_proj"), p + "mlp.down_proj")
    x = norm(x, w["model.norm.weight"])
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return x @ lm_head.T, attentions


def check_rotate_half(c):
    """apply_rotary_pos_emb equals rotating (x_i, x_{i+hd/2}) by t·θ_i, in float64."""
    g = torch.Generator().manual_seed(1000 + c["seed"])
    hd = head_dim(c)
    inv_freq, scaling = rope_init(c, torch.float64)
    q = torch.randn(1, c["heads"], N, hd, generator=g, dtype=torch.float64)
    k = torch.randn(1, c["kv"], N, hd, generator=g, dtype=torch.float64)
    cos, sin = rotary_embedding(inv_freq, scaling, q, torch.arange(N)[None, :])
    qe, ke = apply_rotary_pos_emb(q, k, cos, sin)
    for x, xe in ((q, qe), (k, ke)):
        want = torch.empty_like(x)
        for t in range(N):
            for i in range(hd // 2):
                a = t * float(inv_freq[i])
                x0, x1 = x[..., t, i], x[..., t, i + hd // 2]
                want[..., t, i] = x0 * math.cos(a) - x1 * math.sin(a)
                want[..., t, i + hd // 2] = x1 * math.cos(a) + x0 * math.sin(a)
        err = float((xe - want).abs().max())
        assert err < 1e-12, (c["name"], "rotate_half", err)


def check_llama3(c):
    """The llama3 scaling leaves some frequencies, divides some by factor, smooths the rest."""
    rs = c["rope_scaling"]
    scaled, _ = rope_init(c, torch.float64)
    plain, _ = rope_init(dict(c, rope_scaling=None), torch.float64)
    same = scaled == plain
    divided = torch.isclose(scaled, plain / rs["factor"], rtol=1e-15, atol=0)
    smoothed = ~same & ~divided
    counts = (int(same.sum()), int(smoothed.sum()), int(divided.sum()))
    assert all(k > 0 for k in counts), (c["name"], "llama3 categories", counts)
    assert bool((scaled <= plain).all() and (scaled >= plain / rs["factor"] * (1 - 1e-15)).all())
    return counts


def attention_stats(attentions):
    """Mean of each row's largest weight, over rows that see at least 4 keys."""
    tops = [a[:, i, :].max(-1).values for a in attentions for i in range(3, a.shape[1])]
    return float(torch.cat(tops).mean()), float(torch.cat(tops).max())


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        w, ids = make_weights(c)
        path = os.path.join(OUT, c["name"] + ".safetensors")
        write_checkpoint(path, w, c["dtype"])
        write_config(os.path.join(OUT, c["name"] + ".config.json"), c)
        stored = read_checkpoint(path)  # the weights as the file holds them, exactly, in float64
        assert sorted(stored) == sorted(w)
        for name in w:
            assert stored[name].shape == w[name].shape
            if c["dtype"] == "F32":
                assert torch.equal(stored[name], w[name].to(torch.float64)), name

        results = {}
        for label, ft in (("32", torch.float32), ("64", torch.float64)):
            logits, attentions = forward(stored, ids, c, ft)
            results[label] = (logits, attentions)

        # Checks.
        check_rotate_half(c)
        extra = ""
        if c.get("rope_scaling"):
            extra = " llama3 (unchanged, smoothed, divided) = %s" % (check_llama3(c),)
        logits64, att64 = results["64"]
        loop_logits, loop_att = forward_loops(stored, ids, c)
        loop_err = max([float((loop_logits - logits64).abs().max())] +
                       [float((a - b).abs().max()) for a, b in zip(loop_att, att64)])
        assert loop_err < 1e-12, (c["name"], "loops vs vectorized", loop_err)
        for label in ("32", "64"):
            for l, (a, window) in enumerate(zip(results[label][1], layer_windows(c))):
                i = torch.arange(N)[:, None]
                j = torch.arange(N)[None, :]
                outside = j > i
                if window is not None:
                    outside = outside | (j <= i - window)
                assert bool((a[:, outside] == 0).all()), (c["name"], label, l, "mask")
                assert bool((a[:, ~outside] > 0).all()), (c["name"], label, l, "visible")
                tol = 1e-6 if label == "32" else 1e-14
                assert float((a.to(torch.float64).sum(-1) - 1).abs().max()) < tol
        if c["family"] == "mistral":
            assert c["sliding_window"] < N and any(wd is not None for wd in layer_windows(c))
        d_logits = float((results["32"][0].to(torch.float64) - logits64).abs().max())
        d_attn = max(float((a.to(torch.float64) - b).abs().max())
                     for a, b in zip(results["32"][1], att64))
        assert d_logits < 1e-4 and d_attn < 1e-5, (c["name"], d_logits, d_attn)
        top_mean, top_max = attention_stats(att64)
        assert 0.3 < top_mean < 0.9 and top_max < 0.9999, (c["name"], top_mean, top_max)

        expected = {"ids": ids.to(torch.float64).numpy()}
        for label in ("32", "64"):
            logits, attentions = results[label]
            expected["logits" + label] = logits.to(torch.float64).numpy()
            for l, a in enumerate(attentions):
                expected[f"attn{label}.{l}"] = a.to(torch.float64).numpy()
        meta = {"family": c["family"], "layers": str(c["layers"]), "heads": str(c["heads"]),
                "kv_heads": str(c["kv"]), "head_dim": str(head_dim(c)), "d_model": str(c["d"]),
                "vocab": str(c["vocab"]), "context": str(c["ctx"]), "n": str(N),
                "dtype": c["dtype"]}
        epath = os.path.join(OUT, c["name"] + ".expected.safetensors")
        write_safetensors(epath, expected, meta)
        back, back_meta = read_safetensors(epath)
        assert back_meta == meta and all(np.array_equal(back[k], expected[k]) for k in expected)
        print("wrote %-12s max|f32-f64| logits %.2e attn %.2e; loops vs vectorized %.1e; "
              "mean top attention %.2f (max %.3f)%s"
              % (c["name"], d_logits, d_attn, loop_err, top_mean, top_max, extra))


if __name__ == "__main__":
    main()
