"""What make-llama-golden.py and make-family-golden.py share around their references: the random
weights' generator, config.json as save_pretrained writes it, the independent float64 loop
implementation each checks its vectorized reference against (Python floats and explicit loops; no
torch op but x @ Wᵀ), the checks every case passes (RoPE against pair rotations, masks, float32
against float64, loops against the vectorized run), and the expected file.

A golden case's results: {"32": (logits, attentions), "64": (logits, attentions)}, the reference
run in float32 and in float64, attentions one [heads, n, n] per layer.
"""
import json
import math

import numpy as np
import torch

import hf_eager
from safetensors_io import read_safetensors, write_safetensors


def randn_factory(seed):
    """(generator, randn(*shape, std, mean)): float32 normal draws from one seeded generator."""
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, std=1.0, mean=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean

    return g, randn


def llama_shaped_weights(c, n, layer, embed_std=0.5, norm_mean=1.0, lm_head=None):
    """A Llama-shaped checkpoint's random weights (float32, HF names) and n token ids, drawn in
    this order from one generator seeded c["seed"]: model.embed_tokens [vocab, d] (std
    embed_std); for each layer, what layer(w, randn, prefix) adds; model.norm [d] (std 0.1 around
    norm_mean); lm_head [vocab, d] (std 0.3) when lm_head (default: when not c["tied"]); the ids."""
    g, randn = randn_factory(c["seed"])
    d, v = c["d"], c["vocab"]
    w = {"model.embed_tokens.weight": randn(v, d, std=embed_std)}
    for l in range(c["layers"]):
        layer(w, randn, f"model.layers.{l}.")
    w["model.norm.weight"] = randn(d, std=0.1, mean=norm_mean)
    if lm_head if lm_head is not None else not c["tied"]:
        w["lm_head.weight"] = randn(v, d, std=0.3)
    ids = torch.randint(0, v, (n,), generator=g)
    return w, ids


def qkv_draws(randn, d, q_rows, kv_rows, qk_std):
    """q [q_rows, d], k and v [kv_rows, d], drawn in that order: q and k with std qk_std/√d (qk_std
    > 1: scores of a few units, heads that attend unevenly), v with 1/√d."""
    q = randn(q_rows, d, std=qk_std / math.sqrt(d))
    k = randn(kv_rows, d, std=qk_std / math.sqrt(d))
    return q, k, randn(kv_rows, d, std=1.0 / math.sqrt(d))


def mlp_draws(randn, d, inter):
    """gate and up [inter, d], down [d, inter], drawn in that order, std 1/√fan_in."""
    return (randn(inter, d, std=1.0 / math.sqrt(d)), randn(inter, d, std=1.0 / math.sqrt(d)),
            randn(d, inter, std=1.0 / math.sqrt(inter)))


def draw_mlp(w, randn, p, d, inter):
    """mlp.{gate,up,down}_proj.weight (mlp_draws)."""
    for name, x in zip(("gate_proj", "up_proj", "down_proj"), mlp_draws(randn, d, inter)):
        w[p + "mlp." + name + ".weight"] = x


def draw_qkv(w, randn, p, d, q_rows, kv_rows, qk_std):
    """self_attn.{q,k,v}_proj.weight (qkv_draws)."""
    q, k, v = qkv_draws(randn, d, q_rows, kv_rows, qk_std)
    for name, x in (("q_proj", q), ("k_proj", k), ("v_proj", v)):
        w[p + "self_attn." + name + ".weight"] = x


def write_config(path, config):
    """config.json as save_pretrained writes it: keys sorted, indent 2, trailing newline."""
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# The independent float64 loop implementation


def loop_lin(x, w, name, bias=True):
    y = x @ w[name + ".weight"].T
    return y + w[name + ".bias"] if bias and name + ".bias" in w else y


def loop_rms(x, weight, eps, offset=0.0):
    """Each row / sqrt(mean(row²) + eps) × (offset + weight)."""
    out = torch.empty_like(x)
    for r in range(x.shape[0]):
        row = [float(v) for v in x[r]]
        s = 1.0 / math.sqrt(sum(v * v for v in row) / len(row) + eps)
        for i, v in enumerate(row):
            out[r, i] = v * s * (offset + float(weight[i]))
    return out


def loop_inv_freq(base, dim, factor=1.0):
    """θ_i = base^(−2i/dim) / factor, i < dim/2."""
    return [math.pow(base, -2.0 * i / dim) / factor for i in range(dim // 2)]


def loop_rotate(vec, t, thetas):
    """One head's vector at position t: pairs (i, i + rot/2), rot = 2·len(thetas), by t·θ_i;
    dims >= rot unchanged."""
    out = vec.clone()
    half = len(thetas)
    for i, theta in enumerate(thetas):
        a = t * theta
        x0, x1 = float(vec[i]), float(vec[i + half])
        out[i] = x0 * math.cos(a) - x1 * math.sin(a)
        out[i + half] = x1 * math.cos(a) + x0 * math.sin(a)
    return out


def loop_attention(qs, ks, vs, group, window, scale, softcap=None):
    """qs[h][t], ks[g][t], vs[g][t]: rotated query / key and value vectors. Query head h reads kv
    head h // group; row i sees keys max(0, i − window + 1) … i. Returns (A [heads, n, n],
    ctx [n, heads·hd_v])."""
    heads, n, hd_v = len(qs), len(qs[0]), vs[0][0].shape[0]
    A = torch.zeros(heads, n, n, dtype=torch.float64)
    ctx = torch.zeros(n, heads * hd_v, dtype=torch.float64)
    for h in range(heads):
        g = h // group
        for i in range(n):
            lo = 0 if window is None else max(0, i - window + 1)
            js = list(range(lo, i + 1))
            s = [float(qs[h][i] @ ks[g][j]) * scale for j in js]
            if softcap is not None:
                s = [softcap * math.tanh(v / softcap) for v in s]
            m = max(s)
            e = [math.exp(v - m) for v in s]
            z = sum(e)
            for j, ej in zip(js, e):
                A[h, i, j] = ej / z
                ctx[i, h * hd_v:(h + 1) * hd_v] += (ej / z) * vs[g][j]
    return A, ctx


def loop_silu(x):
    return x / (1 + torch.exp(-x))


def split_heads(mat, heads, hd):
    """[n, heads·hd] → heads × [n rows of hd]."""
    return [[mat[t, h * hd:(h + 1) * hd] for t in range(mat.shape[0])] for h in range(heads)]


def rotated_heads(mat, heads, hd, thetas, norm=None):
    """split_heads, each row normalised by norm (if any), then rotated to its position t."""
    return [[loop_rotate(norm(row) if norm else row, t, thetas) for t, row in enumerate(rows)]
            for rows in split_heads(mat, heads, hd)]


def llama_loops(w, ids, c, hd, thetas, windows, qk_norm=None):
    """A Llama-shaped decoder in loops (w float64; c's heads, kv, eps, tied): RMSNorm before
    attention and MLP, q/k/v/o projections (biases when w has them), RoPE by thetas, layer l's
    window windows[l], SiLU-gated MLP, final norm, logits x·lm_headᵀ (tied: the embedding).
    qk_norm (optional): layer prefix → (q_norm, k_norm), each normalising one head's vector."""
    heads, kv, eps = c["heads"], c["kv"], c["eps"]
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l, window in enumerate(windows):
        p = f"model.layers.{l}."
        h = loop_rms(x, w[p + "input_layernorm.weight"], eps)
        q, k, v = (loop_lin(h, w, p + "self_attn." + s) for s in ("q_proj", "k_proj", "v_proj"))
        qn, kn = qk_norm(p) if qk_norm else (None, None)
        qs = rotated_heads(q, heads, hd, thetas, qn)
        ks = rotated_heads(k, kv, hd, thetas, kn)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, window,
                                1.0 / math.sqrt(hd))
        attentions.append(A)
        x = x + loop_lin(ctx, w, p + "self_attn.o_proj")
        h2 = loop_rms(x, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = loop_lin(h2, w, p + "mlp.gate_proj"), loop_lin(h2, w, p + "mlp.up_proj")
        x = x + loop_lin(loop_silu(gate) * up, w, p + "mlp.down_proj")
    x = loop_rms(x, w["model.norm.weight"], eps)
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return x @ lm_head.T, attentions


# ---------------------------------------------------------------------------------------------
# Checks and the expected file


def check_masks(name, attentions, windows, label, n):
    """Zero exactly outside [i − window + 1, i], positive inside, rows summing to 1."""
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    for l, (a, window) in enumerate(zip(attentions, windows)):
        outside = j > i
        if window is not None:
            outside = outside | (j <= i - window)
        assert bool((a[:, outside] == 0).all()), (name, label, l, "mask")
        assert bool((a[:, ~outside] > 0).all()), (name, label, l, "visible")
        tol = 1e-6 if label == "32" else 1e-14
        assert float((a.to(torch.float64).sum(-1) - 1).abs().max()) < tol, (name, label, l)


def attention_stats(attentions):
    """Mean of each row's largest weight, over rows that see at least 4 keys (as many keys as
    the narrowest window), and the largest weight of all."""
    tops = [a[:, i, :].max(-1).values for a in attentions for i in range(3, a.shape[1])]
    return float(torch.cat(tops).mean()), float(torch.cat(tops).max())


def check_case(name, results, loops, windows, n):
    """Every case's checks: the loops agree with the float64 run to 1e-12, the masks hold in both
    runs, float32 and float64 agree (logits 1e-4, attention 1e-5), the attention is not degenerate
    (mean top weight of rows with >= 4 keys in (0.3, 0.9), none >= 0.9999). Returns (max|f32−f64|
    of the logits, of the attention, loops' error, mean top weight, largest weight)."""
    logits64, att64 = results["64"]
    loop_logits, loop_att = loops
    loop_err = max([float((loop_logits - logits64).abs().max())] +
                   [float((a - b).abs().max()) for a, b in zip(loop_att, att64)])
    assert loop_err < 1e-12, (name, "loops vs vectorized", loop_err)
    for label in ("32", "64"):
        assert len(results[label][1]) == len(windows), (name, label)
        check_masks(name, results[label][1], windows, label, n)
    d_logits = float((results["32"][0].to(torch.float64) - logits64).abs().max())
    d_attn = max(float((a.to(torch.float64) - b).abs().max())
                 for a, b in zip(results["32"][1], att64))
    assert d_logits < 1e-4 and d_attn < 1e-5, (name, d_logits, d_attn)
    top_mean, top_max = attention_stats(att64)
    assert 0.3 < top_mean < 0.9 and top_max < 0.9999, (name, top_mean, top_max)
    return d_logits, d_attn, loop_err, top_mean, top_max


def write_expected(path, ids, results, meta):
    """<case>.expected.safetensors, all F64: ids, logits32 / logits64, attn32.<l> / attn64.<l>,
    and the metadata; read back and compared before returning."""
    expected = {"ids": ids.to(torch.float64).numpy()}
    for label in ("32", "64"):
        logits, attentions = results[label]
        expected["logits" + label] = logits.to(torch.float64).numpy()
        for l, a in enumerate(attentions):
            expected[f"attn{label}.{l}"] = a.to(torch.float64).numpy()
    write_safetensors(path, expected, meta)
    back, back_meta = read_safetensors(path)
    assert back_meta == meta and all(np.array_equal(back[k], expected[k]) for k in expected)


def check_rope(name, seed, heads, kv, hd, rope, thetas, n):
    """apply_partial_rotary_pos_emb with rope = (base, rotary dim, scaling) equals rotating the
    pairs (x_i, x_{i+rot/2}) of every head's vector by t·θ_i (θ = thetas) and leaves the dims >=
    rot unchanged: q [1, heads, n, hd] and k [1, kv, n, hd] drawn from seed 1000 + seed, float64."""
    base, dim, scaling = rope
    g = torch.Generator().manual_seed(1000 + seed)
    inv_freq, attention_scaling = hf_eager.rope_init(base, dim, scaling, torch.float64)
    q = torch.randn(1, heads, n, hd, generator=g, dtype=torch.float64)
    k = torch.randn(1, kv, n, hd, generator=g, dtype=torch.float64)
    cos, sin = hf_eager.rotary_embedding(inv_freq, attention_scaling, q.dtype,
                                         torch.arange(n)[None, :])
    qe, ke = hf_eager.apply_partial_rotary_pos_emb(q, k, cos, sin)
    for x, xe in ((q, qe), (k, ke)):
        for h in range(x.shape[1]):
            for t in range(n):
                want = loop_rotate(x[0, h, t], t, thetas)
                err = float((xe[0, h, t] - want).abs().max())
                assert err < 1e-12, (name, "rope", base, dim, err)
        assert torch.equal(xe[..., dim:], x[..., dim:]), (name, "pass-through dims")
