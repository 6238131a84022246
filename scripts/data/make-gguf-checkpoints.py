#!/usr/bin/env python3
"""GGUF files of the tiny golden checkpoints, as llama.cpp's converter (convert_hf_to_gguf.py)
writes them, for loadCheckpoint's GGUF path: tests/data/gguf/

  <case>-f32.gguf     the checkpoint's weights as they are (F32): the model loaded from it must give
                      the .safetensors model's logits and attention, bit for bit
  <case>-f16.gguf     weight matrices F16, 1-D tensors (norms, biases) F32, as llama.cpp's
                      --outtype f16 stores them; beside it <case>-f16.safetensors, the same values
                      under the Hugging Face names (matrices F16, the rest F32): the two models
                      must be equal bit for bit, and within F16's rounding of the golden logits
  <case>-q8_0.gguf    weight matrices Q8_0 (ggml's quantize_row_q8_0: per 32 values d = max|x| /
                      127 as a half, q = round(x / d)), 1-D tensors F32; beside it
                      <case>-q8_0.dequantized.safetensors, the dequantized values (d · q, exact in
                      float32; computed here in float64 from the blocks' bytes) as F32 under the
                      Hugging Face names: the two models must be equal bit for bit

for the cases llama (tests/data/llama/llama-f32: llama.cpp's q/k row permutation applied, as
LlamaModel.permute does), qwen2 (tests/data/llama/qwen2-f32: tied embeddings, q/k/v biases, no
permutation), qwen3 (tests/data/families/qwen3-f32: per-head q/k norms, head_dim 16 beside a
hidden size of 48 as attention.key_length; F32 and F16 only, its rows of 48 values being no whole
number of Q8_0 blocks), phi3 (tests/data/families/phi3-f32: the fused attn_qkv and ffn_up, a sliding
window of 6; F32 and F16 only, ffn_down's rows of 112 values being no whole Q8_0 blocks), llama3
(tests/data/llama/llama3-f32, rope_scaling llama3: rope_freqs.weight, the factors computed as
LlamaModel.generate_extra_tensors does, in float32 — llama3_rope_factors; F32 and F16), pythia
(tests/data/families/pythia-f32: GPTNeoXModel's query_key_value regrouped to [q | k | v],
rope.dimension_count for rotary_pct 0.25, use_parallel_residual; the buffers dropped), gemma2
(tests/data/families/gemma2-f32: Gemma2Model's names, every norm weight + 1, the soft-caps; F32
and F16) and gemma3 (tests/data/families/gemma3-pattern-f32's three layers twice — llama.cpp's
Gemma 3 pattern is fixed at six, so the sixth layer is the global one —, rope.freq_base and the
linear rope.scaling.type; F16 only, to keep it small): both Gemma files beside <case>.config.json,
the config.json they stand for under llama.cpp's rules (query_pre_attn_scalar = head_dim, Gemma 3's
pattern of six with a local base of 10000), which the goldens' configs are not — their twins are
compared with it, not with the golden's PyTorch numbers —, and gpt2 (tests/data/gpt2/tiny-f32:
Conv1D weights written [out, in], the causal-mask buffers dropped, as GPT2Model.modify_tensors
does). The metadata holds the keys the converter
writes for these sizes (general.architecture, <arch>.block_count, context_length,
embedding_length, feed_forward_length, attention.head_count(_kv), the norm's ε, rope.freq_base,
rope.dimension_count, tokenizer.ggml.eos_token_id).

and kquants.gguf: a random llama of d_model 256 (K-quants' rows are 256 values) whose weight
matrices are random blocks of every quantized type the core reads — token_embd Q6_K, attn_q Q4_K,
attn_k Q5_K, attn_v Q6_K, attn_output Q4_K, ffn_gate Q5_K, ffn_up Q8_0, ffn_down Q4_K, output Q4_0 —
with small scales (every weight within ±4), norms F32: test_gguf_checkpoint.cpp checks each
parameter the import made against the blocks' values placed by hand (beside it
kquants.dequantized.gguf, the same model with every weight the reference's float32 value, for the
JS tests of the wasm kernels); quants32.gguf: the same with
d_model 96 and the 32-value types (token_embd Q5_0, attn_q Q4_1, attn_k Q5_1, attn_v Q8_0,
attn_output Q4_0, ffn_gate Q5_0, ffn_up Q4_1, ffn_down Q5_1, output Q4_0: llama.cpp's Q4_K_M
fallbacks for rows that are no whole 256-value block);

qwen2-1.5b-q4_k_m.head.gguf: the first bytes (header and metadata, no data) of a Qwen2.5-1.5B-
shaped Q4_K_M file (Q4_K matrices, Q6_K for v, ffn_down and the embedding): 1.5 B parameters, which
the import now keeps in 1.2 × its file's bytes or less, and qwen2-7b-q4_k_m.head.gguf, a Qwen2.5-7B-
shaped one, too large for the tab even quantized;

and tests/data/malformed-gguf/: GGUF files loadCheckpoint must refuse, each a variation of
llama-f32.gguf, with expected.json mapping each file to a part of the message it must give
(written here by hand, from what the refusal must name).

Deterministic; needs numpy, and torch for llama3's factors (the converter's float32 arithmetic).
The GGUF writer and the reference dequantization are
make-gguf-golden.py's.
"""

import importlib.util
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import _read_arrays, _write_file  # noqa: E402

_spec = importlib.util.spec_from_file_location("gguf_golden", os.path.join(HERE, "make-gguf-golden.py"))
gguf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gguf)

gguf.GGML_TYPES["IQ4_NL"] = (20, 32, 18)  # ggml.h: refused by the core, for a test

ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "gguf")


def read_safetensors(path):
    """A golden checkpoint's tensors as numpy arrays (F32 and F64 as stored; the integer and BOOL
    buffers some files keep, which GGUF drops, as stored too)."""
    arrays, metadata = _read_arrays(path, {"F32": "<f4", "F64": "<f8", "U8": "u1", "BOOL": "u1",
                                           "I32": "<i4", "I64": "<i8"})
    return {name: a for name, (a, _) in arrays.items()}, metadata


CONV1D_WEIGHTS = (".c_attn.weight", ".c_proj.weight", ".c_fc.weight")  # GPT-2's, stored [in, out]


def permute(w, n_head, n_head_kv):
    """convert_hf_to_gguf.py's LlamaModel.permute: each head's rows [2, head_dim / 2] swapped to
    [head_dim / 2, 2] (the halves rotate-half pairs interleaved, as llama.cpp's RoPE reads them)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def quantize_q8_0(x):
    """ggml's quantize_row_q8_0_ref in float32: per 32 values d = amax / 127, q = roundf(x / d)."""
    blocks = x.astype(np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
    v = blocks * inv[:, None]
    q = np.trunc(v + np.copysign(np.float32(0.5), v)).astype(np.int8)  # roundf: half away from 0
    out = np.zeros(len(blocks), gguf.Q8_0)
    out["d"] = d.astype(np.float16).view(np.uint16)
    out["qs"] = q
    return out.tobytes()


def llama_shaped(config, tensors, arch, permuted):
    """[(gguf name, hf name, array as GGUF stores it)] and the metadata of a Llama-shaped case."""
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    out = [("token_embd.weight", "model.embed_tokens.weight")]
    for i in range(config["num_hidden_layers"]):
        m, b = f"model.layers.{i}.", f"blk.{i}."
        out += [(b + "attn_norm.weight", m + "input_layernorm.weight")]
        for g, h in (("attn_q", "q_proj"), ("attn_k", "k_proj"), ("attn_v", "v_proj"),
                     ("attn_output", "o_proj")):
            for part in ("weight", "bias"):
                out += [(f"{b}{g}.{part}", f"{m}self_attn.{h}.{part}")]
        out += [(b + "attn_q_norm.weight", m + "self_attn.q_norm.weight"),
                (b + "attn_k_norm.weight", m + "self_attn.k_norm.weight")]
        out += [(b + "ffn_norm.weight", m + "post_attention_layernorm.weight")]
        for g, h in (("ffn_gate", "gate_proj"), ("ffn_up", "up_proj"), ("ffn_down", "down_proj")):
            out += [(f"{b}{g}.weight", f"{m}mlp.{h}.weight")]
    out += [("output_norm.weight", "model.norm.weight"), ("output.weight", "lm_head.weight")]
    stored = []
    for g, h in out:
        if h not in tensors:
            continue
        a = tensors[h]
        if permuted and ".attn_q." in g:
            a = permute(a, heads, heads)
        if permuted and ".attn_k." in g:
            a = permute(a, heads, kv_heads)
        stored.append((g, h, a))
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    metadata = [
        ("general.architecture", gguf.STRING, arch),
        (f"{arch}.block_count", gguf.U32, config["num_hidden_layers"]),
        (f"{arch}.context_length", gguf.U32, config["max_position_embeddings"]),
        (f"{arch}.embedding_length", gguf.U32, config["hidden_size"]),
        (f"{arch}.feed_forward_length", gguf.U32, config["intermediate_size"]),
        (f"{arch}.attention.head_count", gguf.U32, heads),
        (f"{arch}.attention.head_count_kv", gguf.U32, kv_heads),
        (f"{arch}.rope.freq_base", gguf.F32, config["rope_theta"]),
        (f"{arch}.attention.layer_norm_rms_epsilon", gguf.F32, config["rms_norm_eps"]),
        (f"{arch}.rope.dimension_count", gguf.U32, head_dim),
        ("tokenizer.ggml.eos_token_id", gguf.U32, config["eos_token_id"]),
    ]
    if "head_dim" in config:  # the converter writes it when config.json has it
        metadata += [(f"{arch}.attention.key_length", gguf.U32, head_dim),
                     (f"{arch}.attention.value_length", gguf.U32, head_dim)]
    return stored, metadata


def phi3(config, tensors):
    """Phi3MiniModel's names: the fused qkv_proj and gate_up_proj as attn_qkv and ffn_up, as stored."""
    heads = config["num_attention_heads"]
    out = [("token_embd.weight", "model.embed_tokens.weight")]
    for i in range(config["num_hidden_layers"]):
        m, b = f"model.layers.{i}.", f"blk.{i}."
        out += [(b + "attn_norm.weight", m + "input_layernorm.weight"),
                (b + "attn_qkv.weight", m + "self_attn.qkv_proj.weight"),
                (b + "attn_output.weight", m + "self_attn.o_proj.weight"),
                (b + "ffn_norm.weight", m + "post_attention_layernorm.weight"),
                (b + "ffn_up.weight", m + "mlp.gate_up_proj.weight"),
                (b + "ffn_down.weight", m + "mlp.down_proj.weight")]
    out += [("output_norm.weight", "model.norm.weight"), ("output.weight", "lm_head.weight")]
    stored = [(g, h, tensors[h]) for g, h in out]
    metadata = [
        ("general.architecture", gguf.STRING, "phi3"),
        ("phi3.context_length", gguf.U32, config["max_position_embeddings"]),
        ("phi3.rope.scaling.original_context_length", gguf.U32, config["original_max_position_embeddings"]),
        ("phi3.embedding_length", gguf.U32, config["hidden_size"]),
        ("phi3.feed_forward_length", gguf.U32, config["intermediate_size"]),
        ("phi3.block_count", gguf.U32, config["num_hidden_layers"]),
        ("phi3.attention.head_count", gguf.U32, heads),
        ("phi3.attention.head_count_kv", gguf.U32, config["num_key_value_heads"]),
        ("phi3.attention.layer_norm_rms_epsilon", gguf.F32, config["rms_norm_eps"]),
        ("phi3.rope.dimension_count", gguf.U32, config["hidden_size"] // heads),
        ("phi3.rope.freq_base", gguf.F32, config["rope_theta"]),
        ("phi3.attention.sliding_window", gguf.U32, config["sliding_window"] or 0),
        ("tokenizer.ggml.eos_token_id", gguf.U32, config["eos_token_id"]),
    ]
    return stored, metadata


def layer_names(layers, prefix, table):
    """(GGUF name, checkpoint name) of each layer's weight and bias for table's (GGUF stem,
    checkpoint stem) pairs: blk.{i}.<stem>.weight ← <prefix with i><stem>.weight, and the bias."""
    return [(f"blk.{i}.{g}.{part}", f"{prefix.format(i=i)}{name}.{part}")
            for i in range(layers) for g, name in table for part in ("weight", "bias")]


def gpt2(config, tensors):
    out = [("token_embd.weight", "wte.weight"), ("position_embd.weight", "wpe.weight")]
    out += layer_names(config["n_layer"], "h.{i}.", (
        ("attn_norm", "ln_1"), ("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"),
        ("ffn_norm", "ln_2"), ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")))
    out += [("output_norm.weight", "ln_f.weight"), ("output_norm.bias", "ln_f.bias")]
    # lm_head.weight (a copy of wte) as output.weight, as older versions of the converter wrote it
    out += [("output.weight", "lm_head.weight")]
    stored = []
    for g, name in out:
        key = name if name in tensors else "transformer." + name
        a = tensors[key]
        if name.endswith(CONV1D_WEIGHTS):
            a = a.T  # GPT2Model.modify_tensors: Conv1D [in, out] -> [out, in]
        stored.append((g, key, np.ascontiguousarray(a)))
    metadata = [
        ("general.architecture", gguf.STRING, "gpt2"),
        ("gpt2.block_count", gguf.U32, config["n_layer"]),
        ("gpt2.context_length", gguf.U32, config["n_ctx"]),
        ("gpt2.embedding_length", gguf.U32, config["n_embd"]),
        ("gpt2.feed_forward_length", gguf.U32, 4 * config["n_embd"]),
        ("gpt2.attention.head_count", gguf.U32, config["n_head"]),
        ("gpt2.attention.layer_norm_epsilon", gguf.F32, config["layer_norm_epsilon"]),
    ]
    return stored, metadata


def llama3_rope_factors(config):
    """rope_freqs.weight as convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors writes it for
    rope_type llama3: one factor per rotated pair, in its arithmetic (torch float32 frequencies,
    the wavelength and the blend computed on those float32 scalars), stored as float32. The
    converter reads original_max_position_embeddings from config.json's top level, 8192 when
    absent (Llama 3.1's and 3.2's value, which their config.json gives inside rope_scaling); this
    tiny case's 32 is rope_scaling's, so the file stands for the same model as its config.json."""
    import math
    import torch
    scaling = config["rope_scaling"]
    assert scaling["rope_type"] == "llama3"
    base = config.get("rope_theta", 10000.0)
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor = scaling.get("factor", 8.0)
    low_freq_factor = scaling.get("low_freq_factor", 1.0)
    high_freq_factor = scaling.get("high_freq_factor", 4.0)
    old_context_len = config.get("original_max_position_embeddings",
                                 scaling.get("original_max_position_embeddings", 8192))
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    rope_factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            rope_factors.append(1)
        elif wavelen > low_freq_wavelen:
            rope_factors.append(factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            rope_factors.append(1 / ((1 - smooth) / factor + smooth))
    factors = torch.tensor(rope_factors, dtype=torch.float32).numpy()
    # the three regions are all present in this case: a factor of 1, `factor`, and blends between
    assert factors.min() == 1 and factors.max() == factor and len(set(factors.tolist())) > 2
    return factors


def gpt_neox(config, tensors):
    """GPTNeoXModel's names and layout: query_key_value's per-head [heads, 3, head_dim] rows
    regrouped to [q | k | v] (modify_tensors), rotary_pct as rope.dimension_count, the residual's
    form as use_parallel_residual (set_gguf_parameters writes no rope.freq_base)."""
    heads, d = config["num_attention_heads"], config["hidden_size"]
    head_dim = d // heads
    out = [("token_embd.weight", "gpt_neox.embed_in.weight")]
    out += layer_names(config["num_hidden_layers"], "gpt_neox.layers.{i}.", (
        ("attn_norm", "input_layernorm"), ("attn_qkv", "attention.query_key_value"),
        ("attn_output", "attention.dense"), ("ffn_norm", "post_attention_layernorm"),
        ("ffn_up", "mlp.dense_h_to_4h"), ("ffn_down", "mlp.dense_4h_to_h")))
    out += [("output_norm.weight", "gpt_neox.final_layer_norm.weight"),
            ("output_norm.bias", "gpt_neox.final_layer_norm.bias"), ("output.weight", "embed_out.weight")]
    stored = []
    for g, h in out:
        a = tensors[h]
        if ".attn_qkv." in g:
            a = a.reshape(heads, 3, head_dim, *a.shape[1:])
            a = np.concatenate([a[:, j].reshape(-1, *a.shape[3:]) for j in range(3)], axis=0)
        stored.append((g, h, a))
    metadata = [
        ("general.architecture", gguf.STRING, "gptneox"),
        ("gptneox.context_length", gguf.U32, config["max_position_embeddings"]),
        ("gptneox.embedding_length", gguf.U32, d),
        ("gptneox.block_count", gguf.U32, config["num_hidden_layers"]),
        ("gptneox.feed_forward_length", gguf.U32, config["intermediate_size"]),
        ("gptneox.rope.dimension_count", gguf.U32, int(config["rotary_pct"] * head_dim)),
        ("gptneox.attention.head_count", gguf.U32, heads),
        ("gptneox.use_parallel_residual", gguf.BOOL, config.get("use_parallel_residual", True)),
        ("gptneox.attention.layer_norm_epsilon", gguf.F32, config["layer_norm_eps"]),
        ("tokenizer.ggml.eos_token_id", gguf.U32, config["eos_token_id"]),
    ]
    return stored, metadata


def gpt_neox_to_hf(name, values, config):
    """query_key_value's per-head order back from [q | k | v]."""
    if ".attn_qkv." not in name:
        return values
    heads = config["num_attention_heads"]
    rest = values.shape[1:]
    a = values.reshape(3, heads, -1, *rest)
    return np.stack([a[j] for j in range(3)], axis=1).reshape(values.shape)


def gemma(config, tensors, arch):
    """Gemma2Model's / Gemma3Model's names: the four norms as attn_norm, attn_post_norm, ffn_norm
    and ffn_post_norm, q/k norms (Gemma 3), every norm weight stored + 1 (modify_tensors adds 1 to
    each "norm.weight", in float32 here), no lm_head (tied); set_gguf_parameters' keys (Gemma 2:
    the soft-caps, no rope.freq_base; Gemma 3: rope.freq_base, a linear rope.scaling.type)."""
    out = [("token_embd.weight", "model.embed_tokens.weight")]
    for i in range(config["num_hidden_layers"]):
        m, b = f"model.layers.{i}.", f"blk.{i}."
        out += [(b + "attn_norm.weight", m + "input_layernorm.weight")]
        for g, h in (("attn_q", "q_proj"), ("attn_k", "k_proj"), ("attn_v", "v_proj"),
                     ("attn_output", "o_proj")):
            out += [(f"{b}{g}.weight", f"{m}self_attn.{h}.weight")]
        out += [(b + "attn_q_norm.weight", m + "self_attn.q_norm.weight"),
                (b + "attn_k_norm.weight", m + "self_attn.k_norm.weight"),
                (b + "attn_post_norm.weight", m + "post_attention_layernorm.weight"),
                (b + "ffn_norm.weight", m + "pre_feedforward_layernorm.weight")]
        for g, h in (("ffn_gate", "gate_proj"), ("ffn_up", "up_proj"), ("ffn_down", "down_proj")):
            out += [(f"{b}{g}.weight", f"{m}mlp.{h}.weight")]
        out += [(b + "ffn_post_norm.weight", m + "post_feedforward_layernorm.weight")]
    out += [("output_norm.weight", "model.norm.weight")]
    stored = []
    for g, h in out:
        if h not in tensors:
            continue
        a = tensors[h].astype(np.float32)
        if g.endswith("norm.weight"):
            # (1 + w) >= 0.5: stored - 1 is then exact in float32, and 1 + (stored - 1) = stored
            a = (a + np.float32(1)).astype(np.float32)
            assert a.min() >= 0.5, g
        stored.append((g, h, a))
    c = config
    metadata = [
        ("general.architecture", gguf.STRING, arch),
        (f"{arch}.context_length", gguf.U32, c["max_position_embeddings"]),
        (f"{arch}.embedding_length", gguf.U32, c["hidden_size"]),
        (f"{arch}.block_count", gguf.U32, c["num_hidden_layers"]),
        (f"{arch}.feed_forward_length", gguf.U32, c["intermediate_size"]),
        (f"{arch}.attention.head_count", gguf.U32, c["num_attention_heads"]),
        (f"{arch}.attention.head_count_kv", gguf.U32, c["num_key_value_heads"]),
        (f"{arch}.attention.layer_norm_rms_epsilon", gguf.F32, c["rms_norm_eps"]),
        (f"{arch}.attention.key_length", gguf.U32, c["head_dim"]),
        (f"{arch}.attention.value_length", gguf.U32, c["head_dim"]),
        (f"{arch}.attention.sliding_window", gguf.U32, c["sliding_window"]),
        ("tokenizer.ggml.eos_token_id", gguf.U32, c["eos_token_id"]),
    ]
    if arch == "gemma2":
        metadata += [("gemma2.attn_logit_softcapping", gguf.F32, c["attn_logit_softcapping"]),
                     ("gemma2.final_logit_softcapping", gguf.F32, c["final_logit_softcapping"])]
    else:
        metadata += [("gemma3.rope.freq_base", gguf.F32, c["rope_theta"])]
        if c.get("rope_scaling"):
            metadata += [("gemma3.rope.scaling.type", gguf.STRING, "linear"),
                         ("gemma3.rope.scaling.factor", gguf.F32, c["rope_scaling"]["factor"])]
    return stored, metadata


def gemma_to_hf(name, values, config):
    """The norm weight the GGUF model holds: stored - 1 (exact, as stored >= 0.5)."""
    return (values - np.float32(1)).astype(np.float32) if name.endswith("norm.weight") else values


def gguf_config(config, arch):
    """The config.json a Gemma GGUF file stands for under llama.cpp's rules: query_pre_attn_scalar
    = head_dim (llama.cpp scales the scores by 1/sqrt(n_embd_head_k) below 27B), Gemma 3's sliding
    layers every layer but each 6th (set_swa_pattern(6), local base 10000), float32 embeddings'
    scale (its graph multiplies by sqrtf(n_embd))."""
    c = dict(config)
    c["query_pre_attn_scalar"] = c["head_dim"]
    if arch == "gemma3":
        for key in ("layer_types", "_sliding_window_pattern"):
            c.pop(key, None)
        c["sliding_window_pattern"] = 6
        c["rope_local_base_freq"] = 10000.0
    c["torch_dtype"] = "float32"
    return c


def tiled_layers(config, tensors, layers):
    """A model of `layers` layers whose layer i is the checkpoint's layer i mod its count."""
    n = config["num_hidden_layers"]
    out = {k: v for k, v in tensors.items() if ".layers." not in k}
    for i in range(layers):
        for k, v in tensors.items():
            if k.startswith(f"model.layers.{i % n}."):
                out[k.replace(f"model.layers.{i % n}.", f"model.layers.{i}.", 1)] = v
    c = dict(config)
    c["num_hidden_layers"] = layers
    return c, out


def unpermuted(name, array, config):
    """The Hugging Face order of a stored llama q/k tensor (the permutation undone)."""
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    n = heads if ".attn_q." in name else kv_heads
    head_dim = array.shape[0] // n
    return (array.reshape(n, head_dim // 2, 2, *array.shape[1:]).swapaxes(1, 2)
            .reshape(array.shape))


def write_case(case, stored, metadata, config, permuted, kinds=("f32", "f16", "q8_0"), to_hf=None):
    """The case's GGUF files (`kinds`) and their .safetensors twins (to_hf(name, values, config):
    a stored tensor's values in the Hugging Face layout, as the GGUF model holds them)."""
    for kind in kinds:
        gguf_tensors, twin = [], []
        for g, h, a in stored:
            a = np.ascontiguousarray(a.astype(np.float32))
            if h is None:  # a tensor only GGUF has (rope_freqs.weight): F32 in every file
                gguf_tensors.append((g, "F32", list(reversed(a.shape)), a.astype("<f4").tobytes()))
                continue
            dims = list(reversed(a.shape))
            if kind == "f32" or a.ndim != 2:
                code, data, values = "F32", a.astype("<f4").tobytes(), a
            elif kind == "f16":
                code, data = "F16", a.astype("<f2").tobytes()
                values = a.astype(np.float16)
            else:
                code, data = "Q8_0", quantize_q8_0(a)
                values = gguf.dequantize("Q8_0", data).reshape(a.shape).astype(np.float32)
            gguf_tensors.append((g, code, dims, data))
            # the twin holds the Hugging Face layout: llama's q/k permutation undone, GPT-2's
            # Conv1D weights back to [in, out]
            if permuted and (".attn_q." in g or ".attn_k." in g):
                values = unpermuted(g, values, config)
            if h.endswith(CONV1D_WEIGHTS):
                values = values.T
            if to_hf is not None:
                values = to_hf(g, values, config)
            values = np.ascontiguousarray(values)
            twin_code = "F16" if values.dtype == np.float16 else "F32"
            twin.append((h, twin_code, values, values.astype("<f2" if twin_code == "F16" else "<f4").tobytes()))
        gguf.write_gguf(os.path.join(OUT, f"{case}-{kind}.gguf"), metadata, gguf_tensors)
        if kind == "f16":
            path = os.path.join(OUT, f"{case}-f16.safetensors")
        elif kind == "q8_0":
            path = os.path.join(OUT, f"{case}-q8_0.dequantized.safetensors")
        else:
            continue
        _write_file(path, [(h, code, a.shape, data) for h, code, a, data in twin],
                    {"format": "pt"}, metadata_first=True)


# Each refused file: (name, edit of (metadata, tensors) -> None, or bytes edit, the message part).
def refused_files(metadata, tensors):
    """The variations of llama-f32.gguf's metadata [(key, kind, value)] and tensors [(name, type,
    dims, bytes)] loadCheckpoint must refuse, with the part of the message each must give."""
    def meta(key, kind=None, value=None):  # replace, add (kind given) or drop (kind None) a key
        def edit(m, t):
            at = [i for i, (k, _, _) in enumerate(m) if k == key]
            if kind is None:
                del m[at[0]]
            elif at:
                m[at[0]] = (key, kind, value)
            else:
                m.append((key, kind, value))
        return edit

    def drop(name):
        def edit(m, t):
            t[:] = [x for x in t if x[0] != name]
        return edit

    def add(name, type_name, dims, data):
        def edit(m, t):
            t.append((name, type_name, dims, data))
        return edit

    def retype(name):  # stored as IQ4_NL (ggml type 20, 18 bytes per 32 values), not read
        def edit(m, t):
            for i, (n, _, dims, _) in enumerate(t):
                if n == name:
                    t[i] = (n, "IQ4_NL", dims, bytes(int(np.prod(dims)) // 32 * 18))
        return edit

    def nan(name):
        def edit(m, t):
            for i, (n, ty, dims, data) in enumerate(t):
                if n == name:
                    t[i] = (n, ty, dims, struct.pack("<f", float("nan")) + data[4:])
        return edit

    return [
        ("arch-gemma.gguf", meta("general.architecture", gguf.STRING, "gemma"),
         "general.architecture is 'gemma', which is not read from GGUF files; supported: "
         "gpt2, llama, qwen2, gptneox, qwen3, gemma2, gemma3, phi3"),
        ("arch-bert.gguf", meta("general.architecture", gguf.STRING, "bert"),
         "general.architecture is 'bert'"),
        ("no-architecture.gguf", meta("general.architecture"), "has no general.architecture"),
        ("no-block-count.gguf", meta("llama.block_count"), "metadata has no llama.block_count"),
        ("rope-scaling.gguf", meta("llama.rope.scaling.type", gguf.STRING, "linear"),
         "llama.rope.scaling.type is 'linear'; supported: none"),
        # Llama 3's RoPE factors (head_dim 16: 8 pairs): zeros, a wrong length, F16
        ("rope-freqs.gguf", add("rope_freqs.weight", "F32", [8], bytes(32)),
         "rope_freqs.weight holds 0 (factor 0); RoPE's factors must be finite and above 0"),
        ("rope-freqs-length.gguf",
         add("rope_freqs.weight", "F32", [6], np.ones(6, "<f4").tobytes()),
         "rope_freqs.weight is F32 [6]; supported: F32 [8] (one factor per rotated pair"),
        ("rope-freqs-f16.gguf",
         add("rope_freqs.weight", "F16", [8], np.ones(8, "<f2").tobytes()),
         "rope_freqs.weight is F16 [8]; supported: F32 [8]"),
        ("rope-factors-long.gguf",
         add("rope_factors_long.weight", "F32", [8], np.ones(8, "<f4").tobytes()),
         "rope_factors_long.weight (Phi-3's LongRoPE as llama.cpp stores it), which is not read"),
        ("vision.gguf", add("v.blk.0.attn_q.weight", "F32", [8], bytes(32)),
         "'v.blk.0.attn_q.weight', a vision tower's or projector's tensor; only text models"),
        ("partial-rope.gguf", meta("llama.rope.dimension_count", gguf.U32, 8),
         "llama.rope.dimension_count is 8; supported: 16"),
        ("iq4_nl.gguf", retype("blk.0.ffn_up.weight"),
         "'blk.0.ffn_up.weight' is IQ4_NL; supported in GGUF files: F32, F16, BF16, Q8_0, Q4_0, "
         "Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K"),
        ("no-ffn-down.gguf", drop("blk.1.ffn_down.weight"), "blk.1.ffn_down.weight"),
        ("feed-forward-length.gguf", meta("llama.feed_forward_length", gguf.U32, 80),
         "has shape [96, 64]"),
        ("extra-tensor.gguf", add("blk.0.attn_sinks.weight", "F32", [8], bytes(32)),
         "'blk.0.attn_sinks.weight' [8] is not a Llama tensor"),
        ("block-count.gguf", meta("llama.block_count", gguf.U32, 1),
         "but the checkpoint has 2 layers"),
        ("nan.gguf", nan("blk.0.attn_v.weight"),
         "'blk.0.attn_v.weight' holds a non-finite value"),
        ("string-head-count.gguf", meta("llama.attention.head_count", gguf.STRING, "4"),
         "llama.attention.head_count is string; a number was expected"),
    ]


def write_refused(config, stored):
    """tests/data/malformed-gguf/: refused_files' files, three hostile headers and a truncated
    file, and expected.json."""
    folder = os.path.join(DATA, "malformed-gguf")
    os.makedirs(folder, exist_ok=True)
    _, metadata = llama_shaped(config, {h: a for _, h, a in stored}, "llama", True)
    base = [(g, "F32", list(reversed(a.shape)), np.ascontiguousarray(a, "<f4").tobytes())
            for g, _, a in stored]
    expected = {}
    for name, edit, message in refused_files(metadata, base):
        m, t = list(metadata), list(base)
        edit(m, t)
        gguf.write_gguf(os.path.join(folder, name), m, t)
        expected[name] = message
    good = os.path.join(OUT, "llama-f32.gguf")
    with open(good, "rb") as f:
        data = f.read()
    hostile = {
        # a tensor count of 2^63
        "tensor-count.gguf": (data[:8] + struct.pack("<Q", 1 << 63) + data[16:],
                              "GGUF: the header claims 9223372036854775808 tensors"),
        # general.architecture's string length past the file (1 MB, within the string limit)
        "string-length.gguf": (data[:24 + 8 + len("general.architecture") + 4] +
                               struct.pack("<Q", 1 << 20) +
                               data[24 + 8 + len("general.architecture") + 4 + 8:],
                               "runs past the end of the file"),
        # the data cut short: the last tensor runs past the end of the file
        "truncated.gguf": (data[:len(data) - 4096], "runs past the end of the data section"),
    }
    for name, (content, message) in hostile.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
        expected[name] = message
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, ensure_ascii=False)
        f.write("\n")


def random_blocks(rng, type_name, count):
    """count values of random blocks of type_name with small scales (|value| <= 4)."""
    halves = lambda low, high, n: rng.uniform(low, high, n).astype(np.float16).view(np.uint16)
    if type_name == "Q8_0":
        b = np.zeros(count // 32, gguf.Q8_0)
        b["d"] = halves(1e-3, 2e-2, len(b))
        b["qs"] = rng.integers(-128, 128, (len(b), 32))
    elif type_name == "Q4_0":
        b = np.zeros(count // 32, gguf.Q4_0)
        b["d"] = halves(1e-3, 0.3, len(b))
        b["qs"] = rng.integers(0, 256, (len(b), 16))
    elif type_name in ("Q4_1", "Q5_0", "Q5_1"):
        b = np.zeros(count // 32, {"Q4_1": gguf.Q4_1, "Q5_0": gguf.Q5_0, "Q5_1": gguf.Q5_1}[type_name])
        b["d"] = halves(1e-3, 0.1, len(b))
        if "m" in b.dtype.names:
            b["m"] = halves(-1.0, 0.0, len(b))
        if "qh" in b.dtype.names:
            b["qh"] = rng.integers(0, 256, (len(b), 4))
        b["qs"] = rng.integers(0, 256, (len(b), 16))
    elif type_name in ("Q4_K", "Q5_K"):
        b = np.zeros(count // 256, gguf.Q4_K if type_name == "Q4_K" else gguf.Q5_K)
        b["d"] = halves(1e-4, 2e-3, len(b))
        b["dmin"] = halves(0, 2e-3, len(b))
        b["scales"] = rng.integers(0, 256, (len(b), 12))
        b["qs"] = rng.integers(0, 256, (len(b), 128))
        if type_name == "Q5_K":
            b["qh"] = rng.integers(0, 256, (len(b), 32))
    else:  # Q6_K
        b = np.zeros(count // 256, gguf.Q6_K)
        b["ql"] = rng.integers(0, 256, (len(b), 128))
        b["qh"] = rng.integers(0, 256, (len(b), 64))
        b["scales"] = rng.integers(-128, 128, (len(b), 16))
        b["d"] = halves(1e-5, 5e-4, len(b))
    data = b.tobytes()
    assert np.all(np.abs(gguf.dequantize(type_name, data)) <= 4)
    return data


def write_kquants():
    write_quantized_llama("kquants.gguf", np.random.default_rng(34), 256, 256, 32, 4, 2, [
        ("token_embd.weight", "Q6_K"), ("blk.0.attn_q.weight", "Q4_K"),
        ("blk.0.attn_k.weight", "Q5_K"), ("blk.0.attn_v.weight", "Q6_K"),
        ("blk.0.attn_output.weight", "Q4_K"), ("blk.0.ffn_gate.weight", "Q5_K"),
        ("blk.0.ffn_up.weight", "Q8_0"), ("blk.0.ffn_down.weight", "Q4_K"),
        ("output.weight", "Q4_0")])


def write_quants32():
    """quants32.gguf: as kquants.gguf with rows of 96 values (no whole 256-value block: what
    llama.cpp's Q4_K_M falls back to for such rows, as for SmolLM2's 576) in the 32-value types."""
    write_quantized_llama("quants32.gguf", np.random.default_rng(32), 96, 160, 40, 4, 2, [
        ("token_embd.weight", "Q5_0"), ("blk.0.attn_q.weight", "Q4_1"),
        ("blk.0.attn_k.weight", "Q5_1"), ("blk.0.attn_v.weight", "Q8_0"),
        ("blk.0.attn_output.weight", "Q4_0"), ("blk.0.ffn_gate.weight", "Q5_0"),
        ("blk.0.ffn_up.weight", "Q4_1"), ("blk.0.ffn_down.weight", "Q5_1"),
        ("output.weight", "Q4_0")])


def write_quantized_llama(file, rng, d, ff, vocab, heads, kv_heads, types):
    types = dict(types)
    head_dim = d // heads
    tensors = [("token_embd.weight", [vocab, d]), ("blk.0.attn_norm.weight", [d]),
               ("blk.0.attn_q.weight", [d, d]), ("blk.0.attn_k.weight", [kv_heads * head_dim, d]),
               ("blk.0.attn_v.weight", [kv_heads * head_dim, d]),
               ("blk.0.attn_output.weight", [d, d]), ("blk.0.ffn_norm.weight", [d]),
               ("blk.0.ffn_gate.weight", [ff, d]), ("blk.0.ffn_up.weight", [ff, d]),
               ("blk.0.ffn_down.weight", [d, ff]), ("output_norm.weight", [d]),
               ("output.weight", [vocab, d])]
    tensors = [(name, types.get(name, "F32"), shape) for name, shape in tensors]
    written = []
    for name, type_name, shape in tensors:
        count = int(np.prod(shape))
        if type_name == "F32":
            data = rng.uniform(0.5, 1.5, count).astype("<f4").tobytes()
        else:
            data = random_blocks(rng, type_name, count)
        written.append((name, type_name, list(reversed(shape)), data))
    metadata = [
        ("general.architecture", gguf.STRING, "llama"),
        ("llama.block_count", gguf.U32, 1), ("llama.context_length", gguf.U32, 64),
        ("llama.embedding_length", gguf.U32, d), ("llama.feed_forward_length", gguf.U32, ff),
        ("llama.attention.head_count", gguf.U32, heads), ("llama.attention.head_count_kv", gguf.U32, kv_heads),
        ("llama.rope.freq_base", gguf.F32, 10000.0), ("llama.attention.layer_norm_rms_epsilon", gguf.F32, 1e-5),
    ]
    gguf.write_gguf(os.path.join(OUT, file), metadata, written)
    # its twin of the same values in float32 (the reference's dequantization, exact in float32):
    # the wasm kernels over the kept blocks are checked against it from JS
    floats = [(name, "F32", shape, data if type_name == "F32" else
               np.asarray(gguf.dequantize(type_name, data), "<f4").tobytes())
              for name, type_name, shape, data in written]
    gguf.write_gguf(os.path.join(OUT, file.replace(".gguf", ".dequantized.gguf")), metadata, floats)


def write_large_head(file="qwen2-1.5b-q4_k_m.head.gguf", d=1536, ff=8960, vocab=151936, heads=12,
                     kv_heads=2, layers=28):
    """The header of a Qwen2.5-shaped Q4_K_M file, no data: qwen2-1.5b-q4_k_m.head.gguf (1.5 B
    parameters), qwen2-7b-q4_k_m.head.gguf (7.6 B: too large for the tab even quantized)."""
    kv = kv_heads * d // heads
    tensors = [("token_embd.weight", "Q6_K", [vocab, d])]
    for i in range(layers):
        b = f"blk.{i}."
        tensors += [(b + "attn_norm.weight", "F32", [d]), (b + "attn_q.weight", "Q4_K", [d, d]),
                    (b + "attn_q.bias", "F32", [d]), (b + "attn_k.weight", "Q4_K", [kv, d]),
                    (b + "attn_k.bias", "F32", [kv]), (b + "attn_v.weight", "Q6_K", [kv, d]),
                    (b + "attn_v.bias", "F32", [kv]), (b + "attn_output.weight", "Q4_K", [d, d]),
                    (b + "ffn_norm.weight", "F32", [d]), (b + "ffn_gate.weight", "Q4_K", [ff, d]),
                    (b + "ffn_up.weight", "Q4_K", [ff, d]), (b + "ffn_down.weight", "Q6_K", [d, ff])]
    tensors += [("output_norm.weight", "F32", [d])]
    metadata = [
        ("general.architecture", gguf.STRING, "qwen2"),
        ("qwen2.block_count", gguf.U32, layers), ("qwen2.context_length", gguf.U32, 32768),
        ("qwen2.embedding_length", gguf.U32, d), ("qwen2.feed_forward_length", gguf.U32, ff),
        ("qwen2.attention.head_count", gguf.U32, heads), ("qwen2.attention.head_count_kv", gguf.U32, kv_heads),
        ("qwen2.rope.freq_base", gguf.F32, 1000000.0),
        ("qwen2.attention.layer_norm_rms_epsilon", gguf.F32, 1e-6),
    ]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf.gguf_string(key) + struct.pack("<I", kind) + gguf.gguf_value(kind, value)
    offset = 0
    for name, type_name, shape in tensors:
        type_id, block_values, block_bytes = gguf.GGML_TYPES[type_name]
        dims = list(reversed(shape))
        out += gguf.gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", x) for x in dims) + struct.pack("<IQ", type_id, offset)
        offset += -(-int(np.prod(shape)) // block_values * block_bytes // 32) * 32
    out = gguf.pad(out, 32)
    with open(os.path.join(OUT, file), "wb") as f:
        f.write(out)
    return len(out) + offset  # the whole file's size


def main():
    os.makedirs(OUT, exist_ok=True)
    write_kquants()
    write_quants32()
    print("qwen2-1.5b-q4_k_m.head.gguf: the whole file would be", write_large_head(), "bytes")
    print("qwen2-7b-q4_k_m.head.gguf: the whole file would be",
          write_large_head("qwen2-7b-q4_k_m.head.gguf", 3584, 18944, 152064, 28, 4, 28), "bytes")
    for case, folder, name, arch, permuted in (("llama", "llama", "llama-f32", "llama", True),
                                               ("llama3", "llama", "llama3-f32", "llama", True),
                                               ("qwen2", "llama", "qwen2-f32", "qwen2", False),
                                               ("qwen3", "families", "qwen3-f32", "qwen3", False),
                                               ("phi3", "families", "phi3-f32", "phi3", False),
                                               ("pythia", "families", "pythia-f32", "gptneox", False),
                                               ("gemma2", "families", "gemma2-f32", "gemma2", False),
                                               ("gemma3", "families", "gemma3-pattern-f32", "gemma3",
                                                False),
                                               ("gpt2", "gpt2", "tiny-f32", "gpt2", False)):
        with open(os.path.join(DATA, folder, name + ".config.json")) as f:
            config = json.load(f)
        tensors, _ = read_safetensors(os.path.join(DATA, folder, name + ".safetensors"))
        to_hf, kinds = None, ("f32", "f16", "q8_0")
        if case == "gemma3":
            # six layers (the golden's three twice), so that the sixth is global: Gemma 3's
            # pattern in llama.cpp is fixed at 6 (layers 0-4 slide)
            config, tensors = tiled_layers(config, tensors, 6)
        if arch in ("gemma2", "gemma3"):
            config = gguf_config(config, arch)
            with open(os.path.join(OUT, f"{case}.config.json"), "w") as f:
                json.dump(config, f, indent=2, sort_keys=True)
                f.write("\n")
        if arch == "gpt2":
            stored, metadata = gpt2(config, tensors)
        elif arch == "gptneox":
            stored, metadata = gpt_neox(config, tensors)
            to_hf = gpt_neox_to_hf
        elif arch in ("gemma2", "gemma3"):
            stored, metadata = gemma(config, tensors, arch)
            to_hf = gemma_to_hf
            # rows of 48 values (gemma2's hidden size) are no whole Q8_0 blocks; gemma3's six
            # layers in F16 only (with its F16 twin), to keep the files small
            kinds = ("f32", "f16") if arch == "gemma2" else ("f16",)
        elif arch == "phi3":
            stored, metadata = phi3(config, tensors)
        else:
            stored, metadata = llama_shaped(config, tensors, arch, permuted)
        if case == "llama3":
            stored.append(("rope_freqs.weight", None, llama3_rope_factors(config)))
        # every tensor of the checkpoint but GPT-2's causal-mask buffers is written
        written = {h for _, h, _ in stored if h is not None}
        left = sorted(n for n in tensors if n not in written and not n.endswith((
            "attn.bias", "masked_bias", "attention.bias", "rotary_emb.inv_freq")))
        assert not left, f"{case}: tensors not written: {left}"
        # qwen3's rows of 48 values and phi3's ffn_down rows of 112 are no whole number of Q8_0
        # blocks: F32 and F16 only (llama3: the RoPE factors are its point)
        if case in ("qwen3", "phi3", "llama3"):
            kinds = ("f32", "f16")
        write_case(case, stored, metadata, config, permuted, kinds, to_hf)
        if case == "llama":
            write_refused(config, stored)
    print(f"wrote {OUT}/{{llama,llama3,qwen2,qwen3,phi3,pythia,gemma2,gemma3,gpt2}}-{{f32,f16,q8_0}}.gguf "
          "and their .safetensors twins, "
          "kquants.gguf and tests/data/malformed-gguf")


if __name__ == "__main__":
    main()
