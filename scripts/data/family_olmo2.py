"""olmo2 — Olmo2ForCausalLM: models/olmo2/modeling_olmo2.py

The family's golden cases for make-family-golden.py: the cases, the checkpoint's tensors, its
config.json, the eager reference (run in float32 and float64), the independent float64 loops,
the variants a loader could get wrong, and the parameter count of a published config. The
driver's docstring says which transformers code each follows and what is checked."""

import math

import torch
import torch.nn.functional as F

from family_common import (N, TORCH_DTYPE, every_layer, family, floats, llama_like_params,
                           rms_norm_olmo2, swapped_pair_variants)
from golden_case import (draw_mlp, draw_qkv, llama_shaped_weights, loop_attention, loop_inv_freq,
                         loop_lin, loop_rms, loop_silu, rotated_heads, split_heads)
from hf_eager import (attention_output, eager_mask, embed, gated_mlp, position_embeddings,
                      rotate_half)


OLMO2_CASES = [
    # q_norm over heads·head_dim = 64 and k_norm over kv_heads·head_dim = 32 (GQA 4:2), untied.
    dict(name="olmo2-f32", family="olmo2", layers=2, heads=4, kv=2, d=64, inter=128, vocab=100,
         ctx=64, theta=500000, eps=1e-6, pad=98, eos=99, dtype="F32", seed=71),
    dict(name="olmo2-bf16", family="olmo2", layers=2, heads=4, kv=2, d=64, inter=128, vocab=100,
         ctx=64, theta=500000, eps=1e-6, pad=98, eos=99, dtype="BF16", seed=71),
]


def olmo2_head_dim(c):
    """Olmo2Attention: head_dim = hidden_size // num_attention_heads (no head_dim key)."""
    return c["d"] // c["heads"]


def olmo2_weights(c):
    d, hd = c["d"], olmo2_head_dim(c)
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):  # no norm before a sublayer; q/k norms over the whole projection
        draw_qkv(w, randn, p, d, hq, hkv, 1.0)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        w[p + "self_attn.q_norm.weight"] = randn(hq, std=0.3, mean=1.5)
        w[p + "self_attn.k_norm.weight"] = randn(hkv, std=0.3, mean=1.5)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_mlp(w, randn, p, d, c["inter"])
        w[p + "post_feedforward_layernorm.weight"] = randn(d, std=0.1, mean=1.0)

    return (*llama_shaped_weights(c, N, layer, lm_head=True), {})


def olmo2_config(c):
    """Olmo2Config as saved (transformers 4.47, the OLMo 2 release's)."""
    return {
        "architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "attention_bias": False,
        "attention_dropout": 0.0, "eos_token_id": c["eos"], "hidden_act": "silu",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": c["pad"],
        "rms_norm_eps": c["eps"], "rope_scaling": None, "rope_theta": c["theta"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.47.0", "use_cache": True, "vocab_size": c["vocab"],
    }


def olmo2_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_olmo2.apply_rotary_pos_emb: cos/sin stay float32, q/k cast back after."""
    q_type, k_type = q.dtype, k.dtype
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed.to(q_type), k_embed.to(k_type)


def olmo2_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Olmo2Attention.forward (eager): q_norm / k_norm over the whole projection, then split."""
    hd, eps = olmo2_head_dim(c), c["eps"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = rms_norm_olmo2(proj("q_proj"), w[p + "q_norm.weight"], eps)
    key_states = rms_norm_olmo2(proj("k_proj"), w[p + "k_norm.weight"], eps)
    value_states = proj("v_proj")
    query_states = query_states.view(hidden_shape).transpose(1, 2)
    key_states = key_states.view(hidden_shape).transpose(1, 2)
    value_states = value_states.view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = olmo2_apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def olmo2_forward(stored, ids, c, ft):
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids)
    causal_mask = eager_mask(len(ids), None, ft)
    # Olmo2RotaryEmbedding.forward returns cos, sin in float32 (inv_freq's dtype, not x.dtype)
    rope = position_embeddings(c["theta"], olmo2_head_dim(c), None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        residual = hidden_states
        hidden_states, attn_weights = olmo2_attention(w, p + "self_attn.", c, hidden_states,
                                                      rope, causal_mask)
        hidden_states = rms_norm_olmo2(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = gated_mlp(w, p + "mlp.", hidden_states, F.silu)
        hidden_states = rms_norm_olmo2(hidden_states, w[p + "post_feedforward_layernorm.weight"],
                                       eps)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm_olmo2(hidden_states, w["model.norm.weight"], eps)
    return F.linear(hidden_states, w["lm_head.weight"])[0], attentions


def olmo2_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, kv, hd, eps = c["heads"], c["kv"], olmo2_head_dim(c), c["eps"]
    thetas = loop_inv_freq(c["theta"], hd)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        # The whole projection row (all heads together) normalised, then cut into heads.
        q = loop_rms(loop_lin(x, w, p + "self_attn.q_proj"), w[p + "self_attn.q_norm.weight"], eps)
        k = loop_rms(loop_lin(x, w, p + "self_attn.k_proj"), w[p + "self_attn.k_norm.weight"], eps)
        v = loop_lin(x, w, p + "self_attn.v_proj")
        qs, ks = rotated_heads(q, heads, hd, thetas), rotated_heads(k, kv, hd, thetas)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, None,
                                1.0 / math.sqrt(hd))
        attentions.append(A)
        o = loop_lin(ctx, w, p + "self_attn.o_proj")
        x = x + loop_rms(o, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = loop_lin(x, w, p + "mlp.gate_proj"), loop_lin(x, w, p + "mlp.up_proj")
        m = loop_lin(loop_silu(gate) * up, w, p + "mlp.down_proj")
        x = x + loop_rms(m, w[p + "post_feedforward_layernorm.weight"], eps)
    x = loop_rms(x, w["model.norm.weight"], eps)
    return x @ w["lm_head.weight"].T, attentions


def olmo2_variants(c, stored):
    return swapped_pair_variants(c, stored, "post_attention / post_feedforward norms swapped",
                                 "post_attention_layernorm.weight",
                                 "post_feedforward_layernorm.weight")


def olmo2_params(config):
    d, heads = config["hidden_size"], config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    hd = d // heads
    return llama_like_params(config, heads * hd, kv * hd, 2)


OLMO2 = family(
    cases=OLMO2_CASES, weights=olmo2_weights, config=olmo2_config, forward=olmo2_forward,
    loops=olmo2_loops, variants=olmo2_variants, params=olmo2_params,
    head_dim=olmo2_head_dim, rope=every_layer(lambda c: (c["theta"], olmo2_head_dim(c), None)),
    meta=lambda c: {"qk_norm": "whole projection [heads*head_dim], [kv_heads*head_dim]",
                    "norms": "after each sublayer"},
)
