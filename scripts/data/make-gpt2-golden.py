#!/usr/bin/env python3
"""GPT-2 checkpoint golden data: tests/data/gpt2/<case>.safetensors, .config.json, .expected.safetensors.

Each case is a tiny GPT-2 with random weights (nonzero biases and LayerNorm affines, attention
weights large enough that the heads attend unevenly) written as a Hugging Face `model.safetensors`
really is: GPT2LMHeadModel names with or without the `transformer.` prefix, Conv1D weights stored
[in, out], optionally the tied `lm_head.weight` and the per-layer causal-mask buffers `attn.bias`
(float [1, 1, ctx, ctx]) and `attn.masked_bias` (scalar -1e4) older conversions keep, in F32, F16
or BF16. Next to it, its config.json and <case>.expected.safetensors with
  ids                  the token ids of one sequence (F64 holding integers)
  logits32 / logits64  the logits [n, vocab] of the hand-written GPT-2 reference below in float32
                       and in float64 (the same stored weights, cast)
  attn32.<l> / attn64.<l>  layer l's attention weights [heads, n, n]
and the config's numbers as metadata. An F16/BF16 case's expected values are computed from its
weights as stored (rounded to F16/BF16), so it must give the numbers of its F32 twin rounded.

The reference is GPT-2's forward written out in torch (no `transformers` package here): x = wte[ids]
+ wpe[0..n), per block x += c_proj(attn(ln_1(x))), x += mlp(ln_2(x)) with mlp(h) =
c_proj(gelu_new(c_fc(h))), Conv1D y = x·W + b, causal softmax(q·kᵀ/√d_k), ln_f, logits = x·wteᵀ.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-gpt2-golden.py (deterministic).
"""
import json
import math
import os
import struct

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "gpt2")

CASES = [
    # name, layers, heads, d, vocab, ctx, prefix, lm_head, mask buffers, dtype, twin of, seed
    dict(name="tiny-f32", layers=2, heads=2, d=32, vocab=64, ctx=32, prefix=True, lm_head=True,
         buffers=False, dtype="F32", seed=1),
    dict(name="tiny-f16", layers=2, heads=2, d=32, vocab=64, ctx=32, prefix=True, lm_head=True,
         buffers=False, dtype="F16", seed=1),
    dict(name="bare-f32", layers=3, heads=4, d=48, vocab=80, ctx=24, prefix=False, lm_head=False,
         buffers=True, dtype="F32", seed=2),
    dict(name="bare-bf16", layers=3, heads=4, d=48, vocab=80, ctx=24, prefix=False, lm_head=False,
         buffers=True, dtype="BF16", seed=2),
]
N = 12  # tokens per sequence


def make_weights(c):
    """HF GPT-2 state dict (bare names, Conv1D layout), float32."""
    g = torch.Generator().manual_seed(c["seed"])
    d, v, ctx = c["d"], c["vocab"], c["ctx"]

    def randn(*shape, std=1.0, mean=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean

    w = {"wte.weight": randn(v, d, std=0.5), "wpe.weight": randn(ctx, d, std=0.2)}
    for l in range(c["layers"]):
        p = f"h.{l}."
        w[p + "ln_1.weight"] = randn(d, std=0.1, mean=1.0)
        w[p + "ln_1.bias"] = randn(d, std=0.1)
        w[p + "attn.c_attn.weight"] = randn(d, 3 * d, std=0.3)
        w[p + "attn.c_attn.bias"] = randn(3 * d, std=0.1)
        w[p + "attn.c_proj.weight"] = randn(d, d, std=0.1)
        w[p + "attn.c_proj.bias"] = randn(d, std=0.1)
        w[p + "ln_2.weight"] = randn(d, std=0.1, mean=1.0)
        w[p + "ln_2.bias"] = randn(d, std=0.1)
        w[p + "mlp.c_fc.weight"] = randn(d, 4 * d, std=0.2)
        w[p + "mlp.c_fc.bias"] = randn(4 * d, std=0.1)
        w[p + "mlp.c_proj.weight"] = randn(4 * d, d, std=0.1)
        w[p + "mlp.c_proj.bias"] = randn(d, std=0.1)
    w["ln_f.weight"] = randn(d, std=0.1, mean=1.0)
    w["ln_f.bias"] = randn(d, std=0.1)
    ids = torch.randint(0, v, (N,), generator=g)
    return w, ids


def rounded(w, dtype):
    """The weights as the file stores them (float32 holding the F16/BF16 values)."""
    if dtype == "F32":
        return w
    t = torch.float16 if dtype == "F16" else torch.bfloat16
    return {k: x.to(t).to(torch.float32) for k, x in w.items()}


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def layer_norm(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, 1e-5)


def forward(w, ids, c, dtype):
    w = {k: x.to(dtype) for k, x in w.items()}
    n, d, heads = ids.shape[0], c["d"], c["heads"]
    dk = d // heads
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
    attentions = []
    for l in range(c["layers"]):
        p = f"h.{l}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # [n, 3d]
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.view(n, heads, dk).transpose(0, 1) for t in (q, k, v))  # [heads, n, dk]
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dk)
        scores = scores.masked_fill(~mask, float("-inf"))
        att = torch.softmax(scores, dim=-1)  # [heads, n, n]
        attentions.append(att)
        ctx = (att @ v).transpose(0, 1).reshape(n, d)
        x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h2 = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = gelu_new(h2 @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].T, attentions


def tensor_bytes(x, dtype):
    if dtype == "F32":
        return x.to(torch.float32).contiguous().numpy().tobytes()
    if dtype == "F64":
        return x.to(torch.float64).contiguous().numpy().tobytes()
    if dtype == "F16":
        return x.to(torch.float16).contiguous().numpy().tobytes()
    if dtype == "BF16":
        return x.to(torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, tensor); the format's header, padded to 8 bytes."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, x in tensors:
        data = tensor_bytes(x, dtype)
        header[name] = {"dtype": dtype, "shape": list(x.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for data in blobs:
            f.write(data)


def write_config(path, c):
    """The Hugging Face config.json of case c."""
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
              "n_layer": c["layers"], "n_head": c["heads"], "n_embd": c["d"],
              "n_positions": c["ctx"], "n_ctx": c["ctx"], "vocab_size": c["vocab"],
              "n_inner": None, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "scale_attn_weights": True,
              "tie_word_embeddings": True, "torch_dtype": "float32"}
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        w, ids = make_weights(c)
        stored = rounded(w, c["dtype"])
        prefix = "transformer." if c["prefix"] else ""
        tensors = []
        for name, x in w.items():
            tensors.append((prefix + name, c["dtype"], x))
            if c["buffers"] and name.endswith("ln_1.bias"):
                layer = name[: -len("ln_1.bias")]
                causal = torch.tril(torch.ones(c["ctx"], c["ctx"])).view(1, 1, c["ctx"], c["ctx"])
                tensors.append((prefix + layer + "attn.bias", "F32", causal))
                tensors.append((prefix + layer + "attn.masked_bias", "F32", torch.tensor(-1e4)))
        if c["lm_head"]:
            tensors.append(("lm_head.weight", c["dtype"], w["wte.weight"]))
        write_safetensors(os.path.join(OUT, c["name"] + ".safetensors"), tensors,
                          {"format": "pt"})
        write_config(os.path.join(OUT, c["name"] + ".config.json"), c)
        expected = [("ids", "F64", ids.to(torch.float64))]
        for label, dtype in (("32", torch.float32), ("64", torch.float64)):
            logits, attentions = forward(stored, ids, c, dtype)
            expected.append(("logits" + label, "F64", logits))
            for l, att in enumerate(attentions):
                expected.append((f"attn{label}.{l}", "F64", att))
        meta = {"layers": str(c["layers"]), "heads": str(c["heads"]), "d_model": str(c["d"]),
                "vocab": str(c["vocab"]), "context": str(c["ctx"]), "n": str(N),
                "dtype": c["dtype"]}
        write_safetensors(os.path.join(OUT, c["name"] + ".expected.safetensors"), expected, meta)
        print("wrote", c["name"])


if __name__ == "__main__":
    main()
