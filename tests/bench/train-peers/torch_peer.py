#!/usr/bin/python3
"""The training benchmark's PyTorch peer: the standard transformer in torch.nn on one CPU thread,
torch.optim.AdamW and clip_grad_norm_, from the initial parameters and batches that setup.mjs
wrote (build/bench/train-*.safetensors). Prints JSON (see tests/bench/README.md).

Usage (Debian's python3-torch: /usr/bin/python3):
  torch_peer.py PARAMS BATCHES [--rounds R] [--steps S] [--warmup W] [--check K]
      the cross-check losses (the first K = 5 steps from the initial parameters), then W warm-up
      steps and R timed rounds of S steps; prints one JSON object and exits.
  torch_peer.py PARAMS BATCHES --serve
      a line protocol on stdin/stdout for train-bench.mjs's interleaved rounds:
      "reset" -> fresh parameters and optimizer; "steps K" -> K steps, replies
      {"seconds": ..., "losses": [...]}; "quit". Every reply is one JSON line.
"""
import argparse
import json
import statistics
import struct
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "I32": torch.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        raw = bytearray(data[8 + length + start : 8 + length + end])
        tensors[name] = torch.frombuffer(raw, dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors, metadata


class Block(nn.Module):
    """x = x + attn(ln1(x)), causal multi-head attention with biases."""

    def __init__(self, d, heads, eps):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.attn = nn.MultiheadAttention(d, heads, bias=True, batch_first=True)

    def forward(self, x, mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        return x + a


class Transformer(nn.Module):
    """Decoder-only, learned positions, pre-LN blocks, final LN, untied unembedding, no MLP;
    parameter names as in docs/API.md."""

    def __init__(self, config, eps):
        super().__init__()
        d, vocab, context = config["dModel"], config["vocab"], config["context"]
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.layers = nn.ModuleList(Block(d, config["heads"], eps) for _ in range(config["layers"]))
        self.ln_f = nn.LayerNorm(d, eps=eps)
        self.unembed = nn.Linear(d, vocab, bias=False)
        mask = torch.triu(torch.ones(context, context, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, ids):
        n = ids.shape[1]
        x = self.embed(ids) + self.pos.weight[:n]
        for block in self.layers:
            x = block(x, self.mask[:n, :n])
        return self.unembed(self.ln_f(x))


class Peer:
    def __init__(self, params_file, batches_file):
        self.initial, metadata = read_safetensors(params_file)
        batches, _ = read_safetensors(batches_file)
        self.ids = batches["ids"].long()
        self.targets = batches["targets"].long()
        self.config = json.loads(metadata["config"])
        self.opt = json.loads(metadata["optimizer"])
        self.eps = float(metadata["lnEps"])
        self.reset()

    def reset(self):
        self.model = Transformer(self.config, self.eps)
        self.model.load_state_dict(self.initial, strict=True)
        self.model.train()
        o = self.opt
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
            weight_decay=o["weightDecay"])
        self.step_index = 0

    def step(self):
        """One training step on the next batch of the pool; returns the loss before the update."""
        k = self.step_index % self.ids.shape[0]
        self.step_index += 1
        logits = self.model(self.ids[k])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.targets[k].reshape(-1), ignore_index=-1)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.opt["clip"])
        self.optimizer.step()
        return loss.item()

    def steps(self, count):
        start = time.perf_counter()
        losses = [self.step() for _ in range(count)]
        return {"seconds": time.perf_counter() - start, "losses": losses}


def info():
    return {"torch": torch.__version__, "threads": torch.get_num_threads()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("params")
    parser.add_argument("batches")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--check", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    peer = Peer(args.params, args.batches)

    if args.serve:
        print(json.dumps({"ready": True, **info()}), flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "quit":
                break
            if words[0] == "reset":
                peer.reset()
                reply = {"reset": True}
            elif words[0] == "steps":
                reply = peer.steps(int(words[1]))
            else:
                reply = {"error": f"unknown command {words[0]!r}"}
            print(json.dumps(reply), flush=True)
        return

    losses = peer.steps(args.check)["losses"]
    peer.reset()
    peer.steps(args.warmup)
    rates = [args.steps / peer.steps(args.steps)["seconds"] for _ in range(args.rounds)]
    print(json.dumps({**info(), "stepsPerSecond": statistics.median(rates), "rounds": rates, "losses": losses}))


if __name__ == "__main__":
    main()
