"""transformers' eager code for Llama-shaped models, line by line (no `transformers` package here):
the pieces make-llama-golden.py, make-family-golden.py, make-ablation-golden.py and
make-llama-bench-model.py share. Read from huggingface/transformers, src/transformers/:
  models/llama/modeling_llama.py  (every family below copies these)
    LlamaRMSNorm.forward      h.to(float32); variance = h.pow(2).mean(-1, keepdim=True);
                              h * rsqrt(variance + eps); weight * h.to(input_dtype)
    LlamaRotaryEmbedding.forward  inv_freq[None, :, None] @ position_ids[:, None, :] (float32,
                              autocast off), emb = cat(freqs, freqs), cos/sin * attention_scaling,
                              cast to the activations' dtype
    rotate_half, apply_rotary_pos_emb  q·cos + rotate_half(q)·sin, rotate_half(x) = cat(-x2, x1);
                              GPT-NeoX's and Phi-3's version (apply_partial_rotary_pos_emb)
                              rotates only the first cos.shape[-1] dims and concatenates the rest
    repeat_kv                 kv head g serves query heads g·n_rep … g·n_rep + n_rep − 1
    eager_attention_forward   (q @ repeat_kv(k)ᵀ) * scaling [then Gemma 2's soft-cap
                              tanh(s / cap) * cap] + mask; softmax(dim=-1, dtype=float32)
                              .to(q.dtype); @ repeat_kv(v)
    LlamaMLP                  down(act(gate(x)) * up(x))
  modeling_rope_utils.py      _compute_default_rope_parameters: inv_freq = 1 / base **
                              (arange(0, dim, 2, int64).float() / dim);
                              _compute_linear_scaling_rope_parameters: inv_freq / factor;
                              _compute_llama3_parameters: wavelen = 2π / inv_freq;
                              wavelen > orig / low_freq_factor: inv_freq / factor;
                              wavelen < orig / high_freq_factor: unchanged; between:
                              (1 − s)·inv_freq / factor + s·inv_freq, s = (orig / wavelen −
                              low_freq_factor) / (high_freq_factor − low_freq_factor)
  masking_utils.py            causal_mask_function (kv_idx <= q_idx), sliding_window_overlay
                              (kv_idx > q_idx − sliding_window), eager_mask: where(mask, 0,
                              finfo(dtype).min), added to the scores
A float64 run departs from transformers in one way only, on purpose: transformers would upcast
RMSNorm, RoPE and softmax to float32 even in a float64 model; here they stay float64.
"""
import math

import torch
import torch.nn.functional as F


def rms_norm(hidden_states, weight, eps):
    """LlamaRMSNorm (Qwen3RMSNorm, Phi3RMSNorm): weight * normalised.to(input_dtype).
    transformers upcasts to float32; the float64 run stays float64."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.promote_types(input_dtype, torch.float32))
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return weight * hidden_states.to(input_dtype)


def default_inv_freq(base, dim, ft):
    """_compute_default_rope_parameters: 1 / base ** (arange(0, dim, 2, int64).float() / dim)."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(ft) / dim))


def rope_init(base, dim, rope_scaling, ft):
    """ROPE_INIT_FUNCTIONS[rope_type]: (inv_freq, attention_scaling) in ft, for the default,
    linear and llama3 rope types."""
    inv_freq = default_inv_freq(base, dim, ft)
    rope_type = None if rope_scaling is None else rope_scaling.get("rope_type",
                                                                   rope_scaling.get("type"))
    if rope_type in (None, "default"):
        return inv_freq, 1.0
    if rope_type == "linear":
        # _compute_linear_scaling_rope_parameters: inv_freq /= factor
        return inv_freq / rope_scaling["factor"], 1.0
    assert rope_type == "llama3", rope_scaling
    # _compute_llama3_parameters
    factor = rope_scaling["factor"]
    low_freq_factor = rope_scaling["low_freq_factor"]
    high_freq_factor = rope_scaling["high_freq_factor"]
    old_context_len = rope_scaling["original_max_position_embeddings"]
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
    return inv_freq_llama, 1.0


def rotary_embedding(inv_freq, attention_scaling, x_dtype, position_ids):
    """<Family>RotaryEmbedding.forward (float32 in transformers; the inv_freq's dtype here):
    (cos, sin) [batch, n, dim] in x_dtype."""
    ft = inv_freq.dtype
    inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].to(ft)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos() * attention_scaling
    sin = emb.sin() * attention_scaling
    return cos.to(dtype=x_dtype), sin.to(dtype=x_dtype)


def position_embeddings(base, dim, rope_scaling, ft, x_dtype, position_ids):
    """rope_init then rotary_embedding: the (cos, sin) every layer of a model with this RoPE
    reads."""
    inv_freq, attention_scaling = rope_init(base, dim, rope_scaling, ft)
    return rotary_embedding(inv_freq, attention_scaling, x_dtype, position_ids)


def embed(w, ids, name="model.embed_tokens.weight"):
    """<Family>Model.forward's start for one sequence: (inputs_embeds [1, n, d] of ids,
    position_ids = arange(n) [1, n])."""
    inputs_embeds = F.embedding(ids[None, :], w[name])
    return inputs_embeds, torch.arange(0, inputs_embeds.shape[1]).unsqueeze(0)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_llama.py's: every dim of the head rotated."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def apply_partial_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_gpt_neox.py's and modeling_phi3.py's apply_rotary_pos_emb: the first
    cos.shape[-1] dims rotated, the rest concatenated unchanged."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
    q_embed = (q_rot * cos) + (rotate_half(q_rot) * sin)
    k_embed = (k_rot * cos) + (rotate_half(k_rot) * sin)
    q_embed = torch.cat([q_embed, q_pass], dim=-1)
    k_embed = torch.cat([k_embed, k_pass], dim=-1)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, hd = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen,
                                                           hd)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, hd)


def eager_mask(n, window, dtype):
    """masking_utils: causal_mask_function [and sliding_window_overlay(window)], as an additive
    eager mask where(mask, 0, finfo(dtype).min): [1, 1, n, n]."""
    q_idx = torch.arange(n)[:, None]
    kv_idx = torch.arange(n)[None, :]
    mask = kv_idx <= q_idx
    if window is not None:
        mask = mask & (kv_idx > q_idx - window)
    min_dtype = torch.finfo(dtype).min
    mask = torch.where(mask, torch.tensor(0.0, dtype=dtype), torch.tensor(min_dtype, dtype=dtype))
    return mask[None, None, :, :]


def eager_attention_forward(num_key_value_groups, query, key, value, attention_mask, scaling,
                            softcap=None):
    """eager_attention_forward of modeling_llama.py (and Gemma 2's, with softcap):
    (attn_output [batch, n, heads, hd], attn_weights [batch, heads, n, keys])."""
    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = attn_weights / softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * softcap
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    # transformers: softmax(..., dtype=torch.float32).to(query.dtype); float64 run: float64.
    softmax_dtype = torch.promote_types(query.dtype, torch.float32)
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=softmax_dtype).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def attention_output(w, o_proj, query, key, value, attention_mask, scaling, softcap=None,
                     head_scale=None):
    """The end every family's attention forward shares: eager_attention_forward (the key/value
    heads repeated to the query heads'), the heads concatenated back to [batch, n, heads·hd],
    o_proj (with its bias when w has one): (attn_output, attn_weights). head_scale (optional,
    not transformers'): [heads·hd], multiplies each head's columns before o_proj (an ablation)."""
    input_shape = (query.shape[0], query.shape[2])
    attn_output, attn_weights = eager_attention_forward(
        query.shape[1] // key.shape[1], query, key, value, attention_mask, scaling=scaling,
        softcap=softcap)
    attn_output = attn_output.reshape(*input_shape, -1).contiguous()
    if head_scale is not None:
        attn_output = attn_output * head_scale
    return F.linear(attn_output, w[o_proj + ".weight"], w.get(o_proj + ".bias")), attn_weights


def gated_mlp(w, p, x, act=F.silu):
    """LlamaMLP (Qwen3MLP, Gemma2MLP/Gemma3MLP, Olmo2MLP): down_proj(act(gate_proj(x)) *
    up_proj(x)), no biases."""
    gate = F.linear(x, w[p + "gate_proj.weight"])
    up = F.linear(x, w[p + "up_proj.weight"])
    return F.linear(act(gate) * up, w[p + "down_proj.weight"])
