"""gpt_neox — GPTNeoXForCausalLM (Pythia): models/gpt_neox/modeling_gpt_neox.py

The family's golden cases for make-family-golden.py: the cases, the checkpoint's tensors, its
config.json, the eager reference (run in float32 and float64), the independent float64 loops,
the variants a loader could get wrong, and the parameter count of a published config. The
driver's docstring says which transformers code each follows and what is checked."""

import math

import torch
import torch.nn.functional as F

from family_common import (N, TORCH_DTYPE, every_layer, family, floats, layer_norm, loop_gelu_erf,
                           loop_layer_norm)
from golden_case import loop_attention, loop_inv_freq, loop_lin, loop_rotate, randn_factory
from hf_eager import (apply_partial_rotary_pos_emb, attention_output, eager_mask, embed,
                      position_embeddings)


NEOX_CASES = [
    # Pythia as published: parallel residual, rotary_pct 0.25 (the old keys only), buffers.
    dict(name="pythia-f32", family="gpt_neox", layers=2, heads=4, d=64, inter=256, vocab=96,
         ctx=64, eps=1e-5, rotary_pct=0.25, rope_base=10000, parallel=True, attention_bias=True,
         keys="rotary_pct", buffers="BOOL", bos=0, eos=0, dtype="F32", seed=31),
    dict(name="pythia-f16", family="gpt_neox", layers=2, heads=4, d=64, inter=256, vocab=96,
         ctx=64, eps=1e-5, rotary_pct=0.25, rope_base=10000, parallel=True, attention_bias=True,
         keys="rotary_pct", buffers="U8", bos=0, eos=0, dtype="F16", seed=31),
    # Sequential residual, the newer keys (partial_rotary_factor and rope_theta written beside
    # rotary_pct and rotary_emb_base, as transformers >= 4.45 saves them), half the head rotated.
    dict(name="neox-sequential-f32", family="gpt_neox", layers=3, heads=3, d=48, inter=192,
         vocab=80, ctx=64, eps=1e-5, rotary_pct=0.5, rope_base=25000, parallel=False,
         attention_bias=True, keys="partial_rotary_factor", buffers=None, bos=0, eos=0,
         dtype="F32", seed=32),
]


def neox_head_dim(c):
    """GPTNeoXAttention: head_size = hidden_size // num_attention_heads."""
    return c["d"] // c["heads"]


def neox_rotary_ndims(c):
    """rotary_ndims = int(head_size * rotary_pct) (= int(head_dim * partial_rotary_factor))."""
    return int(neox_head_dim(c) * c["rotary_pct"])


def neox_weights(c):
    g, randn = randn_factory(c["seed"])
    d, v, inter, heads, hd = c["d"], c["vocab"], c["inter"], c["heads"], neox_head_dim(c)
    w = {"gpt_neox.embed_in.weight": randn(v, d, std=0.5)}
    dtypes = {}
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            w[p + norm + ".weight"] = randn(d, std=0.1, mean=1.0)
            w[p + norm + ".bias"] = randn(d, std=0.1)
        # [heads, 3, head_dim, d]: per head its q, k and v rows (q and k larger: uneven heads).
        qkv = randn(heads, 3, hd, d, std=1.0 / math.sqrt(d))
        qkv[:, :2] *= 1.5
        w[p + "attention.query_key_value.weight"] = qkv.reshape(3 * d, d)
        w[p + "attention.query_key_value.bias"] = randn(3 * d, std=0.1)
        w[p + "attention.dense.weight"] = randn(d, d, std=1.0 / math.sqrt(d))
        w[p + "attention.dense.bias"] = randn(d, std=0.1)
        w[p + "mlp.dense_h_to_4h.weight"] = randn(inter, d, std=1.0 / math.sqrt(d))
        w[p + "mlp.dense_h_to_4h.bias"] = randn(inter, std=0.1)
        w[p + "mlp.dense_4h_to_h.weight"] = randn(d, inter, std=1.0 / math.sqrt(inter))
        w[p + "mlp.dense_4h_to_h.bias"] = randn(d, std=0.1)
        if c["buffers"]:
            # The buffers transformers <= 4.30 saved with every GPTNeoXAttention: the causal
            # mask tril(ones(ctx, ctx)).view(1, 1, ctx, ctx) (uint8 then, bool later),
            # masked_bias = tensor(-1e9) and RotaryEmbedding's inv_freq, in the model's dtype.
            ctx = c["ctx"]
            w[p + "attention.bias"] = torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx)
            dtypes[p + "attention.bias"] = c["buffers"]
            w[p + "attention.masked_bias"] = torch.tensor(-1e9)
            rot = neox_rotary_ndims(c)
            w[p + "attention.rotary_emb.inv_freq"] = 1.0 / (
                c["rope_base"] ** (torch.arange(0, rot, 2).float() / rot))
    w["gpt_neox.final_layer_norm.weight"] = randn(d, std=0.1, mean=1.0)
    w["gpt_neox.final_layer_norm.bias"] = randn(d, std=0.1)
    w["embed_out.weight"] = randn(v, d, std=0.3)
    ids = torch.randint(0, v, (N,), generator=g)
    return w, ids, dtypes


def neox_config(c):
    """GPTNeoXConfig as saved: Pythia's files (transformers 4.24) hold rotary_pct and
    rotary_emb_base; transformers >= 4.45 also writes partial_rotary_factor and rope_theta (set
    from them in GPTNeoXConfig.__init__), attention_bias and the dropouts."""
    config = {
        "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
        "bos_token_id": c["bos"], "eos_token_id": c["eos"], "hidden_act": "gelu",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "layer_norm_eps": c["eps"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "rotary_emb_base": c["rope_base"], "rotary_pct": c["rotary_pct"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.24.0", "use_cache": True,
        "use_parallel_residual": c["parallel"], "vocab_size": c["vocab"],
    }
    if c["keys"] == "partial_rotary_factor":
        config.update(attention_bias=c["attention_bias"], attention_dropout=0.0,
                      classifier_dropout=0.1, hidden_dropout=0.0,
                      partial_rotary_factor=c["rotary_pct"], rope_scaling=None,
                      rope_theta=c["rope_base"], transformers_version="4.45.2")
    return config


def neox_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """GPTNeoXAttention.forward (eager)."""
    head_size = neox_head_dim(c)
    hidden_shape = (*hidden_states.shape[:-1], -1, 3 * head_size)  # [batch, n, heads, 3·hd]
    qkv = F.linear(hidden_states, w[p + "query_key_value.weight"],
                   w.get(p + "query_key_value.bias")).view(hidden_shape).transpose(1, 2)
    query_states, key_states, value_states = qkv.chunk(3, dim=-1)
    cos, sin = position_embeddings
    query_states, key_states = apply_partial_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "dense", query_states, key_states, value_states,
                            attention_mask, head_size ** -0.5)


def neox_mlp(w, p, hidden_states):
    """GPTNeoXMLP: dense_4h_to_h(act(dense_h_to_4h(x))), act = ACT2FN["gelu"] (exact, erf)."""
    hidden_states = F.linear(hidden_states, w[p + "dense_h_to_4h.weight"],
                             w[p + "dense_h_to_4h.bias"])
    hidden_states = F.gelu(hidden_states)
    return F.linear(hidden_states, w[p + "dense_4h_to_h.weight"], w[p + "dense_4h_to_h.bias"])


def neox_forward(stored, ids, c, ft):
    """GPTNeoXForCausalLM(input_ids[None]) in dtype ft: (logits [n, vocab], [heads, n, n] per
    layer)."""
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids, "gpt_neox.embed_in.weight")  # emb_dropout: none
    causal_mask = eager_mask(len(ids), None, ft)
    # GPTNeoXRotaryEmbedding (= LlamaRotaryEmbedding): dim = int(head_dim * partial_rotary_factor)
    rope = position_embeddings(c["rope_base"], neox_rotary_ndims(c), None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."

        def ln(x, name):
            return layer_norm(x, w[p + name + ".weight"], w[p + name + ".bias"], eps)

        attn_output, attn_weights = neox_attention(
            w, p + "attention.", c, ln(hidden_states, "input_layernorm"), rope,
            causal_mask)
        if c["parallel"]:
            # x = x + attn(ln1(x)) + mlp(ln2(x))
            mlp_output = neox_mlp(w, p + "mlp.", ln(hidden_states, "post_attention_layernorm"))
            hidden_states = mlp_output + attn_output + hidden_states
        else:
            # x = x + attn(ln1(x)); x = x + mlp(ln2(x))
            attn_output = attn_output + hidden_states
            mlp_output = neox_mlp(w, p + "mlp.", ln(attn_output, "post_attention_layernorm"))
            hidden_states = mlp_output + attn_output
        attentions.append(attn_weights[0])
    hidden_states = layer_norm(hidden_states, w["gpt_neox.final_layer_norm.weight"],
                               w["gpt_neox.final_layer_norm.bias"], eps)
    logits = F.linear(hidden_states, w["embed_out.weight"])
    return logits[0], attentions


def neox_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, hd, eps = c["heads"], neox_head_dim(c), c["eps"]
    thetas = loop_inv_freq(c["rope_base"], neox_rotary_ndims(c))
    n = len(ids)
    x = torch.stack([w["gpt_neox.embed_in.weight"][int(t)] for t in ids])

    def mlp(p, h):
        up = loop_lin(h, w, p + "mlp.dense_h_to_4h")
        return loop_lin(loop_gelu_erf(up), w, p + "mlp.dense_4h_to_h")

    attentions = []
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."
        h = loop_layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = loop_lin(h, w, p + "attention.query_key_value")  # [n, 3d]

        def rows(hh, slot, t):
            """Head hh's rows of the fused weight: hh·3·hd + [0, hd) q, + [hd, 2hd) k,
            + [2hd, 3hd) v."""
            start = hh * 3 * hd + slot * hd
            return qkv[t, start:start + hd]

        qs = [[loop_rotate(rows(hh, 0, t), t, thetas) for t in range(n)] for hh in range(heads)]
        ks = [[loop_rotate(rows(hh, 1, t), t, thetas) for t in range(n)] for hh in range(heads)]
        vs = [[rows(hh, 2, t) for t in range(n)] for hh in range(heads)]
        A, ctx = loop_attention(qs, ks, vs, 1, None, 1.0 / math.sqrt(hd))
        attentions.append(A)
        attn = loop_lin(ctx, w, p + "attention.dense")
        ln2 = lambda y: loop_layer_norm(y, w[p + "post_attention_layernorm.weight"],  # noqa: E731
                                        w[p + "post_attention_layernorm.bias"], eps)
        if c["parallel"]:
            x = x + attn + mlp(p, ln2(x))
        else:
            x = x + attn
            x = x + mlp(p, ln2(x))
    x = loop_layer_norm(x, w["gpt_neox.final_layer_norm.weight"],
                        w["gpt_neox.final_layer_norm.bias"], eps)
    return x @ w["embed_out.weight"].T, attentions


def neox_blocked_qkv(stored, c):
    """The same file read as if query_key_value were [q; k; v] blocks (the wrong layout)."""
    out = dict(stored)
    d, heads, hd = c["d"], c["heads"], neox_head_dim(c)
    for l in range(c["layers"]):
        name = f"gpt_neox.layers.{l}.attention.query_key_value."
        wgt, bias = stored[name + "weight"], stored[name + "bias"]
        out[name + "weight"] = wgt.view(3, heads, hd, d).transpose(0, 1).reshape(3 * d, d)
        out[name + "bias"] = bias.view(3, heads, hd).transpose(0, 1).reshape(3 * d)
    return out


def neox_variants(c, stored):
    variants = [
        ("use_parallel_residual %s" % (not c["parallel"]), dict(c, parallel=not c["parallel"]),
         stored),
        ("rotary on the whole head", dict(c, rotary_pct=1.0), stored),
        ("query_key_value as [q; k; v] blocks", c, neox_blocked_qkv(stored, c)),
    ]
    if c["rope_base"] != 10000:
        variants.append(("rotary_emb_base 10000", dict(c, rope_base=10000), stored))
    return variants


def neox_params(config):
    """Every tensor GPTNeoXForCausalLM's checkpoint holds as a parameter (buffers apart)."""
    d, v, inter, layers = (config["hidden_size"], config["vocab_size"],
                           config["intermediate_size"], config["num_hidden_layers"])
    bias = config.get("attention_bias", True)
    per_layer = (2 * 2 * d                                   # input / post_attention LayerNorm
                 + 3 * d * d + (3 * d if bias else 0)        # query_key_value
                 + d * d + (d if bias else 0)                # dense
                 + inter * d + inter + d * inter + d)        # dense_h_to_4h, dense_4h_to_h
    embeddings = v * d * (1 if config.get("tie_word_embeddings", False) else 2)
    return embeddings + layers * per_layer + 2 * d          # + final_layer_norm


NEOX = family(
    cases=NEOX_CASES, weights=neox_weights, config=neox_config, forward=neox_forward,
    loops=neox_loops, variants=neox_variants, params=neox_params,
    head_dim=neox_head_dim, kv_heads=lambda c: c["heads"],
    rope=every_layer(lambda c: (c["rope_base"], neox_rotary_ndims(c), None)),
    meta=lambda c: {"residual": "parallel" if c["parallel"] else "sequential",
                    "buffers": c["buffers"] or "none", "hidden_act": "gelu"},
)
