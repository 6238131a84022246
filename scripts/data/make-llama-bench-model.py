#!/usr/bin/env python3
"""SmolLM2-135M-sized random Llama for tests/bench/generate-bench.mjs, in build/bench-llama/ (not committed).

Writes, from one seeded set of random weights (SmolLM2-135M's config.json sizes: 30 layers, 9 heads,
3 KV heads, d 576, head_dim 64, MLP 1 536, vocab 49 152, tied embeddings, rope_theta 100 000; every
matrix N(0, 0.02), RMSNorm weights N(1, 0.02), each value rounded to BF16 so that both files hold
the same numbers):
  model.safetensors  Hugging Face LlamaForCausalLM names, F32 (~540 MB)
  model-bf16.safetensors  the same values in BF16 (~270 MB), as SmolLM2 is published
  config.json        its Hugging Face config
  model-kv.onnx      a decoder step with past key/values, written after make-llama-golden.py's
                     reference (hf_eager.py's rms_norm, rotary_embedding, apply_rotary_pos_emb,
                     eager_attention_forward, gated_mlp) and traced by make-gpt2-bench-model.py's
                     export_decoder_step: inputs `ids` int64 [1, n], `past_key.<l>` /
                     `past_value.<l>` [1, 3, past, 64]; outputs `logits` [1, vocab] (the last
                     position's) and `present_key.<l>` / `present_value.<l>`
  stamp              the hash of this script and the ones it imports (data_scripts.Stamp): rebuilt
                     only when one changes

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-llama-bench-model.py [--force]
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
import hf_eager  # noqa: E402
from data_scripts import Stamp, load_script  # noqa: E402
from safetensors_io import write_checkpoint  # noqa: E402

CONFIG = dict(name="smollm2-135m-random", family="llama", layers=30, heads=9, kv=3, d=576,
              head_dim=None, inter=1536, vocab=49152, ctx=2048, theta=100000.0, eps=1e-5,
              tied=True, attention_bias=False, rope_scaling=None, bos=0, eos=0, dtype="F32",
              seed=20261125)
FILES = ("model.safetensors", "model-bf16.safetensors", "config.json", "model-kv.onnx")
SOURCES = (os.path.abspath(__file__), "make-llama-golden.py", "make-gpt2-bench-model.py",
           "hf_eager.py", "golden_case.py", "safetensors_io.py")


def make_weights(c):
    g = torch.Generator().manual_seed(c["seed"])
    d, kvd, inter = c["d"], c["kv"] * (c["d"] // c["heads"]), c["inter"]

    def randn(*shape, mean=0.0):  # rounded to BF16: F32 and BF16 checkpoints of the same numbers
        x = torch.randn(*shape, generator=g, dtype=torch.float32) * 0.02 + mean
        return x.to(torch.bfloat16).to(torch.float32)

    w = {"model.embed_tokens.weight": randn(c["vocab"], d)}
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = randn(d, mean=1.0)
        w[p + "self_attn.q_proj.weight"] = randn(d, d)
        w[p + "self_attn.k_proj.weight"] = randn(kvd, d)
        w[p + "self_attn.v_proj.weight"] = randn(kvd, d)
        w[p + "self_attn.o_proj.weight"] = randn(d, d)
        w[p + "post_attention_layernorm.weight"] = randn(d, mean=1.0)
        w[p + "mlp.gate_proj.weight"] = randn(inter, d)
        w[p + "mlp.up_proj.weight"] = randn(inter, d)
        w[p + "mlp.down_proj.weight"] = randn(d, inter)
    w["model.norm.weight"] = randn(d, mean=1.0)
    return w


class DecoderStep(torch.nn.Module):
    """LlamaForCausalLM with a KV cache (transformers' eager path, float32): positions past …
    past + n − 1, earlier keys (already rotated) and values read from `past`."""

    def __init__(self, golden, w, c):
        super().__init__()
        self.c, self.names = c, list(w)
        for i, name in enumerate(self.names):
            self.register_buffer(f"w{i}", w[name])
        inv_freq, self.scaling = golden.rope(c, torch.float32)
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, ids, *past):
        w = {name: getattr(self, f"w{i}") for i, name in enumerate(self.names)}
        c, g = self.c, hf_eager
        hd = c["d"] // c["heads"]
        n = ids.shape[1]
        start = past[0].shape[2]
        pos = torch.cumsum(torch.ones_like(ids), 1) - 1 + start  # [1, n]
        x = F.embedding(ids, w["model.embed_tokens.weight"])  # [1, n, d]
        cos, sin = g.rotary_embedding(self.inv_freq, self.scaling, x.dtype, pos)
        presents = []
        for l in range(c["layers"]):
            p = f"model.layers.{l}."
            residual = x
            h = g.rms_norm(x, w[p + "input_layernorm.weight"], c["eps"])
            a = p + "self_attn."
            q = F.linear(h, w[a + "q_proj.weight"]).view(1, n, -1, hd).transpose(1, 2)
            k = F.linear(h, w[a + "k_proj.weight"]).view(1, n, -1, hd).transpose(1, 2)
            v = F.linear(h, w[a + "v_proj.weight"]).view(1, n, -1, hd).transpose(1, 2)
            q, k = g.apply_rotary_pos_emb(q, k, cos, sin)
            k = torch.cat([past[2 * l], k], dim=2)  # [1, kv, past + n, hd]
            v = torch.cat([past[2 * l + 1], v], dim=2)
            presents += [k, v]
            kpos = torch.cumsum(torch.ones_like(k[0, 0, :, 0], dtype=torch.int64), 0) - 1
            mask = kpos[None, :] <= pos[0][:, None]  # [n, past + n]
            bias = torch.where(mask, torch.tensor(0.0), torch.tensor(torch.finfo(torch.float32).min))
            out, _ = g.eager_attention_forward(c["heads"] // c["kv"], q, k, v, bias[None, None],
                                               scaling=hd ** -0.5)
            out = F.linear(out.reshape(1, n, -1), w[a + "o_proj.weight"])
            x = residual + out
            residual = x
            h = g.rms_norm(x, w[p + "post_attention_layernorm.weight"], c["eps"])
            x = residual + g.gated_mlp(w, p + "mlp.", h)
        x = g.rms_norm(x[:, -1], w["model.norm.weight"], c["eps"])
        return (F.linear(x, w["model.embed_tokens.weight"]), *presents)


def main():
    stamp = Stamp("bench-llama", FILES, SOURCES)
    if stamp.up_to_date():
        return
    out = stamp.out
    golden = load_script("make-llama-golden")
    gpt2 = load_script("make-gpt2-bench-model")
    c = CONFIG
    t0 = time.time()
    w = make_weights(c)
    write_checkpoint(os.path.join(out, "model.safetensors"), w, "F32")
    write_checkpoint(os.path.join(out, "model-bf16.safetensors"), w, "BF16")
    golden.write_config(os.path.join(out, "config.json"), c)
    print(f"wrote model.safetensors, model-bf16.safetensors, config.json ({time.time() - t0:.1f} s)")
    t0 = time.time()
    step = DecoderStep(golden, w, c).eval()
    gpt2.export_decoder_step(step, c, c["kv"], c["d"] // c["heads"], os.path.join(out, "model-kv.onnx"))
    print(f"wrote model-kv.onnx ({time.time() - t0:.1f} s)")
    stamp.write()


if __name__ == "__main__":
    main()
