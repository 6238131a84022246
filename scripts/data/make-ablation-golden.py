#!/usr/bin/env python3
"""Head-ablation golden data: tests/data/ablation/<case>.safetensors, the logits of committed
golden checkpoints with some attention heads ablated, from PyTorch.

Cases: tests/data/llama/qwen2-f32 (grouped-query: 4 query heads on 1 K/V head) and mistral-f32 (a
sliding window of 5), read with safetensors_io.read_checkpoint and run by make-llama-golden.py's
forward (transformers' eager Llama/Qwen2/Mistral code, line by line); tests/data/gpt2/tiny-f32,
read with safetensors_io.py and run by gpt2_reference.forward (the GPT-2 reference of
make-gpt2-golden.py). Each on its golden file's ids (N = 12), both forwards given head_scales.

An ablation zeroes (scale 0) or scales (0 < scale <= 1) a head's attention output — its head_dim
columns of the heads' concatenated A·V, `attn_output` before `o_proj` (GPT-2: before
`attn.c_proj`) — in that layer, as Model::ablate does; the head's attention weights are its own.

Each output file holds, all F64:
  ids                        the token ids
  logits64.plain             the unablated logits [n, vocab] in float64
  logits32.<s> / logits64.<s>  the logits with ablation set s, in float32 and in float64 (the same
                             stored weights cast; the float64 run keeps RMSNorm, RoPE and softmax in
                             float64, as make-llama-golden.py's does)
and metadata: sets (how many), ablation.<s> = "layer:head:scale,…", case, family.

Checks (a failing one stops the script before the file is written): the forward with no ablation
gives the committed <case>.expected.safetensors' logits to 1e-12 (float64); every ablation equals
scaling that head's input columns of o_proj (c_proj) to 1e-12 in float64; scales of 1 change
nothing (torch.equal); float32 and float64 agree to 1e-4; every set moves the logits.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-ablation-golden.py
(deterministic).
"""
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_reference  # noqa: E402
from data_scripts import load_script  # noqa: E402
from safetensors_io import read_checkpoint, read_safetensors, write_safetensors  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "ablation")

llama = load_script("make-llama-golden")
gpt2 = load_script("make-gpt2-golden")

# case, family, ablation sets: lists of (layer, head, scale).
CASES = [
    ("qwen2-f32", "qwen2", [[(0, 1, 0.0)], [(0, 0, 0.0), (1, 3, 0.0)],
                            [(1, 2, 0.5), (0, 3, 0.25)]]),
    ("mistral-f32", "mistral", [[(1, 1, 0.0)], [(0, 2, 0.0), (2, 0, 0.5)]]),
    ("tiny-f32", "gpt2", [[(0, 1, 0.0)], [(1, 0, 0.0), (0, 0, 0.75)]]),
]


def head_scales(ablation, layers, heads, hd, ft):
    """Per layer [heads·hd]: each column of a head's attention output times its scale (1 when
    kept); None when ablation is None (the forward untouched)."""
    if ablation is None:
        return None
    scales = []
    for layer in range(layers):
        scale = torch.ones(heads, dtype=ft)
        for l, h, s in ablation:
            if l == layer:
                scale[h] = s
        scales.append(scale.repeat_interleave(hd))
    return scales


# ---- the Llama family: make-llama-golden.py's forward ----------------------------------------


def llama_forward(stored, ids, c, ft, ablation):
    """make-llama-golden.forward's logits with `ablation` ([(layer, head, scale)], or None)."""
    scales = head_scales(ablation, c["layers"], c["heads"], llama.head_dim(c), ft)
    return llama.forward(stored, ids, c, ft, scales)[0]


def llama_o_proj_scaled(stored, c, ablation):
    """The stored weights with each ablated head's input columns of o_proj scaled instead."""
    out = dict(stored)
    hd = llama.head_dim(c)
    for l, h, s in ablation:
        name = f"model.layers.{l}.self_attn.o_proj.weight"
        weight = out[name].clone()
        weight[:, h * hd:(h + 1) * hd] *= s
        out[name] = weight
    return out


# ---- GPT-2: gpt2_reference.py's forward --------------------------------------------------------


def gpt2_forward(w, ids, c, dtype, ablation):
    """gpt2_reference.forward's logits with `ablation` (or None)."""
    scales = head_scales(ablation, c["layers"], c["heads"], c["d"] // c["heads"], dtype)
    return gpt2_reference.forward(w, ids, c, dtype, scales)[0]


def gpt2_c_proj_scaled(stored, c, ablation):
    """Conv1D c_proj.weight is [in, out]: a head's inputs are its rows."""
    out = dict(stored)
    dk = c["d"] // c["heads"]
    for l, h, s in ablation:
        name = f"h.{l}.attn.c_proj.weight"
        weight = out[name].clone()
        weight[h * dk:(h + 1) * dk, :] *= s
        out[name] = weight
    return out


def read_gpt2(path):
    """tiny-f32's tensors under their bare names (no "transformer." prefix), float64."""
    tensors, _ = read_safetensors(path)
    out = {}
    for name, array in tensors.items():
        bare = name[len("transformer."):] if name.startswith("transformer.") else name
        out[bare] = torch.from_numpy(np.array(array, dtype=np.float64))
    return out


def case_runner(name, family):
    """(forward(weights, ids, dtype, ablation), weights, scaled(ablation): the weights with the
    ablated heads' o_proj (c_proj) inputs scaled instead)."""
    if family == "gpt2":
        c = next(case for case in gpt2.CASES if case["name"] == name)
        stored = read_gpt2(os.path.join(DATA, "gpt2", name + ".safetensors"))
        run = lambda w, ids, ft, ablation: gpt2_forward(w, ids, c, ft, ablation)  # noqa: E731
        return run, stored, lambda ablation: gpt2_c_proj_scaled(stored, c, ablation)
    c = next(case for case in llama.CASES if case["name"] == name)
    stored = read_checkpoint(os.path.join(DATA, "llama", name + ".safetensors"))
    run = lambda w, ids, ft, ablation: llama_forward(w, ids, c, ft, ablation)  # noqa: E731
    return run, stored, lambda ablation: llama_o_proj_scaled(stored, c, ablation)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, family, sets in CASES:
        folder = "gpt2" if family == "gpt2" else "llama"
        golden, _ = read_safetensors(os.path.join(DATA, folder, name + ".expected.safetensors"))
        ids = torch.from_numpy(golden["ids"].astype(np.int64))
        run, stored, scaled_weights = case_runner(name, family)

        # The golden scripts' forward gives the committed logits.
        plain = run(stored, ids, torch.float64, None)
        err = float((plain - torch.from_numpy(np.array(golden["logits64"]))).abs().max())
        assert err < 1e-12, (name, "committed golden", err)
        for ft in (torch.float32, torch.float64):
            ones = [(l, h, 1.0) for l, h, _ in sets[-1]]
            assert torch.equal(run(stored, ids, ft, ones), run(stored, ids, ft, None)), name

        expected = {"ids": ids.to(torch.float64).numpy(), "logits64.plain": plain.numpy()}
        meta = {"case": name, "family": family, "sets": str(len(sets))}
        report = []
        for s, ablation in enumerate(sets):
            logits32 = run(stored, ids, torch.float32, ablation)
            logits64 = run(stored, ids, torch.float64, ablation)
            by_weights = run(scaled_weights(ablation), ids, torch.float64, None)
            err_w = float((logits64 - by_weights).abs().max())
            assert err_w < 1e-12, (name, s, "o_proj columns", err_w)
            d32 = float((logits32.to(torch.float64) - logits64).abs().max())
            assert d32 < 1e-4, (name, s, "float32 vs float64", d32)
            moved = float((logits64 - plain).norm() / logits64.norm())
            assert moved > 1e-3, (name, s, "the ablation moves the logits", moved)
            expected[f"logits32.{s}"] = logits32.to(torch.float64).numpy()
            expected[f"logits64.{s}"] = logits64.numpy()
            meta[f"ablation.{s}"] = ",".join(f"{l}:{h}:{sc:g}" for l, h, sc in ablation)
            report.append(f"{meta[f'ablation.{s}']} moved {moved:.3f}")
        path = os.path.join(OUT, name + ".safetensors")
        write_safetensors(path, expected, meta)
        back, back_meta = read_safetensors(path)
        assert back_meta == meta and all(np.array_equal(back[k], expected[k]) for k in expected)
        print("wrote ablation/%s.safetensors: %s" % (name, "; ".join(report)))


if __name__ == "__main__":
    main()
