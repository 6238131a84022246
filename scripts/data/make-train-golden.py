#!/usr/bin/env python3
"""Training golden data from PyTorch autograd: tests/data/train/<config>.safetensors.

Each config defines docs/API.md's small decoder-only transformer literally in torch.nn (below:
embed + positions, blocks x = x + attn(ln1(x)), x = x + mlp(ln2(x)), mlp(h) = proj(GELU(fc(h))),
causal multi-head attention with optional RoPE, ln_f, logits = h·unembedᵀ or ·embedᵀ when tied),
draws initial parameters (nonzero biases and LayerNorm affines, so bias bugs show), one batch of
ids and targets (some -1: ignored) and records, in float32 AND float64 (the same parameters cast
to double, the same steps):
  loss32 / loss64             the mean cross-entropy of the batch at the initial parameters
  grad32.<name> / grad64.<name>   the gradient of every parameter (before clipping)
  losses32 / losses64         the loss before each of 10 AdamW steps on that batch
  after32.<name> / after64.<name> the parameters after the 10 steps (torch.optim.AdamW, one param
                              group over all parameters so weight decay applies to every one,
                              clip_grad_norm_ before each step, the lr schedule set per step)
  param.<name>                the initial parameters (float32), ids, targets (F64 holding ints)
The metadata holds the model config and the optimizer's settings. The C++ test judges its float32
error against PyTorch's own float32 error, both measured from the float64 run.

Run through scripts/data/make-test-data.sh (needs Debian's python3-torch and python3-numpy).
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402
from torch_model import Model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "train")
STEPS = 10

# A config's keys, in the order of the files' metadata, and their defaults (None: each config gives
# it). A config's name says where it departs from them: nonorm, mlp, tied, nobias, gelu_tanh,
# cosine (warmup and total); batch 3 is not in the names.
BASE = dict(vocab=None, context=None, d_model=None, heads=None, layers=None, positional=None,
            layer_norm=True, mlp=False, tied=False, bias=True, gelu="erf", batch=2, n=None,
            warmup=0, total=0, seed=None)


def config(**given):
    assert given.keys() <= BASE.keys()
    c = dict(BASE, **given)
    assert None not in c.values(), c
    return c


# name: model config, batch shape, optimizer, seed
CONFIGS = {
    "l1_learned_nonorm": config(vocab=11, context=8, d_model=12, heads=3, layers=1,
                                positional="learned", layer_norm=False, n=6, seed=2001),
    "l2_sinusoidal_ln_mlp_tied": config(vocab=13, context=7, d_model=12, heads=2, layers=2,
                                        positional="sinusoidal", mlp=True, tied=True, batch=3,
                                        n=7, seed=2002),
    "l2_rope_nobias_cosine": config(vocab=17, context=8, d_model=16, heads=4, layers=2,
                                    positional="rope", bias=False, n=8, warmup=3, total=10,
                                    seed=2003),
    "l3_odd_dk_learned": config(vocab=12, context=6, d_model=15, heads=3, layers=3,
                                positional="learned", n=5, seed=2004),
    "l1_mlp_nonorm_nopos_nobias_tied": config(vocab=14, context=9, d_model=16, heads=4, layers=1,
                                              positional="none", layer_norm=False, mlp=True,
                                              tied=True, bias=False, n=9, seed=2005),
    "l3_rope_mlp_tied_cosine": config(vocab=16, context=9, d_model=12, heads=2, layers=3,
                                      positional="rope", mlp=True, tied=True, batch=3, n=9,
                                      warmup=2, total=8, seed=2006),
    "l1_mlp_gelu_tanh": config(vocab=11, context=6, d_model=12, heads=2, layers=1,
                               positional="learned", mlp=True, gelu="tanh", n=6, seed=2007),
}
OPTIMIZER = dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1, clip=1.0,
                 min_lr=0.001)


def learning_rate(step, c, o):
    """Step t (1-based): linear warmup, then constant or cosine down to min_lr at total."""
    if step <= c["warmup"]:
        return o["lr"] * step / c["warmup"]
    if c["total"] <= c["warmup"]:
        return o["lr"]
    if step >= c["total"]:
        return o["min_lr"]
    progress = (step - c["warmup"]) / (c["total"] - c["warmup"])
    return o["min_lr"] + 0.5 * (o["lr"] - o["min_lr"]) * (1 + math.cos(math.pi * progress))


def initial_parameters(c, generator):
    """name -> float32 array: weights N(0, 1/fan_in), embeddings N(0, 1), biases N(0, 0.1²),
    LayerNorm weights 1 + N(0, 0.1²) and biases N(0, 0.1²)."""
    params = {}
    for name, p in Model(c).named_parameters():
        shape = tuple(p.shape)
        r = torch.randn(shape, generator=generator, dtype=torch.float64)
        if ".ln" in name or name.startswith("ln_f"):
            value = (1.0 if name.endswith("weight") else 0.0) + 0.1 * r
        elif name.endswith("bias"):
            value = 0.1 * r
        elif name in ("embed.weight", "pos.weight"):
            value = r
        else:
            value = r / math.sqrt(shape[1])
        params[name] = value.to(torch.float32)
    return params


def run(c, params, ids, targets, dtype):
    model = Model(c).to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in params.items()})
    ids_t, targets_t = torch.tensor(ids), torch.tensor(targets)

    def loss_fn():
        logits = model(ids_t)
        return F.cross_entropy(logits.reshape(-1, c["vocab"]), targets_t.reshape(-1),
                               ignore_index=-1)

    o = OPTIMIZER
    opt = torch.optim.AdamW(model.parameters(), lr=o["lr"], betas=(o["beta1"], o["beta2"]),
                            eps=o["eps"], weight_decay=o["weight_decay"], foreach=False)
    grads, losses = None, []
    for step in range(1, STEPS + 1):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, c, o)
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        losses.append(loss.item())
        if grads is None:
            grads = {k: p.grad.detach().clone() for k, p in model.named_parameters()}
        torch.nn.utils.clip_grad_norm_(model.parameters(), o["clip"])
        opt.step()
    after = {k: p.detach().clone() for k, p in model.named_parameters()}
    return losses, grads, after


def make(name, c):
    generator = torch.Generator().manual_seed(c["seed"])
    params = initial_parameters(c, generator)
    B, n = c["batch"], c["n"]
    ids = torch.randint(0, c["vocab"], (B, n), generator=generator).numpy()
    targets = torch.randint(0, c["vocab"], (B, n), generator=generator).numpy()
    ignored = torch.rand((B, n), generator=generator).numpy() < 0.25
    targets[ignored] = -1
    targets[0, 0] = -1  # at least one ignored target in every file
    targets[0, 1] = 1
    out32 = run(c, params, ids, targets, torch.float32)
    out64 = run(c, params, ids, targets, torch.float64)
    tensors = {"ids": ids.astype(np.float64), "targets": targets.astype(np.float64)}
    for key, value in params.items():
        tensors["param." + key] = value.numpy()
    for tag, (losses, grads, after), dt in (("32", out32, np.float32), ("64", out64, np.float64)):
        tensors["loss" + tag] = np.array([losses[0]], dtype=np.float64)
        tensors["losses" + tag] = np.array(losses, dtype=np.float64)
        for key, value in grads.items():
            tensors[f"grad{tag}.{key}"] = value.numpy().astype(dt)
        for key, value in after.items():
            tensors[f"after{tag}.{key}"] = value.numpy().astype(dt)
    meta = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in c.items()}
    meta.update({k: repr(v) for k, v in OPTIMIZER.items()})
    meta["steps"] = str(STEPS)
    meta["torch"] = torch.__version__
    write_safetensors(os.path.join(OUT, name + ".safetensors"), tensors, meta)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for name, c in CONFIGS.items():
        make(name, c)
    print(f"wrote {len(CONFIGS)} configs to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
