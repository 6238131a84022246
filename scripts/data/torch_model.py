"""docs/API.md's small decoder-only transformer, literally, in torch.nn.

The reference the C++ model is checked against (scripts/data/make-train-golden.py) and the model a
saved checkpoint loads into (scripts/data/torch-checkpoint.py). A config is a dict with the keys of
the checkpoint's metadata: vocab, context, d_model, heads, layers, positional (none |
sinusoidal | learned | rope), layer_norm, mlp, tied, bias, gelu (erf | tanh). Parameter names
^are docs/API.md's: embed.weight, pos.weight, layers.i.ln1.*, layers.i.attn.in_proj_weight, …
Every Attention module keeps its last softmax weights in `.weights` ([B, H, n, n]).
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoidal_table(n, d):
    """[n, d]: sin on even, cos on odd columns, angle pos / 10000^(2i/d), in float64."""
    table = np.zeros((n, d))
    for pos in range(n):
        for col in range(d):
            angle = pos / 10000.0 ** (2 * (col // 2) / d)
            table[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


def rope(x, dtype):
    """x [B, H, n, d_k]: pairs (2i, 2i+1) of position t rotated by t·10000^(-2i/d_k)."""
    n, dk = x.shape[-2], x.shape[-1]
    angles = np.array([[t * 10000.0 ** (-2 * i / dk) for i in range(dk // 2)] for t in range(n)])
    cos = torch.tensor(np.cos(angles), dtype=dtype)  # rounded once, as the core does
    sin = torch.tensor(np.sin(angles), dtype=dtype)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.heads, self.rope = c["heads"], c["positional"] == "rope"
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d, d))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * d)) if c["bias"] else None
        self.out_proj = nn.Linear(d, d, bias=c["bias"])

    def forward(self, x):
        B, n, d = x.shape
        H, dk = self.heads, d // self.heads
        q, k, v = F.linear(x, self.in_proj_weight, self.in_proj_bias).split(d, dim=-1)
        q, k, v = (t.view(B, n, H, dk).transpose(1, 2) for t in (q, k, v))  # [B, H, n, d_k]
        if self.rope:
            q, k = rope(q, x.dtype), rope(k, x.dtype)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dk)
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), -math.inf)
        weights = scores.softmax(dim=-1)
        self.weights = weights.detach()
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, n, d))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.fc = nn.Linear(d, 4 * d, bias=c["bias"])
        self.proj = nn.Linear(4 * d, d, bias=c["bias"])
        self.gelu = nn.GELU(approximate="tanh" if c["gelu"] == "tanh" else "none")

    def forward(self, h):
        return self.proj(self.gelu(self.fc(h)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        if c["layer_norm"]:
            self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = Attention(c)
        if c["mlp"]:
            if c["layer_norm"]:
                self.ln2 = nn.LayerNorm(d, eps=1e-5)
            self.mlp = MLP(c)
        self.c = c

    def forward(self, x):
        ln = self.c["layer_norm"]
        x = x + self.attn(self.ln1(x) if ln else x)
        if self.c["mlp"]:
            x = x + self.mlp(self.ln2(x) if ln else x)
        return x


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.c = c
        self.embed = nn.Embedding(c["vocab"], d)
        if c["positional"] == "learned":
            self.pos = nn.Embedding(c["context"], d)
        self.layers = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        if c["layer_norm"]:
            self.ln_f = nn.LayerNorm(d, eps=1e-5)
        if not c["tied"]:
            self.unembed = nn.Linear(d, c["vocab"], bias=False)

    def forward(self, ids):
        n, dtype = ids.shape[1], self.embed.weight.dtype
        x = self.embed(ids)
        if self.c["positional"] == "learned":
            x = x + self.pos.weight[:n]
        elif self.c["positional"] == "sinusoidal":
            x = x + torch.tensor(sinusoidal_table(n, self.c["d_model"]), dtype=dtype)
        for block in self.layers:
            x = block(x)
        if self.c["layer_norm"]:
            x = self.ln_f(x)
        unembed = self.embed.weight if self.c["tied"] else self.unembed.weight
        return x @ unembed.T  # [B, n, vocab]
