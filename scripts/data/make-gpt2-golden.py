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

The reference is GPT-2's forward written out in torch (gpt2_reference.py, no `transformers`
package here): x = wte[ids] + wpe[0..n), per block x += c_proj(attn(ln_1(x))), x += mlp(ln_2(x))
with mlp(h) = c_proj(gelu_new(c_fc(h))), Conv1D y = x·W + b, causal softmax(q·kᵀ/√d_k), ln_f,
logits = x·wteᵀ. The files are written by safetensors_io.write_checkpoint in this script's order.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-gpt2-golden.py (deterministic).
"""
import os
import sys

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_reference  # noqa: E402
from safetensors_io import write_checkpoint  # noqa: E402

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


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        w, ids = make_weights(c)
        stored = rounded(w, c["dtype"])
        prefix = "transformer." if c["prefix"] else ""
        tensors, buffers = {}, []  # in the order of the file
        for name, x in w.items():
            tensors[prefix + name] = x
            if c["buffers"] and name.endswith("ln_1.bias"):
                layer = prefix + name[: -len("ln_1.bias")]
                causal = torch.tril(torch.ones(c["ctx"], c["ctx"])).view(1, 1, c["ctx"], c["ctx"])
                tensors[layer + "attn.bias"] = causal
                tensors[layer + "attn.masked_bias"] = torch.tensor(-1e4)
                buffers += [layer + "attn.bias", layer + "attn.masked_bias"]
        if c["lm_head"]:
            tensors["lm_head.weight"] = w["wte.weight"]
        write_checkpoint(os.path.join(OUT, c["name"] + ".safetensors"), tensors, c["dtype"],
                         dict.fromkeys(buffers, "F32"), sort_names=False)
        gpt2_reference.write_config(os.path.join(OUT, c["name"] + ".config.json"), c)
        expected = {"ids": ids}
        for label, dtype in (("32", torch.float32), ("64", torch.float64)):
            logits, attentions = gpt2_reference.forward(stored, ids, c, dtype)
            expected["logits" + label] = logits
            for l, att in enumerate(attentions):
                expected[f"attn{label}.{l}"] = att
        meta = {"layers": str(c["layers"]), "heads": str(c["heads"]), "d_model": str(c["d"]),
                "vocab": str(c["vocab"]), "context": str(c["ctx"]), "n": str(N),
                "dtype": c["dtype"]}
        write_checkpoint(os.path.join(OUT, c["name"] + ".expected.safetensors"), expected, "F64",
                         metadata=meta, sort_names=False)
        print("wrote", c["name"])


if __name__ == "__main__":
    main()
