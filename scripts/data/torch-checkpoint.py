#!/usr/bin/env python3
"""Loads an Attention Lens model checkpoint (model.saveSafetensors()) into torch.nn and runs it.

    /usr/bin/python3 scripts/data/torch-checkpoint.py model.safetensors 3,1,4,1,5 [--float64]

reads the config from the file's metadata, builds docs/API.md's model in torch.nn
(scripts/data/torch_model.py), loads every tensor by its name (a missing or extra name is an error),
runs the token ids through it, and prints JSON: {"logits": [n][vocab], "attention":
[layer][head][n][n]} — what lens.createModel(...).forward(ids) returns, computed by PyTorch.
Needs Debian's python3-torch (scripts/setup.sh installs it).
"""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_safetensors  # noqa: E402
from torch_model import Model  # noqa: E402

FLAGS = ("layer_norm", "mlp", "tied", "bias")
SIZES = ("vocab", "context", "d_model", "heads", "layers")


def config_of(metadata):
    if metadata.get("format") != "attention-lens-model":
        sys.exit("not an Attention Lens model checkpoint (metadata format is "
                 f"{metadata.get('format')!r}, expected 'attention-lens-model')")
    config = {key: int(metadata[key]) for key in SIZES}
    config.update({key: metadata[key] == "true" for key in FLAGS})
    config["positional"] = metadata["positional"]
    config["gelu"] = metadata.get("gelu", "erf")
    return config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("ids", help="comma-separated token ids")
    parser.add_argument("--float64", action="store_true", help="run in double precision")
    args = parser.parse_args()
    tensors, metadata = read_safetensors(args.checkpoint)
    config = config_of(metadata)
    dtype = torch.float64 if args.float64 else torch.float32
    model = Model(config).to(dtype)
    state = {name: torch.tensor(value.copy(), dtype=dtype) for name, value in tensors.items()}
    model.load_state_dict(state, strict=True)
    ids = torch.tensor([[int(t) for t in args.ids.split(",")]])
    with torch.no_grad():
        logits = model(ids)
    attention = [block.attn.weights[0].tolist() for block in model.layers]
    json.dump({"logits": logits[0].tolist(), "attention": attention}, sys.stdout)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
