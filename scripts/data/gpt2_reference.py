"""GPT-2 written out in torch (no `transformers` package here): the forward and its pieces, and a
checkpoint's config.json. Shared by make-gpt2-golden.py (the golden logits and attention),
make-ablation-golden.py (the same forward with heads ablated) and make-gpt2-bench-model.py (the
ONNX peers: the forward traced, and a KV-cache step built from the same pieces).

The forward: x = wte[ids] + wpe[0..n), per block x += c_proj(attn(ln_1(x))), x += mlp(ln_2(x))
with mlp(h) = c_proj(gelu_new(c_fc(h))), Conv1D y = x·W + b (W stored [in, out]), causal
softmax(q·kᵀ/√d_k), ln_f, logits = x·wteᵀ. Weights under the bare Hugging Face names ("wte.weight",
"h.<l>.attn.c_attn.weight", …); c holds the sizes: layers, heads, d, vocab, ctx.
"""
import json
import math

import torch


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def layer_norm(x, weight, bias, d):
    """nn.LayerNorm(d, eps=1e-5). d is given, not read from x.shape: a traced shape would be
    dynamic, which the ONNX exporter refuses for the normalized shape."""
    return torch.nn.functional.layer_norm(x, (d,), weight, bias, 1e-5)


def attention_inputs(w, p, x, n, c):
    """ln_1 and c_attn of block p: q, k, v, each [heads, n, d_k]."""
    d, heads = c["d"], c["heads"]
    h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], d)
    qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # [n, 3d]
    q, k, v = qkv.split(d, dim=-1)
    return tuple(t.reshape(n, heads, d // heads).transpose(0, 1) for t in (q, k, v))


def attention_weights(q, k, visible, c):
    """softmax(q·kᵀ/√d_k) over the keys `visible` [n, keys] lets each query see:
    [heads, n, keys]."""
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(c["d"] // c["heads"])
    return torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)


def attention_residual(w, p, x, att, v, n, c, head_scale=None):
    """x + c_proj(the heads' A·V concatenated [n, d]); head_scale [d] (optional) multiplies each
    head's columns before c_proj (an ablation)."""
    ctx = (att @ v).transpose(0, 1).reshape(n, c["d"])
    if head_scale is not None:
        ctx = ctx * head_scale
    return x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]


def mlp_residual(w, p, x, d):
    """x + c_proj(gelu_new(c_fc(ln_2(x))))."""
    h2 = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], d)
    m = gelu_new(h2 @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
    return x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]


def logits(w, x, d):
    """ln_f, then the tied unembedding x·wteᵀ."""
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], d) @ w["wte.weight"].T


def forward(w, ids, c, dtype, head_scales=None):
    """(logits [n, vocab], attention [heads, n, n] per layer) in dtype; head_scales (optional):
    per layer a [d] scale of the heads' outputs, or None (see attention_residual)."""
    w = {k: x.to(dtype) for k, x in w.items()}
    n, d = ids.shape[0], c["d"]
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    attentions = []
    for l in range(c["layers"]):
        p = f"h.{l}."
        q, k, v = attention_inputs(w, p, x, n, c)
        att = attention_weights(q, k, causal, c)
        attentions.append(att)
        x = attention_residual(w, p, x, att, v, n, c, head_scales[l] if head_scales else None)
        x = mlp_residual(w, p, x, d)
    return logits(w, x, d), attentions


def write_config(path, c):
    """The Hugging Face config.json of a GPT-2 with c's sizes."""
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
              "n_layer": c["layers"], "n_head": c["heads"], "n_embd": c["d"],
              "n_positions": c["ctx"], "n_ctx": c["ctx"], "vocab_size": c["vocab"],
              "n_inner": None, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "scale_attn_weights": True,
              "tie_word_embeddings": True, "torch_dtype": "float32"}
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
