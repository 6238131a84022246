"""qwen3 — Qwen3ForCausalLM: models/qwen3/modeling_qwen3.py

The family's golden cases for make-family-golden.py: the cases, the checkpoint's tensors, its
config.json, the eager reference (run in float32 and float64), the independent float64 loops,
the variants a loader could get wrong, and the parameter count of a published config. The
driver's docstring says which transformers code each follows and what is checked."""

import math

import torch
import torch.nn.functional as F

from family_common import (N, TORCH_DTYPE, every_layer, family, floats, llama_decoder_forward,
                           llama_like_params, swapped_pair_variants)
from golden_case import (draw_mlp, draw_qkv, llama_loops, llama_shaped_weights, loop_inv_freq,
                         loop_rms)
from hf_eager import apply_rotary_pos_emb, attention_output, gated_mlp, rms_norm


QWEN3_CASES = [
    # head_dim 16 with hidden 48 and 4 heads (4·16 = 64 ≠ 48), GQA 4:2, tied embeddings.
    dict(name="qwen3-f32", family="qwen3", layers=2, heads=4, kv=2, d=48, head_dim=16, inter=96,
         vocab=88, ctx=128, theta=1000000, eps=1e-6, tied=True, bos=86, eos=87, dtype="F32",
         seed=41),
    dict(name="qwen3-bf16", family="qwen3", layers=2, heads=4, kv=2, d=48, head_dim=16, inter=96,
         vocab=88, ctx=128, theta=1000000, eps=1e-6, tied=True, bos=86, eos=87, dtype="BF16",
         seed=41),
]


def qwen3_weights(c):
    d, hd = c["d"], c["head_dim"]
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_qkv(w, randn, p, d, hq, hkv, 1.0)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        # q/k norms scale each normalised head vector (RMS 1) up: scores of a few units.
        w[p + "self_attn.q_norm.weight"] = randn(hd, std=0.3, mean=1.5)
        w[p + "self_attn.k_norm.weight"] = randn(hd, std=0.3, mean=1.5)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_mlp(w, randn, p, d, c["inter"])

    return (*llama_shaped_weights(c, N, layer), {})


def qwen3_config(c):
    """Qwen3Config as saved (transformers 4.51, the version Qwen3-0.6B was published with)."""
    return {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": c["bos"], "eos_token_id": c["eos"],
        "head_dim": c["head_dim"], "hidden_act": "silu", "hidden_size": c["d"],
        "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "max_window_layers": c["layers"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "rms_norm_eps": c["eps"], "rope_scaling": None,
        "rope_theta": c["theta"], "sliding_window": None, "tie_word_embeddings": c["tied"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "transformers_version": "4.51.0",
        "use_cache": True, "use_sliding_window": False, "vocab_size": c["vocab"],
    }


def qwen3_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Qwen3Attention.forward (eager): per-head q_norm / k_norm before the transpose and RoPE."""
    hd, eps = c["head_dim"], c["eps"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = rms_norm(proj("q_proj").view(hidden_shape), w[p + "q_norm.weight"],
                            eps).transpose(1, 2)
    key_states = rms_norm(proj("k_proj").view(hidden_shape), w[p + "k_norm.weight"],
                          eps).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def qwen3_forward(stored, ids, c, ft):
    """Qwen3DecoderLayer is LlamaDecoderLayer with Qwen3Attention; Qwen3MLP silu(gate) × up;
    use_sliding_window false: no window."""
    return llama_decoder_forward(stored, ids, c, ft, qwen3_attention, gated_mlp, c["head_dim"],
                                 window=None)


def qwen3_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    hd, eps = c["head_dim"], c["eps"]

    def qk_norm(p):
        """Each head's vector normalised on its own (weight [head_dim]), then rotated."""
        return tuple(lambda vec, name=name: loop_rms(vec[None], w[p + name], eps)[0]
                     for name in ("self_attn.q_norm.weight", "self_attn.k_norm.weight"))

    return llama_loops(w, ids, c, hd, loop_inv_freq(c["theta"], hd), [None] * c["layers"],
                       qk_norm)


def qwen3_variants(c, stored):
    return swapped_pair_variants(c, stored, "q_norm and k_norm weights swapped",
                                 "self_attn.q_norm.weight", "self_attn.k_norm.weight")


def qwen3_params(config):
    hd = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return llama_like_params(config, hd, hd, 2)


QWEN3 = family(
    cases=QWEN3_CASES, weights=qwen3_weights, config=qwen3_config, forward=qwen3_forward,
    loops=qwen3_loops, variants=qwen3_variants, params=qwen3_params,
    head_dim=lambda c: c["head_dim"], rope=every_layer(lambda c: (c["theta"], c["head_dim"], None)),
    meta=lambda c: {"qk_norm": "per head [head_dim]", "tied": str(c["tied"]).lower()},
)
