#!/usr/bin/env python3
"""Golden vectors from PyTorch's nn.MultiheadAttention: tests/data/golden/<case>.safetensors.

Each case builds torch.nn.MultiheadAttention(d_model, heads, bias=..., batch_first=True) in
float32 on the CPU with a per-case torch.manual_seed, gives it random nonzero biases (PyTorch
initialises them to zero, which would hide bias bugs), draws x (and kv for cross-attention)
from randn, and records mha(x, kv, kv, key_padding_mask, attn_mask, need_weights=True,
average_attn_weights=False) for batch size 1.

Run through scripts/data/make-test-data.sh (needs Debian's python3-torch and python3-numpy).
Deterministic: the same PyTorch build writes the same bytes every run.
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "golden")

# name, n, kv_n (None: self-attention), d_model, heads, bias, mask, padded keys, seed
CASES = [
    ("self_nobias", 5, None, 16, 4, False, "none", [], 1001),
    ("self_bias", 7, None, 24, 3, True, "none", [], 1002),
    ("causal_bias", 6, None, 32, 4, True, "causal", [], 1003),
    ("padding_bias", 6, None, 16, 2, True, "none", [4, 5], 1004),
    ("causal_padding_nobias", 8, None, 16, 4, False, "causal", [3, 7], 1005),
    ("cross_bias", 4, 7, 16, 4, True, "none", [], 1006),
    ("cross_padding_nobias", 5, 3, 8, 2, False, "none", [1], 1007),
    ("cross_causal_bias", 6, 9, 16, 2, True, "causal", [], 1008),
    ("single_head", 4, None, 8, 1, True, "none", [], 1009),
    ("odd_dk", 9, None, 15, 3, True, "none", [], 1010),
    ("wide", 33, None, 64, 4, True, "causal", [], 1011),
    ("long_cross", 17, 40, 32, 8, False, "none", [], 1012),
]

# Cases whose state_dict is also written alone, for testing a PyTorch-weights loader.
WEIGHTS_ONLY = {"self_bias", "self_nobias"}


def describe(name, n, kv_n, d_model, heads, bias, mask, padded, seed):
    kind = "self-attention" if kv_n is None else f"cross-attention over kv_n={kv_n} keys"
    parts = [f"{kind}, n={n}, d_model={d_model}, heads={heads} (d_k={d_model // heads})"]
    parts.append("with biases" if bias else "without biases")
    if mask == "causal":
        parts.append("causal attn_mask = triu(ones(n, kv_n), diagonal=1)")
    if padded:
        parts.append("key_padding_mask on keys " + ", ".join(str(k) for k in padded))
    parts.append(f"torch.manual_seed({seed}), PyTorch {torch.__version__}")
    return "; ".join(parts)


def make_case(name, n, kv_n, d_model, heads, bias, mask, padded, seed):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True)
    mha = mha.to(dtype=torch.float32, device="cpu").eval()
    with torch.no_grad():
        if bias:
            mha.in_proj_bias.copy_(torch.randn(3 * d_model) * 0.1)
            mha.out_proj.bias.copy_(torch.randn(d_model) * 0.1)
        x = torch.randn(n, d_model, dtype=torch.float32)
        cross = kv_n is not None
        kv = torch.randn(kv_n, d_model, dtype=torch.float32) if cross else x
        keys = kv.shape[0]

        attn_mask = None
        if mask == "causal":
            attn_mask = torch.triu(torch.ones(n, keys, dtype=torch.bool), diagonal=1)
        padding = None
        if padded:
            padding = np.zeros(keys, dtype=np.uint8)
            padding[padded] = 1
        allowed = np.ones((n, keys), dtype=bool)
        if attn_mask is not None:
            allowed &= ~attn_mask.numpy()
        if padding is not None:
            allowed &= padding[None, :] == 0
        if not allowed.any(axis=1).all():
            raise SystemExit(f"{name}: a query row is fully masked (PyTorch would give NaN)")

    xb = x.unsqueeze(0)
    kvb = kv.unsqueeze(0) if cross else xb
    kpm = torch.from_numpy(padding.astype(bool)).unsqueeze(0) if padding is not None else None
    # Called with autograd on (the parameters require grad), so every case takes PyTorch's
    # reference path, F.multi_head_attention_forward. Under no_grad, 1.13 sends even-headed
    # unmasked self-attention to its "fast path" instead, which crashes for bias=False.
    with torch.enable_grad():
        out, attn = mha(xb, kvb, kvb, key_padding_mask=kpm, attn_mask=attn_mask,
                        need_weights=True, average_attn_weights=False)
    out = out[0].detach().numpy().astype(np.float32)
    attn = attn[0].detach().numpy().astype(np.float32)
    if out.shape != (n, d_model) or attn.shape != (heads, n, keys):
        raise SystemExit(f"{name}: unexpected shapes {out.shape}, {attn.shape}")
    if not (np.isfinite(out).all() and np.isfinite(attn).all()):
        raise SystemExit(f"{name}: non-finite values in PyTorch's result")

    state = {k: v.detach().numpy().astype(np.float32) for k, v in mha.state_dict().items()}
    tensors = {"x": x.numpy()}
    if cross:
        tensors["kv"] = kv.numpy()
    for key in ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"):
        if key in state:
            tensors[key] = state[key]
    if padding is not None:
        tensors["key_padding_mask"] = padding
    tensors["expected_output"] = out
    tensors["expected_attention"] = attn
    metadata = {
        "heads": str(heads),
        "mask": mask,
        "bias": "true" if bias else "false",
        "description": describe(name, n, kv_n, d_model, heads, bias, mask, padded, seed),
    }
    write_safetensors(os.path.join(OUT, f"{name}.safetensors"), tensors, metadata)

    if name in WEIGHTS_ONLY:
        write_safetensors(os.path.join(OUT, f"{name}.weights.safetensors"), state,
                          {"format": "pt", "heads": str(heads), "d_model": str(d_model)})
    return out, attn


def main():
    torch.set_num_threads(1)  # one reduction order, the same bytes every run
    os.makedirs(OUT, exist_ok=True)
    for case in CASES:
        make_case(*case)
        print(f"golden: {case[0]}.safetensors")


if __name__ == "__main__":
    main()
