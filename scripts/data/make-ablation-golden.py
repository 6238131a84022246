#!/usr/bin/env python3
"""Head-ablation golden data: tests/data/ablation/<case>.safetensors, the logits of committed
golden checkpoints with some attention heads ablated, from PyTorch.

Cases: tests/data/llama/qwen2-f32 (grouped-query: 4 query heads on 1 K/V head) and mistral-f32 (a
sliding window of 5), read with make-llama-golden.py's reader and run by its reference (transformers'
eager Llama/Qwen2/Mistral code, line by line); tests/data/gpt2/tiny-f32, read with safetensors_io.py
and run by make-gpt2-golden.py's GPT-2 reference. Each on its golden file's ids (N = 12).

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

Checks (a failing one stops the script before the file is written): the forward written here with
no ablation equals the golden script's own forward exactly (torch.equal, float32 and float64), and
its logits the committed <case>.expected.safetensors' to 1e-12 (float64); every ablation equals
scaling that head's input columns of o_proj (c_proj) to 1e-12 in float64; scales of 1 change
nothing (torch.equal); float32 and float64 agree to 1e-4; every set moves the logits.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-ablation-golden.py
(deterministic).
"""
import importlib.util
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "ablation")


def load_script(name):
    """A sibling script (its name has hyphens) as a module, without running its main()."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"),
                                                  os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


llama = load_script("make-llama-golden")
gpt2 = load_script("make-gpt2-golden")

# case, family, ablation sets: lists of (layer, head, scale).
CASES = [
    ("qwen2-f32", "qwen2", [[(0, 1, 0.0)], [(0, 0, 0.0), (1, 3, 0.0)],
                            [(1, 2, 0.5), (0, 3, 0.25)]]),
    ("mistral-f32", "mistral", [[(1, 1, 0.0)], [(0, 2, 0.0), (2, 0, 0.5)]]),
    ("tiny-f32", "gpt2", [[(0, 1, 0.0)], [(1, 0, 0.0), (0, 0, 0.75)]]),
]


def head_scales(ablation, layer, heads, hd, ft):
    """[heads·hd]: each column of a head's attention output times its scale (1 when kept)."""
    scale = torch.ones(heads, dtype=ft)
    for l, h, s in ablation:
        if l == layer:
            scale[h] = s
    return scale.repeat_interleave(hd)


# ---- the Llama family: make-llama-golden.py's reference with the head outputs scaled ----------


def llama_attention(w, p, c, hidden_states, position_embeddings, attention_mask, scale):
    """make-llama-golden.attention with attn_output's head columns scaled before o_proj."""
    hd = llama.head_dim(c)
    input_shape = hidden_states.shape[:-1]
    hidden_shape = (*input_shape, -1, hd)
    b = lambda name: w.get(p + name)  # noqa: E731
    proj = lambda s: F.linear(hidden_states, w[p + s + ".weight"], b(s + ".bias"))  # noqa: E731
    query_states = proj("q_proj").view(hidden_shape).transpose(1, 2)
    key_states = proj("k_proj").view(hidden_shape).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = llama.apply_rotary_pos_emb(query_states, key_states, cos, sin)
    attn_output, attn_weights = llama.eager_attention_forward(
        c["heads"] // c["kv"], query_states, key_states, value_states, attention_mask,
        scaling=hd ** -0.5)
    attn_output = attn_output.reshape(*input_shape, -1).contiguous()
    if scale is not None:
        attn_output = attn_output * scale
    return F.linear(attn_output, w[p + "o_proj.weight"], b("o_proj.bias")), attn_weights


def llama_forward(stored, ids, c, ft, ablation):
    """make-llama-golden.forward with `ablation` ([(layer, head, scale)], or None: untouched)."""
    w = {k: x.to(ft) for k, x in stored.items()}
    input_ids = ids[None, :]
    hidden_states = F.embedding(input_ids, w["model.embed_tokens.weight"])
    position_ids = torch.arange(0, hidden_states.shape[1]).unsqueeze(0)
    inv_freq, attention_scaling = llama.rope_init(c, ft)
    position_embeddings = llama.rotary_embedding(inv_freq, attention_scaling, hidden_states,
                                                 position_ids)
    for l, window in enumerate(llama.layer_windows(c)):
        p = f"model.layers.{l}."
        mask = llama.eager_mask(input_ids.shape[1], window, ft)
        scale = None if ablation is None else head_scales(ablation, l, c["heads"],
                                                          llama.head_dim(c), ft)
        residual = hidden_states
        hidden_states = llama.rms_norm(hidden_states, w[p + "input_layernorm.weight"], c["eps"])
        hidden_states, _ = llama_attention(w, p + "self_attn.", c, hidden_states,
                                           position_embeddings, mask, scale)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = llama.rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"],
                                       c["eps"])
        hidden_states = residual + llama.mlp(w, p + "mlp.", hidden_states)
    hidden_states = llama.rms_norm(hidden_states, w["model.norm.weight"], c["eps"])
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return F.linear(hidden_states, lm_head)[0]


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


# ---- GPT-2: make-gpt2-golden.py's reference with the head outputs scaled ----------------------


def gpt2_forward(w, ids, c, dtype, ablation):
    """make-gpt2-golden.forward with `ablation` (or None), logits only."""
    w = {k: x.to(dtype) for k, x in w.items()}
    n, d, heads = ids.shape[0], c["d"], c["heads"]
    dk = d // heads
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
    for l in range(c["layers"]):
        p = f"h.{l}."
        h = gpt2.layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.view(n, heads, dk).transpose(0, 1) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / (dk ** 0.5)
        scores = scores.masked_fill(~mask, float("-inf"))
        att = torch.softmax(scores, dim=-1)
        ctx = (att @ v).transpose(0, 1).reshape(n, d)
        if ablation is not None:
            ctx = ctx * head_scales(ablation, l, heads, dk, dtype)
        x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h2 = gpt2.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = gpt2.gelu_new(h2 @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = gpt2.layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].T


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
    """(forward(weights, ids, dtype, ablation), weights, reference forward or None, scaled(…))."""
    if family == "gpt2":
        c = next(case for case in gpt2.CASES if case["name"] == name)
        stored = read_gpt2(os.path.join(DATA, "gpt2", name + ".safetensors"))
        run = lambda w, ids, ft, ablation: gpt2_forward(w, ids, c, ft, ablation)  # noqa: E731
        original = lambda w, ids, ft: gpt2.forward(w, ids, c, ft)[0]  # noqa: E731
        return run, stored, original, lambda ablation: gpt2_c_proj_scaled(stored, c, ablation), c
    c = next(case for case in llama.CASES if case["name"] == name)
    stored = llama.read_checkpoint(os.path.join(DATA, "llama", name + ".safetensors"))
    run = lambda w, ids, ft, ablation: llama_forward(w, ids, c, ft, ablation)  # noqa: E731
    original = lambda w, ids, ft: llama.forward(w, ids, c, ft)[0]  # noqa: E731
    return run, stored, original, lambda ablation: llama_o_proj_scaled(stored, c, ablation), c


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, family, sets in CASES:
        folder = "gpt2" if family == "gpt2" else "llama"
        golden, _ = read_safetensors(os.path.join(DATA, folder, name + ".expected.safetensors"))
        ids = torch.from_numpy(golden["ids"].astype(np.int64))
        run, stored, original, scaled_weights, c = case_runner(name, family)

        # The forward written here is the golden scripts' own, and gives the committed logits.
        for ft in (torch.float32, torch.float64):
            assert torch.equal(run(stored, ids, ft, None), original(stored, ids, ft)), (name, ft)
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
