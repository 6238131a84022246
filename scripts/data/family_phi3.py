"""phi3 — Phi3ForCausalLM: models/phi3/modeling_phi3.py

The family's golden cases for make-family-golden.py: the cases, the checkpoint's tensors, its
config.json, the eager reference (run in float32 and float64), the independent float64 loops,
the variants a loader could get wrong, and the parameter count of a published config. The
driver's docstring says which transformers code each follows and what is checked."""

import math

import torch
import torch.nn.functional as F

from family_common import (N, TORCH_DTYPE, every_layer, family, floats, llama_decoder_forward,
                           llama_like_params)
from golden_case import (llama_shaped_weights, loop_attention, loop_inv_freq, loop_lin, loop_rms,
                         loop_silu, mlp_draws, qkv_draws, rotated_heads, split_heads)
from hf_eager import apply_partial_rotary_pos_emb, attention_output


PHI3_CASES = [
    # Fused qkv_proj [(4 + 2·2)·16, 64] and gate_up_proj [2·112, 64]; sliding_window 6 < N, applied
    # by the causal mask on every layer (Phi-3-mini's 2047 never bites at N = 12).
    dict(name="phi3-f32", family="phi3", layers=2, heads=4, kv=2, d=64, inter=112, vocab=72,
         ctx=64, theta=10000.0, eps=1e-5, sliding_window=6, bos=1, eos=70, pad=70, dtype="F32",
         seed=81),
    dict(name="phi3-bf16", family="phi3", layers=2, heads=4, kv=2, d=64, inter=112, vocab=72,
         ctx=64, theta=10000.0, eps=1e-5, sliding_window=6, bos=1, eos=70, pad=70, dtype="BF16",
         seed=81),
]


def phi3_head_dim(c):
    return c["d"] // c["heads"]


def phi3_weights(c):
    d, hd = c["d"], phi3_head_dim(c)
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        w[p + "self_attn.qkv_proj.weight"] = torch.cat(qkv_draws(randn, d, hq, hkv, 1.4))  # [q|k|v]
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        gate, up, down = mlp_draws(randn, d, c["inter"])
        w[p + "mlp.gate_up_proj.weight"] = torch.cat([gate, up])  # rows [gate | up]
        w[p + "mlp.down_proj.weight"] = down

    return (*llama_shaped_weights(c, N, layer, lm_head=True), {})


def phi3_config(c):
    """Phi3Config as saved (transformers 4.40, Phi-3-mini's release)."""
    return {
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "attention_dropout": 0.0,
        "bos_token_id": c["bos"], "embd_pdrop": 0.0, "eos_token_id": c["eos"],
        "hidden_act": "silu", "hidden_size": c["d"], "initializer_range": 0.02,
        "intermediate_size": c["inter"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "original_max_position_embeddings": c["ctx"],
        "pad_token_id": c["pad"], "resid_pdrop": 0.0, "rms_norm_eps": c["eps"],
        "rope_scaling": None, "rope_theta": c["theta"], "sliding_window": c["sliding_window"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.40.2", "use_cache": True, "vocab_size": c["vocab"],
    }


def phi3_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Phi3Attention.forward (eager): qkv_proj split at heads·hd and heads·hd + kv·hd."""
    hd = phi3_head_dim(c)
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    qkv = F.linear(hidden_states, w[p + "qkv_proj.weight"])
    query_pos = c["heads"] * hd
    query_states = qkv[..., :query_pos]
    key_states = qkv[..., query_pos: query_pos + c["kv"] * hd]
    value_states = qkv[..., query_pos + c["kv"] * hd:]
    query_states = query_states.view(hidden_shape).transpose(1, 2)
    key_states = key_states.view(hidden_shape).transpose(1, 2)
    value_states = value_states.view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_partial_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def phi3_mlp(w, p, hidden_states):
    """Phi3MLP: gate, up = gate_up_proj(x).chunk(2, -1); down_proj(up * silu(gate))."""
    up_states = F.linear(hidden_states, w[p + "gate_up_proj.weight"])
    gate, up_states = up_states.chunk(2, dim=-1)
    up_states = up_states * F.silu(gate)
    return F.linear(up_states, w[p + "down_proj.weight"])


def phi3_forward(stored, ids, c, ft):
    """Phi3DecoderLayer is LlamaDecoderLayer with Phi3Attention and Phi3MLP (resid_attn_dropout
    and resid_mlp_dropout: identity in eval); partial_rotary_factor 1; Phi3Model:
    create_sliding_window_causal_mask when config.sliding_window is not None, every layer."""
    return llama_decoder_forward(stored, ids, c, ft, phi3_attention, phi3_mlp, phi3_head_dim(c),
                                 window=c["sliding_window"])


def phi3_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, kv, hd, eps, inter = c["heads"], c["kv"], phi3_head_dim(c), c["eps"], c["inter"]
    thetas = loop_inv_freq(c["theta"], hd)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        h = loop_rms(x, w[p + "input_layernorm.weight"], eps)
        wqkv = w[p + "self_attn.qkv_proj.weight"]
        q = h @ wqkv[: heads * hd].T
        k = h @ wqkv[heads * hd: (heads + kv) * hd].T
        v = h @ wqkv[(heads + kv) * hd:].T
        qs, ks = rotated_heads(q, heads, hd, thetas), rotated_heads(k, kv, hd, thetas)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, c["sliding_window"],
                                1.0 / math.sqrt(hd))
        attentions.append(A)
        x = x + loop_lin(ctx, w, p + "self_attn.o_proj")
        h2 = loop_rms(x, w[p + "post_attention_layernorm.weight"], eps)
        wgu = w[p + "mlp.gate_up_proj.weight"]
        gate, up = h2 @ wgu[:inter].T, h2 @ wgu[inter:].T  # rows [gate | up]
        x = x + (loop_silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    x = loop_rms(x, w["model.norm.weight"], eps)
    return x @ w["lm_head.weight"].T, attentions


def phi3_variants(c, stored):
    inter = c["inter"]
    swapped = dict(stored)
    for l in range(c["layers"]):
        name = f"model.layers.{l}.mlp.gate_up_proj.weight"
        swapped[name] = torch.cat([stored[name][inter:], stored[name][:inter]])
    return [("sliding_window ignored", dict(c, sliding_window=None), stored),
            ("gate_up_proj read as [up | gate]", c, swapped)]


def phi3_params(config):
    return llama_like_params(config, 0, 0, 2)  # qkv_proj / gate_up_proj: the same counts fused


PHI3 = family(
    cases=PHI3_CASES, weights=phi3_weights, config=phi3_config, forward=phi3_forward,
    loops=phi3_loops, variants=phi3_variants, params=phi3_params,
    head_dim=phi3_head_dim, windows=every_layer(lambda c: c["sliding_window"]),
    rope=every_layer(lambda c: (c["theta"], phi3_head_dim(c), None)),
    meta=lambda c: {"fused": "qkv_proj [q|k|v], gate_up_proj [gate|up]"},
)
