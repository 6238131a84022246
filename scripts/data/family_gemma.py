"""gemma2 — Gemma2ForCausalLM: models/gemma2/modeling_gemma2.py; and gemma3_text — Gemma3ForCausalLM
with Gemma3TextConfig (below, building on Gemma 2 as modular_gemma3.py does).

The family's golden cases for make-family-golden.py: the cases, the checkpoint's tensors, its
config.json, the eager reference (run in float32 and float64), the independent float64 loops,
the variants a loader could get wrong, and the parameter count of a published config. The
driver's docstring says which transformers code each follows and what is checked."""

import math

import torch
import torch.nn.functional as F

from family_common import (N, TORCH_DTYPE, every_layer, family, floats, gelu_tanh,
                           llama_like_params, loop_gelu_tanh, rms_norm_gemma, round_to)
from golden_case import (draw_mlp, draw_qkv, llama_shaped_weights, loop_attention, loop_inv_freq,
                         loop_lin, loop_rms, rotated_heads, split_heads)
from hf_eager import (apply_rotary_pos_emb, attention_output, eager_mask, embed, gated_mlp,
                      position_embeddings)


GEMMA2_CASES = [
    # Layers 0 and 2 slide (window 4 < N), layer 1 is full; soft-caps small enough to bend the
    # scores and logits of this tiny model (the published 50 / 30 suit its larger ones);
    # query_pre_attn_scalar 32 with head_dim 16 (scale 1/√32, not 1/√16); head_dim·heads ≠ hidden.
    dict(name="gemma2-f32", family="gemma2", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=80, ctx=64, eps=1e-6, theta=10000.0, sliding_window=4, qpas=32,
         attn_softcap=5.0, final_softcap=3.0, dtype="F32", seed=51),
    dict(name="gemma2-bf16", family="gemma2", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=80, ctx=64, eps=1e-6, theta=10000.0, sliding_window=4, qpas=32,
         attn_softcap=5.0, final_softcap=3.0, dtype="BF16", seed=51),
]


def gemma2_layer_types(c):
    """Gemma2Config: layer_types, else "sliding_attention" if (i + 1) % 2 else "full_attention"
    (transformers < 4.53: Gemma2Attention slides when not layer_idx % 2 — the same layers)."""
    if c.get("layer_types"):
        return list(c["layer_types"])
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(c["layers"])]


def gemma_embed_scale(c):
    """√hidden_size rounded to the model's dtype (the checkpoint's torch_dtype)."""
    return round_to(c["d"] ** 0.5, c.get("embed_scale_dtype", c["dtype"]))


def gemma_weights(c, qk_norm):
    d, hd = c["d"], c["head_dim"]
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1)
        draw_qkv(w, randn, p, d, hq, hkv, 1.5)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = randn(hd, std=0.2, mean=0.6)
            w[p + "self_attn.k_norm.weight"] = randn(hd, std=0.2, mean=0.6)
        for norm in ("post_attention", "pre_feedforward", "post_feedforward"):
            w[p + norm + "_layernorm.weight"] = randn(d, std=0.1)
        draw_mlp(w, randn, p, d, c["inter"])

    # Small embeddings: × √hidden they reach unit size. Norm weights w act as (1 + w). Tied.
    return (*llama_shaped_weights(c, N, layer, embed_std=0.2, norm_mean=0.0, lm_head=False), {})


def gemma2_config(c):
    """Gemma2Config as saved (transformers 4.42, the version Gemma 2 was published with)."""
    return {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "attention_bias": False,
        "attention_dropout": 0.0, "attn_logit_softcapping": c["attn_softcap"], "bos_token_id": 2,
        "cache_implementation": "hybrid", "eos_token_id": 1,
        "final_logit_softcapping": c["final_softcap"], "head_dim": c["head_dim"],
        "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": 0,
        "query_pre_attn_scalar": c["qpas"], "rms_norm_eps": c["eps"], "rope_theta": c["theta"],
        "sliding_window": c["sliding_window"], "sliding_window_size": c["sliding_window"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "transformers_version": "4.42.4",
        "use_cache": True, "vocab_size": c["vocab"],
    }


def gemma_masks(c, n, ft):
    """The eager mask of each layer type (sliding_window on sliding_attention layers)."""
    return {"full_attention": eager_mask(n, None, ft),
            "sliding_attention": eager_mask(n, c["sliding_window"], ft)}


def gemma_attention(w, p, c, hidden_states, position_embeddings, attention_mask, qk_norm,
                    softcap):
    """Gemma2Attention.forward / Gemma3Attention.forward (eager): scaling
    query_pre_attn_scalar**-0.5; Gemma 2 passes softcap=attn_logit_softcapping to the attention
    function, Gemma 3 passes none (its attn_logit_softcapping is never read); Gemma 3 normalises q
    and k per head (q_norm / k_norm, (1 + w) RMSNorm) after the transpose, before RoPE."""
    hd = c["head_dim"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = proj("q_proj").view(hidden_shape).transpose(1, 2)
    key_states = proj("k_proj").view(hidden_shape).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    if qk_norm:
        query_states = rms_norm_gemma(query_states, w[p + "q_norm.weight"], c["eps"])
        key_states = rms_norm_gemma(key_states, w[p + "k_norm.weight"], c["eps"])
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, c["qpas"] ** -0.5, softcap=softcap)


def gemma_decoder_layer(w, p, c, hidden_states, position_embeddings, attention_mask, qk_norm,
                        softcap):
    """Gemma2DecoderLayer / Gemma3DecoderLayer.forward: four norms, each (1 + w)."""
    eps = c["eps"]
    residual = hidden_states
    hidden_states = rms_norm_gemma(hidden_states, w[p + "input_layernorm.weight"], eps)
    hidden_states, attn_weights = gemma_attention(w, p + "self_attn.", c, hidden_states,
                                                  position_embeddings, attention_mask, qk_norm,
                                                  softcap)
    hidden_states = rms_norm_gemma(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
    hidden_states = residual + hidden_states
    residual = hidden_states
    hidden_states = rms_norm_gemma(hidden_states, w[p + "pre_feedforward_layernorm.weight"], eps)
    hidden_states = gated_mlp(w, p + "mlp.", hidden_states, gelu_tanh)  # gelu_pytorch_tanh
    hidden_states = rms_norm_gemma(hidden_states, w[p + "post_feedforward_layernorm.weight"], eps)
    hidden_states = residual + hidden_states
    return hidden_states, attn_weights


def gemma_head(w, c, hidden_states):
    """Final norm, lm_head tied to embed_tokens, Gemma2ForCausalLM's final soft-cap."""
    hidden_states = rms_norm_gemma(hidden_states, w["model.norm.weight"], c["eps"])
    logits = F.linear(hidden_states, w["model.embed_tokens.weight"])
    if c.get("final_softcap") is not None:
        logits = logits / c["final_softcap"]
        logits = torch.tanh(logits)
        logits = logits * c["final_softcap"]
    return logits[0]


def gemma2_forward(stored, ids, c, ft):
    w = floats(stored, ft)
    hidden_states, position_ids = embed(w, ids)
    masks = gemma_masks(c, len(ids), ft)
    rope = position_embeddings(c["theta"], c["head_dim"], None, ft, ft, position_ids)
    # Gemma2Model: normalizer = torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype)
    normalizer = torch.tensor(gemma_embed_scale(c), dtype=hidden_states.dtype)
    hidden_states = hidden_states * normalizer
    attentions = []
    for l, layer_type in enumerate(gemma2_layer_types(c)):
        hidden_states, attn_weights = gemma_decoder_layer(
            w, f"model.layers.{l}.", c, hidden_states, rope, masks[layer_type],
            qk_norm=False, softcap=c["attn_softcap"])
        attentions.append(attn_weights[0])
    return gemma_head(w, c, hidden_states), attentions


def gemma_loops(stored, ids, c, layer_types, layer_thetas, qk_norm, softcap):
    """Gemma 2 and 3 in loops: layer l uses layer_thetas[l] (θ_i per pair) and slides when its
    type is sliding_attention."""
    w = floats(stored, torch.float64)
    heads, kv, hd, eps = c["heads"], c["kv"], c["head_dim"], c["eps"]
    scale = gemma_embed_scale(c)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] * scale for t in ids])
    norm = lambda y, name: loop_rms(y, w[name], eps, offset=1.0)  # noqa: E731
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        thetas = layer_thetas[l]
        window = c["sliding_window"] if layer_types[l] == "sliding_attention" else None
        h = norm(x, p + "input_layernorm.weight")
        q = loop_lin(h, w, p + "self_attn.q_proj")
        k = loop_lin(h, w, p + "self_attn.k_proj")
        v = loop_lin(h, w, p + "self_attn.v_proj")
        qn = kn = None
        if qk_norm:
            qn = lambda vec: norm(vec[None], p + "self_attn.q_norm.weight")[0]  # noqa: E731
            kn = lambda vec: norm(vec[None], p + "self_attn.k_norm.weight")[0]  # noqa: E731
        qs = rotated_heads(q, heads, hd, thetas, qn)
        ks = rotated_heads(k, kv, hd, thetas, kn)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, window,
                                1.0 / math.sqrt(c["qpas"]), softcap)
        attentions.append(A)
        x = x + norm(loop_lin(ctx, w, p + "self_attn.o_proj"),
                     p + "post_attention_layernorm.weight")
        h2 = norm(x, p + "pre_feedforward_layernorm.weight")
        gate, up = loop_lin(h2, w, p + "mlp.gate_proj"), loop_lin(h2, w, p + "mlp.up_proj")
        m = loop_lin(loop_gelu_tanh(gate) * up, w, p + "mlp.down_proj")
        x = x + norm(m, p + "post_feedforward_layernorm.weight")
    logits = norm(x, "model.norm.weight") @ w["model.embed_tokens.weight"].T
    if c.get("final_softcap") is not None:
        cap = c["final_softcap"]
        logits = torch.tensor([[cap * math.tanh(z / cap) for z in row.tolist()] for row in logits],
                              dtype=torch.float64)
    return logits, attentions


def gemma2_loops(stored, ids, c):
    thetas = loop_inv_freq(c["theta"], c["head_dim"])
    return gemma_loops(stored, ids, c, gemma2_layer_types(c), [thetas] * c["layers"],
                       qk_norm=False, softcap=c["attn_softcap"])


def gemma_common_variants(c, stored):
    """Switches both Gemmas share: query_pre_attn_scalar, the window, the normalizer's dtype."""
    variants = [("no sliding window", dict(c, sliding_window=None), stored)]
    if c["qpas"] != c["head_dim"]:
        variants.append(("scale head_dim**-0.5 (query_pre_attn_scalar ignored)",
                         dict(c, qpas=c["head_dim"]), stored))
    if c["dtype"] != "F32":
        variants.append(("normalizer √hidden not rounded to %s" % c["dtype"],
                         dict(c, embed_scale_dtype="F32"), stored))
    return variants


def gemma2_variants(c, stored):
    flipped = ["full_attention" if t == "sliding_attention" else "sliding_attention"
               for t in gemma2_layer_types(c)]
    return gemma_common_variants(c, stored) + [
        ("no attn_logit_softcapping", dict(c, attn_softcap=None), stored),
        ("no final_logit_softcapping", dict(c, final_softcap=None), stored),
        ("odd layers slide instead of even ones", dict(c, layer_types=flipped), stored)]


def gemma2_params(config):
    return llama_like_params(config, 0, 0, 4)


def gemma_windows(layer_types_fn):
    return lambda c: [c["sliding_window"] if t == "sliding_attention" else None
                      for t in layer_types_fn(c)]


GEMMA2 = family(
    cases=GEMMA2_CASES, weights=lambda c: gemma_weights(c, qk_norm=False), config=gemma2_config,
    forward=gemma2_forward, loops=gemma2_loops, variants=gemma2_variants, params=gemma2_params,
    head_dim=lambda c: c["head_dim"], windows=gemma_windows(gemma2_layer_types),
    rope=every_layer(lambda c: (c["theta"], c["head_dim"], None)),
    attn_scale=lambda c: c["qpas"] ** -0.5,
    meta=lambda c: {"embed_scale": repr(gemma_embed_scale(c)),
                    "attn_softcap": repr(c["attn_softcap"]),
                    "final_softcap": repr(c["final_softcap"]),
                    "layer_types": ",".join(gemma2_layer_types(c))},
)


# =============================================================================================
# gemma3_text — Gemma3ForCausalLM with Gemma3TextConfig: models/gemma3/modeling_gemma3.py

GEMMA3_CASES = [
    # layer_types given explicitly (not the default pattern: 3 layers of pattern 6 would all
    # slide); local RoPE base 10 000 on sliding layers, rope_theta 10⁶ on the full one; q/k norms.
    dict(name="gemma3-f32", family="gemma3_text", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=96, ctx=64, eps=1e-6, rope_theta=1000000.0, rope_local=10000.0,
         rope_scaling=None, sliding_window=4, qpas=24,
         layer_types=["sliding_attention", "full_attention", "sliding_attention"], pattern=None,
         style="4.55", dtype="F32", seed=61),
    dict(name="gemma3-bf16", family="gemma3_text", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=96, ctx=64, eps=1e-6, rope_theta=1000000.0, rope_local=10000.0,
         rope_scaling=None, sliding_window=4, qpas=24,
         layer_types=["sliding_attention", "full_attention", "sliding_attention"], pattern=None,
         style="4.55", dtype="BF16", seed=61),
    # The older sliding_window_pattern (3: layers 0, 1 slide, layer 2 is full) and the larger
    # Gemma 3 models' rope_scaling {"rope_type": "linear", "factor": 8} on the full layers.
    dict(name="gemma3-pattern-f32", family="gemma3_text", layers=3, heads=2, kv=1, d=64,
         head_dim=32, inter=128, vocab=72, ctx=64, eps=1e-6, rope_theta=1000000,
         rope_local=10000, rope_scaling={"factor": 8.0, "rope_type": "linear"}, sliding_window=5,
         qpas=32, layer_types=None, pattern=3, style="4.52", dtype="F32", seed=62),
]


def gemma3_layer_types(c):
    """Gemma3TextConfig: layer_types, else "sliding_attention" if bool((i + 1) %
    sliding_window_pattern) else "full_attention" (sliding_window_pattern defaults to 6)."""
    if c.get("layer_types"):
        return list(c["layer_types"])
    pattern = c.get("pattern") or 6
    return ["sliding_attention" if (i + 1) % pattern else "full_attention"
            for i in range(c["layers"])]


def gemma3_config(c):
    """Gemma3TextConfig as saved: transformers 4.55 (gemma-3-270m's) writes layer_types and
    _sliding_window_pattern (6 whatever the layers say); 4.52 wrote sliding_window_pattern."""
    config = {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": None,
        "bos_token_id": 2, "eos_token_id": 1, "final_logit_softcapping": None,
        "head_dim": c["head_dim"], "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": 0,
        "query_pre_attn_scalar": c["qpas"], "rms_norm_eps": c["eps"],
        "rope_local_base_freq": c["rope_local"], "rope_scaling": c["rope_scaling"],
        "rope_theta": c["rope_theta"], "sliding_window": c["sliding_window"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "use_cache": True, "vocab_size": c["vocab"],
    }
    if c["style"] == "4.55":
        config.update(_sliding_window_pattern=6, layer_types=c["layer_types"],
                      transformers_version="4.55.0", use_bidirectional_attention=False)
    else:
        config.update(cache_implementation="hybrid", sliding_window_pattern=c["pattern"],
                      transformers_version="4.52.1")
    return config


def gemma3_forward(stored, ids, c, ft):
    w = floats(stored, ft)
    hidden_states, position_ids = embed(w, ids)
    # Gemma3TextScaledWordEmbedding: embedding(input_ids) * embed_scale.to(weight.dtype)
    hidden_states = hidden_states * torch.tensor(gemma_embed_scale(c), dtype=ft)
    masks = gemma_masks(c, len(ids), ft)
    # Gemma3TextModel: rotary_emb (rope_theta, rope_scaling) and rotary_emb_local (a config copy
    # with rope_theta = rope_local_base_freq, rope_scaling = {"rope_type": "default"})
    position_embeddings_global = position_embeddings(c["rope_theta"], c["head_dim"],
                                                     c["rope_scaling"], ft, ft, position_ids)
    position_embeddings_local = position_embeddings(c["rope_local"], c["head_dim"], None, ft, ft,
                                                    position_ids)
    attentions = []
    for l, layer_type in enumerate(gemma3_layer_types(c)):
        # apply global RoPE to non-sliding layer only
        sliding = layer_type == "sliding_attention"
        rope = position_embeddings_local if sliding else position_embeddings_global
        hidden_states, attn_weights = gemma_decoder_layer(
            w, f"model.layers.{l}.", c, hidden_states, rope, masks[layer_type],
            qk_norm=True, softcap=None)
        attentions.append(attn_weights[0])
    return gemma_head(w, c, hidden_states), attentions


def gemma3_rope(c):
    """Per layer (base, rotary dim, scaling): rope_local_base_freq on sliding layers, rope_theta
    with rope_scaling on full ones."""
    return [(c["rope_local"], c["head_dim"], None) if t == "sliding_attention"
            else (c["rope_theta"], c["head_dim"], c["rope_scaling"]) for t in gemma3_layer_types(c)]


def gemma3_loops(stored, ids, c):
    thetas = [loop_inv_freq(base, dim, (scaling or {}).get("factor", 1.0))
              for base, dim, scaling in gemma3_rope(c)]
    return gemma_loops(stored, ids, c, gemma3_layer_types(c), thetas, qk_norm=True, softcap=None)


def gemma3_variants(c, stored):
    variants = gemma_common_variants(c, stored) + [
        ("rope_local_base_freq ignored (rope_theta everywhere)",
         dict(c, rope_local=c["rope_theta"]), stored)]
    if c.get("layer_types"):
        variants.append(("layer_types ignored (sliding_window_pattern 6)",
                         dict(c, layer_types=None, pattern=6), stored))
    else:
        variants.append(("sliding_window_pattern ignored (6)", dict(c, pattern=6), stored))
    if c["rope_scaling"]:
        variants.append(("rope_scaling ignored", dict(c, rope_scaling=None), stored))
    return variants


def gemma3_params(config):
    hd = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return llama_like_params(config, hd, hd, 4)


GEMMA3 = family(
    cases=GEMMA3_CASES, weights=lambda c: gemma_weights(c, qk_norm=True), config=gemma3_config,
    forward=gemma3_forward, loops=gemma3_loops, variants=gemma3_variants, params=gemma3_params,
    head_dim=lambda c: c["head_dim"], windows=gemma_windows(gemma3_layer_types), rope=gemma3_rope,
    attn_scale=lambda c: c["qpas"] ** -0.5,
    meta=lambda c: {"embed_scale": repr(gemma_embed_scale(c)),
                    "layer_types": ",".join(gemma3_layer_types(c))},
)
