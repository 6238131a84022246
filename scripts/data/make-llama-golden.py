#!/usr/bin/env python3
"""Llama-family checkpoint golden data: tests/data/llama/<case>.safetensors, .config.json,
.expected.safetensors, for the families `llama`, `qwen2` and `mistral`.

Each case is a tiny checkpoint with random weights written as a Hugging Face `model.safetensors`
really is: LlamaForCausalLM / Qwen2ForCausalLM / MistralForCausalLM names (`model.embed_tokens`,
`model.layers.<i>.{input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm,
mlp.{gate,up,down}_proj}`, `model.norm`, `lm_head` only when untied), nn.Linear weights [out, in],
the header's tensors sorted by name (as the safetensors library writes them), metadata
{"format": "pt"}, every tensor in the case's dtype (F32, BF16 or F16). Next to it, its
config.json (the keys `transformers` writes for the family, sorted as save_pretrained sorts them)
and <case>.expected.safetensors, all F64:
  ids                  the token ids of one sequence of N = 12 tokens (F64 holding integers)
  logits32 / logits64  the logits [n, vocab] of the reference below in float32 and in float64
  attn32.<l> / attn64.<l>  layer l's attention weights [heads, n, n] of the QUERY heads (after
                       repeat_kv: what transformers returns with output_attentions=True, eager)
and the config's numbers as metadata (family, layers, heads, kv_heads, head_dim, d_model, vocab,
context = max_position_embeddings, n, dtype). "32" is the reference run in float32 exactly as
transformers runs a float32 model; "64" is the same stored weights cast to float64 and the same
code run in float64 throughout (inv_freq, cos/sin, RMSNorm and softmax included). A BF16/F16
case's expected values are computed from the weights as stored (rounded, then upcast: the
forward reads them back from the written file), never in bf16/f16 arithmetic.

The reference follows transformers' eager code line by line (no `transformers` package here;
the pieces every family shares are hf_eager.py's, which cites them):
  models/llama/modeling_llama.py
    LlamaAttention            head_dim = config.head_dim if set, else hidden // heads;
                              q/k/v/o biases when attention_bias; o_proj [d, heads·head_dim]
    LlamaMLP                  down(act(gate(x)) * up(x)), biases when mlp_bias, act = silu
    LlamaDecoderLayer         x += attn(input_layernorm(x)); x += mlp(post_attention_layernorm(x))
    LlamaModel / ForCausalLM  embed_tokens, position_ids = arange(n), final norm, lm_head (tied:
                              the embedding matrix)
  models/qwen2/               Qwen2Attention: q/k/v biases, no o bias; Qwen2Config:
                              sliding_window is None unless use_sliding_window, then layers
                              i >= max_window_layers slide
  models/mistral/             MistralAttention / MistralModel: config.sliding_window, every layer
  RoPE (hf_eager.rope_init)   default, and llama3's rescaled frequencies
The float64 run departs from transformers in one way only, on purpose: transformers would upcast
RMSNorm, RoPE and softmax to float32 even in a float64 model; here they stay float64.

Checks (a failing one stops the script before the case's expected file is written): the file
reads back as written; float32 and float64 agree; a second, independent float64 implementation
(golden_case.llama_loops: per-head, per-row loops, kv head h // (heads / kv_heads), explicit
pair rotations, explicit window) gives the same logits and attention to 1e-12; the rotate_half
RoPE equals rotating the pairs (x_i, x_{i+hd/2}) by t·θ_i; the llama3 case's scaling leaves some
frequencies unchanged, divides some by factor and smooths some; every sliding window (mistral's)
and causal mask zeroes exactly the keys j <= i − window and j > i; every row sums to 1.

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-llama-golden.py (deterministic).
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_case  # noqa: E402
from golden_case import (check_case, check_rope, draw_mlp, draw_qkv, llama_loops,  # noqa: E402
                         llama_shaped_weights)
from hf_eager import (apply_rotary_pos_emb, attention_output, eager_mask, embed,  # noqa: E402
                      gated_mlp, rms_norm, rope_init, rotary_embedding)
from safetensors_io import read_checkpoint, write_checkpoint  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "llama")
N = 12  # tokens per sequence

# original_max_position_embeddings 32 (not 16): with head_dim 24 and theta 5e5 the wavelengths
# 2π/inv_freq are 6.3, 18.8, 56, 167, …; at 16 (high_freq_wavelen 4) none stays unchanged, at 32
# (high 8, low 32) the first stays, the second is smoothed and the other ten are divided by 8.
LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 32}

# family, sizes, switches, stored dtype, seed. head_dim None: not in config.json (d / heads).
CASES = [
    dict(name="llama-f32", family="llama", layers=2, heads=4, kv=2, d=64, head_dim=None, inter=96,
         vocab=96, ctx=64, theta=10000.0, eps=1e-5, tied=False, attention_bias=False,
         rope_scaling=None, bos=1, eos=2, dtype="F32", seed=11),
    dict(name="llama-bf16", family="llama", layers=2, heads=4, kv=2, d=64, head_dim=None, inter=96,
         vocab=96, ctx=64, theta=10000.0, eps=1e-5, tied=False, attention_bias=False,
         rope_scaling=None, bos=1, eos=2, dtype="BF16", seed=11),
    dict(name="llama3-f32", family="llama", layers=2, heads=4, kv=4, d=64, head_dim=24, inter=64,
         vocab=64, ctx=64, theta=500000.0, eps=1e-5, tied=True, attention_bias=True,
         rope_scaling=LLAMA3_SCALING, bos=62, eos=63, dtype="F32", seed=12),
    dict(name="qwen2-f32", family="qwen2", layers=2, heads=4, kv=1, d=64, head_dim=None, inter=128,
         vocab=72, ctx=128, theta=1000000.0, eps=1e-6, tied=True, sliding_window=4096,
         use_sliding_window=False, max_window_layers=2, bos=71, eos=71, dtype="F32", seed=13),
    dict(name="qwen2-bf16", family="qwen2", layers=2, heads=4, kv=1, d=64, head_dim=None, inter=128,
         vocab=72, ctx=128, theta=1000000.0, eps=1e-6, tied=True, sliding_window=4096,
         use_sliding_window=False, max_window_layers=2, bos=71, eos=71, dtype="BF16", seed=13),
    dict(name="mistral-f32", family="mistral", layers=3, heads=4, kv=2, d=64, head_dim=None,
         inter=112, vocab=80, ctx=64, theta=10000.0, eps=1e-5, tied=False, sliding_window=5,
         bos=1, eos=2, dtype="F32", seed=14),
    dict(name="smollm2-f16", family="llama", layers=3, heads=3, kv=1, d=48, head_dim=None,
         inter=128, vocab=64, ctx=64, theta=100000.0, eps=1e-5, tied=True, attention_bias=False,
         rope_scaling=None, bos=0, eos=0, dtype="F16", seed=15),
]

ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM"}
TORCH_DTYPE = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}


def head_dim(c):
    """LlamaAttention: getattr(config, "head_dim", None) or hidden_size // num_attention_heads."""
    return c["head_dim"] or c["d"] // c["heads"]


def q_bias(c):
    return c["family"] == "qwen2" or c.get("attention_bias", False)


def o_bias(c):
    return c["family"] == "llama" and c.get("attention_bias", False)


def layer_windows(c):
    """The sliding window of each layer (None: full causal attention)."""
    if c["family"] == "mistral":
        return [c["sliding_window"]] * c["layers"]
    if c["family"] == "qwen2":
        # Qwen2Config: sliding_window = sliding_window if use_sliding_window else None; layer_types
        # "sliding_attention" if sliding_window is not None and i >= max_window_layers.
        window = c["sliding_window"] if c["use_sliding_window"] else None
        return [window if window is not None and i >= c["max_window_layers"] else None
                for i in range(c["layers"])]
    return [None] * c["layers"]


# ---------------------------------------------------------------------------------------------
# Weights and files


def rope(c, ft):
    """(inv_freq, attention_scaling) of case c: rope_theta over the head, rope_scaling (llama3)."""
    return rope_init(c["theta"], head_dim(c), c.get("rope_scaling"), ft)


def make_weights(c):
    """HF state dict (float32) and the token ids, from one generator seeded per case."""
    d, hd = c["d"], head_dim(c)
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_qkv(w, randn, p, d, hq, hkv, 1.4)
        if q_bias(c):
            w[p + "self_attn.q_proj.bias"] = randn(hq, std=0.1)
            w[p + "self_attn.k_proj.bias"] = randn(hkv, std=0.1)
            w[p + "self_attn.v_proj.bias"] = randn(hkv, std=0.1)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        if o_bias(c):
            w[p + "self_attn.o_proj.bias"] = randn(d, std=0.1)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_mlp(w, randn, p, d, c["inter"])

    return llama_shaped_weights(c, N, layer)


def write_config(path, c):
    """The Hugging Face config.json of case c (keys sorted, indent 2, as save_pretrained)."""
    config = {
        "architectures": [ARCH[c["family"]]], "model_type": c["family"],
        "attention_dropout": 0.0, "bos_token_id": c["bos"], "eos_token_id": c["eos"],
        "hidden_act": "silu", "hidden_size": c["d"], "initializer_range": 0.02,
        "intermediate_size": c["inter"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "rms_norm_eps": c["eps"],
        "rope_scaling": c.get("rope_scaling"), "rope_theta": c["theta"],
        "tie_word_embeddings": c["tied"], "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.46.3", "use_cache": True, "vocab_size": c["vocab"],
    }
    if c["head_dim"] is not None:
        config["head_dim"] = c["head_dim"]
    if c["family"] == "llama":
        config.update(attention_bias=c["attention_bias"], mlp_bias=False, pretraining_tp=1)
    if c["family"] == "qwen2":
        config.update(sliding_window=c["sliding_window"],
                      use_sliding_window=c["use_sliding_window"],
                      max_window_layers=c["max_window_layers"])
    if c["family"] == "mistral":
        config.update(sliding_window=c["sliding_window"])
    golden_case.write_config(path, config)


# ---------------------------------------------------------------------------------------------
# The reference: transformers' eager Llama / Qwen2 / Mistral forward, line by line.


def attention(w, p, c, hidden_states, position_embeddings, attention_mask, head_scale=None):
    """LlamaAttention / Qwen2Attention / MistralAttention .forward (eager, no cache). head_scale
    (optional, not transformers'): [heads·head_dim], multiplies each head's columns of attn_output
    before o_proj (make-ablation-golden.py's ablations)."""
    hd = head_dim(c)
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    b = lambda name: w.get(p + name)  # noqa: E731  (None when the checkpoint has no such bias)
    proj = lambda s: F.linear(hidden_states, w[p + s + ".weight"], b(s + ".bias"))  # noqa: E731
    query_states = proj("q_proj").view(hidden_shape).transpose(1, 2)
    key_states = proj("k_proj").view(hidden_shape).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5, head_scale=head_scale)


def forward(stored, ids, c, ft, head_scales=None):
    """LlamaForCausalLM(input_ids[None]) in dtype ft: (logits [n, vocab], attentions, one
    [heads, n, n] per layer). head_scales (optional): per layer a head_scale for attention."""
    w = {k: x.to(ft) for k, x in stored.items()}
    hidden_states, position_ids = embed(w, ids)
    position_embeddings = rotary_embedding(*rope(c, ft), ft, position_ids)
    attentions = []
    for l, window in enumerate(layer_windows(c)):
        p = f"model.layers.{l}."
        mask = eager_mask(len(ids), window, ft)
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "input_layernorm.weight"], c["eps"])
        hidden_states, attn_weights = attention(w, p + "self_attn.", c, hidden_states,
                                                position_embeddings, mask,
                                                head_scales[l] if head_scales else None)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"], c["eps"])
        hidden_states = gated_mlp(w, p + "mlp.", hidden_states)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm(hidden_states, w["model.norm.weight"], c["eps"])
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    logits = F.linear(hidden_states, lm_head)
    return logits[0], attentions


def forward_loops(stored, ids, c):
    """The independent float64 implementation (golden_case.llama_loops), frequencies from rope."""
    w = {k: x.to(torch.float64) for k, x in stored.items()}
    thetas = [float(theta) for theta in rope(c, torch.float64)[0]]
    return llama_loops(w, ids, c, head_dim(c), thetas, layer_windows(c))


def check_llama3(c):
    """The llama3 scaling leaves some frequencies, divides some by factor, smooths the rest."""
    rs = c["rope_scaling"]
    scaled, _ = rope(c, torch.float64)
    plain, _ = rope(dict(c, rope_scaling=None), torch.float64)
    same = scaled == plain
    divided = torch.isclose(scaled, plain / rs["factor"], rtol=1e-15, atol=0)
    smoothed = ~same & ~divided
    counts = (int(same.sum()), int(smoothed.sum()), int(divided.sum()))
    assert all(k > 0 for k in counts), (c["name"], "llama3 categories", counts)
    assert bool((scaled <= plain).all() and (scaled >= plain / rs["factor"] * (1 - 1e-15)).all())
    return counts


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        w, ids = make_weights(c)
        path = os.path.join(OUT, c["name"] + ".safetensors")
        write_checkpoint(path, w, c["dtype"])
        write_config(os.path.join(OUT, c["name"] + ".config.json"), c)
        stored = read_checkpoint(path)  # the weights as the file holds them, exactly, in float64
        assert sorted(stored) == sorted(w)
        for name in w:
            assert stored[name].shape == w[name].shape
            if c["dtype"] == "F32":
                assert torch.equal(stored[name], w[name].to(torch.float64)), name

        results = {label: forward(stored, ids, c, ft)
                   for label, ft in (("32", torch.float32), ("64", torch.float64))}

        # Checks.
        thetas = [float(theta) for theta in rope(c, torch.float64)[0]]
        check_rope(c["name"], c["seed"], c["heads"], c["kv"], head_dim(c),
                   (c["theta"], head_dim(c), c.get("rope_scaling")), thetas, N)
        extra = ""
        if c.get("rope_scaling"):
            extra = " llama3 (unchanged, smoothed, divided) = %s" % (check_llama3(c),)
        if c["family"] == "mistral":
            assert c["sliding_window"] < N and any(wd is not None for wd in layer_windows(c))
        d_logits, d_attn, loop_err, top_mean, top_max = check_case(
            c["name"], results, forward_loops(stored, ids, c), layer_windows(c), N)

        meta = {"family": c["family"], "layers": str(c["layers"]), "heads": str(c["heads"]),
                "kv_heads": str(c["kv"]), "head_dim": str(head_dim(c)), "d_model": str(c["d"]),
                "vocab": str(c["vocab"]), "context": str(c["ctx"]), "n": str(N),
                "dtype": c["dtype"]}
        golden_case.write_expected(os.path.join(OUT, c["name"] + ".expected.safetensors"), ids,
                                   results, meta)
        print("wrote %-12s max|f32-f64| logits %.2e attn %.2e; loops vs vectorized %.1e; "
              "mean top attention %.2f (max %.3f)%s"
              % (c["name"], d_logits, d_attn, loop_err, top_mean, top_max, extra))


if __name__ == "__main__":
    main()
