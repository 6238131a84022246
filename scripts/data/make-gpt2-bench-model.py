#!/usr/bin/env python3
"""GPT-2-small-sized random model for tests/bench/gpt2-bench.mjs, in build/bench-gpt2/ (not committed).

Writes, from one seeded set of random weights (12 layers, 12 heads, d 768, vocab 50 257, 1 024
positions; every weight and bias N(0, 0.02), LayerNorm weights N(1, 0.02)):
  model.safetensors  Hugging Face GPT2LMHeadModel names (`transformer.` prefix, Conv1D [in, out]), F32
  config.json        its Hugging Face config
  model.onnx         the same forward (gpt2_reference.py, the hand-written GPT-2 reference of
                     make-gpt2-golden.py, traced by torch.onnx.export, opset 17): input `ids`
                     int64 [n], outputs `logits` [n, vocab] and `attn.0` … `attn.11` [heads, n, n],
                     n dynamic
  model-kv.onnx      a decoder step with past key/values for tests/bench/generate-bench.mjs (the same
                     weights, `DecoderStep` below, built from the reference's pieces): inputs `ids`
                     int64 [1, n], `past_key.<l>` / `past_value.<l>` [1, heads, past, 64]; outputs
                     `logits` [1, vocab] (the last position's) and `present_key.<l>` /
                     `present_value.<l>` [1, heads, past + n, 64]; n and past dynamic (past may be 0)
  stamp              the hash of this script, the reference and the writer (data_scripts.Stamp): the
                     files are rebuilt only when one changes

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-gpt2-bench-model.py [--force]
"""
import os
import sys
import time

import torch

sys.dont_write_bytecode = True
import gpt2_reference  # noqa: E402
from data_scripts import Stamp  # noqa: E402
from safetensors_io import write_checkpoint  # noqa: E402

CONFIG = dict(layers=12, heads=12, d=768, vocab=50257, ctx=1024, seed=20261123)
FILES = ("model.safetensors", "config.json", "model.onnx", "model-kv.onnx")
SOURCES = (os.path.abspath(__file__), "gpt2_reference.py", "safetensors_io.py")


def make_weights(c):
    """HF GPT-2 state dict (bare names, Conv1D layout), float32, std 0.02."""
    g = torch.Generator().manual_seed(c["seed"])
    d, v, ctx = c["d"], c["vocab"], c["ctx"]

    def randn(*shape, mean=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * 0.02 + mean

    w = {"wte.weight": randn(v, d), "wpe.weight": randn(ctx, d)}
    for l in range(c["layers"]):
        p = f"h.{l}."
        w[p + "ln_1.weight"] = randn(d, mean=1.0)
        w[p + "ln_1.bias"] = randn(d)
        w[p + "attn.c_attn.weight"] = randn(d, 3 * d)
        w[p + "attn.c_attn.bias"] = randn(3 * d)
        w[p + "attn.c_proj.weight"] = randn(d, d)
        w[p + "attn.c_proj.bias"] = randn(d)
        w[p + "ln_2.weight"] = randn(d, mean=1.0)
        w[p + "ln_2.bias"] = randn(d)
        w[p + "mlp.c_fc.weight"] = randn(d, 4 * d)
        w[p + "mlp.c_fc.bias"] = randn(4 * d)
        w[p + "mlp.c_proj.weight"] = randn(4 * d, d)
        w[p + "mlp.c_proj.bias"] = randn(d)
    w["ln_f.weight"] = randn(d, mean=1.0)
    w["ln_f.bias"] = randn(d)
    return w


class Reference(torch.nn.Module):
    """gpt2_reference.forward over registered weights (ONNX initializers)."""

    def __init__(self, w, c):
        super().__init__()
        self.c, self.names = c, list(w)
        for i, name in enumerate(self.names):
            self.register_buffer(f"w{i}", w[name])

    def forward(self, ids):
        w = {name: getattr(self, f"w{i}") for i, name in enumerate(self.names)}
        logits, attentions = gpt2_reference.forward(w, ids, self.c, torch.float32)
        return (logits, *attentions)


class DecoderStep(Reference):
    """One step of GPT-2 with a KV cache, from gpt2_reference.py's pieces: the positions past …
    past + n − 1, keys and values of earlier positions read from `past`."""

    def forward(self, ids, *past):
        w = {name: getattr(self, f"w{i}") for i, name in enumerate(self.names)}
        c, r = self.c, gpt2_reference
        ids = ids[0]
        n = ids.shape[0]
        start = past[0].shape[2]
        # positions start … start + n − 1, and of every key 0 … start + n − 1 (shape-derived, so the
        # trace keeps them dynamic)
        pos = torch.cumsum(torch.ones_like(ids), 0) - 1 + start
        x = w["wte.weight"][ids] + w["wpe.weight"][pos]
        presents = []
        for l in range(c["layers"]):
            p = f"h.{l}."
            q, k, v = r.attention_inputs(w, p, x, n, c)
            k = torch.cat([past[2 * l][0], k], dim=1)  # [heads, past + n, dk]
            v = torch.cat([past[2 * l + 1][0], v], dim=1)
            presents += [k[None], v[None]]
            kpos = torch.cumsum(torch.ones_like(k[0, :, 0], dtype=torch.int64), 0) - 1
            att = r.attention_weights(q, k, kpos[None, :] <= pos[:, None], c)
            x = r.attention_residual(w, p, x, att, v, n, c)
            x = r.mlp_residual(w, p, x, c["d"])
        return (r.logits(w, x[-1:], c["d"]), *presents)


def export_decoder_step(module, c, kv_heads, head_dim, path):
    """torch.onnx.export of a decoder step (GPT-2's or make-llama-bench-model.py's): traced with
    3 past positions and 2 new ids, both axes dynamic."""
    ids = torch.randint(0, c["vocab"], (1, 2), generator=torch.Generator().manual_seed(1))
    past = [torch.zeros(1, kv_heads, 3, head_dim) for _ in range(2 * c["layers"])]
    names_in, names_out = ["ids"], ["logits"]
    axes = {"ids": {1: "n"}}
    for l in range(c["layers"]):
        for kind in ("key", "value"):
            names_in.append(f"past_{kind}.{l}")
            names_out.append(f"present_{kind}.{l}")
            axes[f"past_{kind}.{l}"] = {2: "past"}
            axes[f"present_{kind}.{l}"] = {2: "total"}
    with torch.no_grad():
        torch.onnx.export(module, (ids, *past), path, opset_version=17, input_names=names_in,
                          output_names=names_out, dynamic_axes=axes, do_constant_folding=True)


def main():
    stamp = Stamp("bench-gpt2", FILES, SOURCES)
    if stamp.up_to_date():
        return
    out = stamp.out
    c = CONFIG
    t0 = time.time()
    w = make_weights(c)
    write_checkpoint(os.path.join(out, "model.safetensors"),
                     {"transformer." + name: x for name, x in w.items()}, "F32", sort_names=False)
    gpt2_reference.write_config(os.path.join(out, "config.json"), c)
    print(f"wrote model.safetensors, config.json ({time.time() - t0:.1f} s)")

    t0 = time.time()
    model = Reference(w, c).eval()
    ids = torch.randint(0, c["vocab"], (16,), generator=torch.Generator().manual_seed(1))
    outputs = ["logits"] + [f"attn.{l}" for l in range(c["layers"])]
    axes = {"ids": {0: "n"}, "logits": {0: "n"}}
    axes.update({f"attn.{l}": {1: "n", 2: "n"} for l in range(c["layers"])})
    with torch.no_grad():
        torch.onnx.export(model, (ids,), os.path.join(out, "model.onnx"), opset_version=17,
                          input_names=["ids"], output_names=outputs, dynamic_axes=axes,
                          do_constant_folding=True)
    print(f"wrote model.onnx ({time.time() - t0:.1f} s)")
    del model
    t0 = time.time()
    step = DecoderStep(w, c).eval()
    export_decoder_step(step, c, c["heads"], c["d"] // c["heads"],
                        os.path.join(out, "model-kv.onnx"))
    print(f"wrote model-kv.onnx ({time.time() - t0:.1f} s)")
    stamp.write()


if __name__ == "__main__":
    main()
