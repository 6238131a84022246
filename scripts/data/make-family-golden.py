#!/usr/bin/env python3
"""Golden data for six more Hugging Face families: tests/data/families/<case>.safetensors,
.config.json, .expected.safetensors, for `gpt_neox` (Pythia), `qwen3`, `gemma3_text`, `gemma2`,
`olmo2` and `phi3`; and tests/data/families/published/cards.json (parameter counts of the
published configs saved beside it).

Each case is a tiny checkpoint with random weights written as the family's `model.safetensors`
really is: its Hugging Face tensor names and layouts (nn.Linear weights [out, in]; GPT-NeoX's fused
`query_key_value` rows grouped per head as [heads, 3, head_dim]; Phi-3's fused `qkv_proj` rows
[q | k | v] and `gate_up_proj` rows [gate | up]), the header's tensors sorted by name, metadata
{"format": "pt"}, every weight in the case's dtype (F32, BF16 or F16); the Pythia cases also hold
the buffers older GPT-NeoX files carry (`attention.bias` U8 or BOOL [1, 1, ctx, ctx],
`attention.masked_bias`, `attention.rotary_emb.inv_freq`, which a loader ignores). Next to it, its
config.json (the keys transformers' config class writes for that family, in the version the
published checkpoints were saved with, sorted, indent 2) and <case>.expected.safetensors, all F64:
  ids                  the token ids of one sequence of N = 12 tokens (F64 holding integers)
  logits32 / logits64  the logits [n, vocab] of the reference below in float32 and in float64
  attn32.<l> / attn64.<l>  layer l's attention weights [heads, n, n] of the QUERY heads (after
                       repeat_kv: what transformers returns with output_attentions=True, eager)
and metadata naming the family, case, sizes, dtype, every layer's window ("none" when full) and
RoPE base, the rotary width, the attention scale, the embedding scale and the soft-caps. "32" is
the reference run in float32 as transformers runs a float32 model; "64" is the same stored
weights cast to float64 and the same code run in float64 throughout (inv_freq, cos/sin, norms and
softmax included). A BF16/F16 case's expected values are computed from the weights as stored
(rounded, then upcast: the forward reads them back from the written file), never in bf16/f16
arithmetic; the one constant that depends on the model's dtype is Gemma's embedding normalizer
√hidden, which transformers rounds to the model's dtype (Gemma2Model: torch.tensor(hidden**0.5,
dtype=hidden_states.dtype); Gemma3TextScaledWordEmbedding: embed_scale.to(weight.dtype)): it is
rounded to the checkpoint's torch_dtype (bf16 for the BF16 cases, 6.9375 for √48) in both runs.

The reference follows transformers' eager code line by line (no `transformers` package here;
read from huggingface/transformers, src/transformers/, at these commits: models/gpt_neox/
modular_gpt_neox.py 00dcc6dd (4.53-era; configuration_gpt_neox.py 008e5743 for the newest
rope_parameters handling), models/qwen3/modeling_qwen3.py 000c33fd, models/gemma3/
modular_gemma3.py 00332048 (4.56-era: layer_types, rotary_emb_local) and modeling_gemma3.py
0018aa64 (per-layer-type rope_parameters: the same numbers), models/gemma2/modeling_gemma2.py
006e8693 (4.47) and configuration_gemma2.py 008e5743 (layer_types), models/olmo2/
modeling_olmo2.py 000c33fd, models/phi3/modeling_phi3.py 00d4b3d2; masking_utils.py as cited):
  shared (every family below copies these from modeling_llama.py; hf_eager.py holds them):
    rotate_half, apply_rotary_pos_emb   q·cos + rotate_half(q)·sin; GPT-NeoX's and Phi-3's
                              version rotates only the first cos.shape[-1] dims and concatenates
                              the rest unchanged (partial rotary)
    RotaryEmbedding.forward   inv_freq[None, :, None] @ position_ids[:, None, :] in float32 with
                              autocast off, emb = cat(freqs, freqs), cos/sin × attention_scaling,
                              cast to the activations' dtype (OLMo 2 keeps them float32 and casts
                              q/k back after the rotation)
    repeat_kv, eager_attention_forward  (q @ repeat_kv(k)ᵀ) × scaling [then Gemma's soft-cap
                              tanh(s / cap) × cap] + mask; softmax(dim=-1, dtype=float32)
                              .to(q.dtype); @ repeat_kv(v)
  modeling_rope_utils.py      _compute_default_rope_parameters: dim = int(head_dim ×
                              partial_rotary_factor), inv_freq = 1 / base ** (arange(0, dim, 2,
                              int64).float() / dim); _compute_linear_scaling_rope_parameters:
                              inv_freq / factor (attention factor 1)
  masking_utils.py            causal_mask_function (kv_idx <= q_idx), sliding_window_overlay
                              (kv_idx > q_idx − sliding_window: a window of W keys, the query's own
                              included), eager mask: where(mask, 0, finfo(dtype).min) added
  models/gpt_neox/            GPTNeoXAttention: qkv = query_key_value(x).view(..., heads, 3·hd)
                              .transpose(1, 2).chunk(3, -1); rotary_ndims = int(hd × rotary_pct);
                              scaling hd**-0.5; GPTNeoXLayer: parallel x + attn(ln1(x)) +
                              mlp(ln2(x)) or sequential; nn.LayerNorm with biases; GPTNeoXMLP
                              dense_4h_to_h(gelu(dense_h_to_4h)), gelu exact (erf); embed_in,
                              final_layer_norm, embed_out (untied). configuration_gpt_neox.py:
                              partial_rotary_factor = rotary_pct, rope_theta = rotary_emb_base
  models/qwen3/               Qwen3Attention: q_norm / k_norm = Qwen3RMSNorm(head_dim) on
                              q_proj(x).view(..., -1, head_dim) before the transpose and RoPE;
                              head_dim from config; Qwen3RMSNorm as LlamaRMSNorm (weight ×
                              x.to(input_dtype)); Qwen3MLP down(silu(gate) × up)
  models/gemma3/              Gemma3RMSNorm (= Gemma2RMSNorm): x.float() normalised, × (1 +
                              weight.float()), .type_as(x); Gemma3TextScaledWordEmbedding;
                              Gemma3Attention: q_norm/k_norm(head_dim) after the transpose, scaling
                              query_pre_attn_scalar**-0.5, sliding_window on "sliding_attention"
                              layers, no softcap passed (attn_logit_softcapping is never read;
                              Gemma3ForCausalLM keeps Gemma 2's final cap); Gemma3DecoderLayer:
                              x + post_attention_layernorm(attn(input_layernorm(x))); x +
                              post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x)));
                              Gemma3TextModel: rotary_emb (rope_theta, rope_scaling) for full
                              layers, rotary_emb_local (rope_local_base_freq, rope_type default)
                              for sliding ones; MLP gelu_pytorch_tanh. configuration_gemma3.py: layer_types, else
                              "sliding_attention" if (i + 1) % sliding_window_pattern else "full"
  models/gemma2/              as Gemma 3 without q/k norms and with one RoPE (rope_theta);
                              softcap = attn_logit_softcapping in eager_attention_forward; logits
                              = tanh(logits / final_logit_softcapping) × final_logit_softcapping;
                              Gemma2Config: layer_types "sliding_attention" if (i + 1) % 2 else
                              "full_attention" (older: sliding when not layer_idx % 2 — the same)
  models/olmo2/               Olmo2Attention: q_norm = Olmo2RMSNorm(heads·head_dim), k_norm =
                              Olmo2RMSNorm(kv_heads·head_dim) on the whole projection before the
                              head split; Olmo2RMSNorm: (weight × x).to(input_dtype);
                              Olmo2DecoderLayer: x + post_attention_layernorm(attn(x)); x +
                              post_feedforward_layernorm(mlp(x)) (no norm before a sublayer)
  models/phi3/                Phi3Attention: qkv_proj rows [q (heads·hd) | k (kv·hd) | v (kv·hd)];
                              Phi3MLP: gate, up = gate_up_proj(x).chunk(2, -1); down(up ×
                              silu(gate)); Phi3Model: create_sliding_window_causal_mask when
                              config.sliding_window is not None (the eager mask applies it, every
                              layer; eager_attention_forward ignores its sliding_window argument)
The float64 run departs from transformers in one way only, on purpose: transformers would upcast
norms, RoPE and softmax to float32 (Gemma's x.float()) even in a float64 model; here they stay
float64.

Checks (a failing one stops the script before the case's expected file is written): the file
reads back as written (F32 bit for bit); float32 and float64 agree; a second, independent float64
implementation (per-head, per-row loops over Python floats, heads sliced out of the weight rows by
index arithmetic, explicit pair rotations, explicit windows and caps) gives the same logits and
attention to 1e-12; the rotate_half RoPE (partial where the family has it) equals rotating the
pairs (x_i, x_{i+rot/2}) by t·θ_i and leaves the dims past rot unchanged; every causal / sliding
mask zeroes exactly the keys j > i and j <= i − window; every row sums to 1; the attention is not
degenerate (mean top weight of rows with >= 4 keys in (0.3, 0.9), none >= 0.9999); and every
switch the case covers changes the float64 logits by more than 100× the float32 error if a loader
got it wrong (e.g. the other residual form, full instead of partial rotary, [q; k; v] blocks
instead of per-head groups, no soft-caps, the other layer pattern, an unrounded normalizer).

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-family-golden.py
(deterministic: a second run writes the same bytes).
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_case  # noqa: E402
from golden_case import (draw_mlp, draw_qkv, llama_loops, llama_shaped_weights,  # noqa: E402
                         loop_attention, loop_inv_freq, loop_lin, loop_rms, loop_rotate,
                         loop_silu, mlp_draws, qkv_draws, randn_factory, rotated_heads,
                         split_heads)
from hf_eager import (apply_partial_rotary_pos_emb, apply_rotary_pos_emb,  # noqa: E402
                      attention_output, eager_mask, embed, gated_mlp, position_embeddings,
                      rms_norm, rotate_half)
from safetensors_io import read_checkpoint, read_header, write_checkpoint  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "families")
PUBLISHED = os.path.join(OUT, "published")
N = 12  # tokens per sequence
torch.set_num_threads(1)  # one reduction order for every run

TORCH_DTYPE = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
STORAGE = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}

# =============================================================================================
# The families' own norms and activations (the pieces every family shares are hf_eager.py's)


def rms_norm_olmo2(hidden_states, weight, eps):
    """Olmo2RMSNorm: (weight * normalised).to(input_dtype) — the weight multiplies in float32."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.promote_types(input_dtype, torch.float32))
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return (weight * hidden_states).to(input_dtype)


def rms_norm_gemma(x, weight, eps):
    """Gemma2RMSNorm / Gemma3RMSNorm: _norm(x.float()) * (1.0 + weight.float()), type_as(x)."""
    ft = torch.promote_types(x.dtype, torch.float32)  # x.float(); float64 stays float64
    h = x.to(ft)
    output = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    output = output * (1.0 + weight.to(ft))
    return output.type_as(x)


def layer_norm(x, weight, bias, eps):
    """nn.LayerNorm(hidden, eps) with its weight and bias (GPT-NeoX)."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def gelu_tanh(x):
    """ACT2FN["gelu_pytorch_tanh"]: gelu(x, approximate="tanh")."""
    return F.gelu(x, approximate="tanh")


def floats(stored, ft):
    """The stored weights as ft; U8/BOOL buffers (GPT-NeoX's) are not read by any forward."""
    return {k: x.to(ft) for k, x in stored.items() if x.is_floating_point()}


def round_to(value, dtype):
    """A Python float rounded to a checkpoint dtype, as a Python float (exact in float64)."""
    return float(torch.tensor(value, dtype=torch.float64).to(STORAGE[dtype]).to(torch.float64))


# ---------------------------------------------------------------------------------------------
# The families' own pieces of the independent float64 loop implementation (golden_case.py's
# loop_* are the shared ones).


def loop_layer_norm(x, weight, bias, eps):
    out = torch.empty_like(x)
    for r in range(x.shape[0]):
        row = [float(v) for v in x[r]]
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        s = 1.0 / math.sqrt(var + eps)
        for i, v in enumerate(row):
            out[r, i] = (v - mean) * s * float(weight[i]) + float(bias[i])
    return out


def loop_gelu_erf(x):
    return torch.tensor([[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in row.tolist()]
                         for row in x], dtype=torch.float64)


def loop_gelu_tanh(x):
    c = math.sqrt(2 / math.pi)
    return torch.tensor([[0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v ** 3))) for v in
                          row.tolist()] for row in x], dtype=torch.float64)


# =============================================================================================
# gpt_neox — GPTNeoXForCausalLM (Pythia): models/gpt_neox/modeling_gpt_neox.py

NEOX_CASES = [
    # Pythia as published: parallel residual, rotary_pct 0.25 (the old keys only), buffers.
    dict(name="pythia-f32", family="gpt_neox", layers=2, heads=4, d=64, inter=256, vocab=96,
         ctx=64, eps=1e-5, rotary_pct=0.25, rope_base=10000, parallel=True, attention_bias=True,
         keys="rotary_pct", buffers="BOOL", bos=0, eos=0, dtype="F32", seed=31),
    dict(name="pythia-f16", family="gpt_neox", layers=2, heads=4, d=64, inter=256, vocab=96,
         ctx=64, eps=1e-5, rotary_pct=0.25, rope_base=10000, parallel=True, attention_bias=True,
         keys="rotary_pct", buffers="U8", bos=0, eos=0, dtype="F16", seed=31),
    # Sequential residual, the newer keys (partial_rotary_factor and rope_theta written beside
    # rotary_pct and rotary_emb_base, as transformers >= 4.45 saves them), half the head rotated.
    dict(name="neox-sequential-f32", family="gpt_neox", layers=3, heads=3, d=48, inter=192,
         vocab=80, ctx=64, eps=1e-5, rotary_pct=0.5, rope_base=25000, parallel=False,
         attention_bias=True, keys="partial_rotary_factor", buffers=None, bos=0, eos=0,
         dtype="F32", seed=32),
]


def neox_head_dim(c):
    """GPTNeoXAttention: head_size = hidden_size // num_attention_heads."""
    return c["d"] // c["heads"]


def neox_rotary_ndims(c):
    """rotary_ndims = int(head_size * rotary_pct) (= int(head_dim * partial_rotary_factor))."""
    return int(neox_head_dim(c) * c["rotary_pct"])


def neox_weights(c):
    g, randn = randn_factory(c["seed"])
    d, v, inter, heads, hd = c["d"], c["vocab"], c["inter"], c["heads"], neox_head_dim(c)
    w = {"gpt_neox.embed_in.weight": randn(v, d, std=0.5)}
    dtypes = {}
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            w[p + norm + ".weight"] = randn(d, std=0.1, mean=1.0)
            w[p + norm + ".bias"] = randn(d, std=0.1)
        # [heads, 3, head_dim, d]: per head its q, k and v rows (q and k larger: uneven heads).
        qkv = randn(heads, 3, hd, d, std=1.0 / math.sqrt(d))
        qkv[:, :2] *= 1.5
        w[p + "attention.query_key_value.weight"] = qkv.reshape(3 * d, d)
        w[p + "attention.query_key_value.bias"] = randn(3 * d, std=0.1)
        w[p + "attention.dense.weight"] = randn(d, d, std=1.0 / math.sqrt(d))
        w[p + "attention.dense.bias"] = randn(d, std=0.1)
        w[p + "mlp.dense_h_to_4h.weight"] = randn(inter, d, std=1.0 / math.sqrt(d))
        w[p + "mlp.dense_h_to_4h.bias"] = randn(inter, std=0.1)
        w[p + "mlp.dense_4h_to_h.weight"] = randn(d, inter, std=1.0 / math.sqrt(inter))
        w[p + "mlp.dense_4h_to_h.bias"] = randn(d, std=0.1)
        if c["buffers"]:
            # The buffers transformers <= 4.30 saved with every GPTNeoXAttention: the causal
            # mask tril(ones(ctx, ctx)).view(1, 1, ctx, ctx) (uint8 then, bool later),
            # masked_bias = tensor(-1e9) and RotaryEmbedding's inv_freq, in the model's dtype.
            ctx = c["ctx"]
            w[p + "attention.bias"] = torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx)
            dtypes[p + "attention.bias"] = c["buffers"]
            w[p + "attention.masked_bias"] = torch.tensor(-1e9)
            rot = neox_rotary_ndims(c)
            w[p + "attention.rotary_emb.inv_freq"] = 1.0 / (
                c["rope_base"] ** (torch.arange(0, rot, 2).float() / rot))
    w["gpt_neox.final_layer_norm.weight"] = randn(d, std=0.1, mean=1.0)
    w["gpt_neox.final_layer_norm.bias"] = randn(d, std=0.1)
    w["embed_out.weight"] = randn(v, d, std=0.3)
    ids = torch.randint(0, v, (N,), generator=g)
    return w, ids, dtypes


def neox_config(c):
    """GPTNeoXConfig as saved: Pythia's files (transformers 4.24) hold rotary_pct and
    rotary_emb_base; transformers >= 4.45 also writes partial_rotary_factor and rope_theta (set
    from them in GPTNeoXConfig.__init__), attention_bias and the dropouts."""
    config = {
        "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
        "bos_token_id": c["bos"], "eos_token_id": c["eos"], "hidden_act": "gelu",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "layer_norm_eps": c["eps"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "rotary_emb_base": c["rope_base"], "rotary_pct": c["rotary_pct"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.24.0", "use_cache": True,
        "use_parallel_residual": c["parallel"], "vocab_size": c["vocab"],
    }
    if c["keys"] == "partial_rotary_factor":
        config.update(attention_bias=c["attention_bias"], attention_dropout=0.0,
                      classifier_dropout=0.1, hidden_dropout=0.0,
                      partial_rotary_factor=c["rotary_pct"], rope_scaling=None,
                      rope_theta=c["rope_base"], transformers_version="4.45.2")
    return config


def neox_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """GPTNeoXAttention.forward (eager)."""
    head_size = neox_head_dim(c)
    hidden_shape = (*hidden_states.shape[:-1], -1, 3 * head_size)  # [batch, n, heads, 3·hd]
    qkv = F.linear(hidden_states, w[p + "query_key_value.weight"],
                   w.get(p + "query_key_value.bias")).view(hidden_shape).transpose(1, 2)
    query_states, key_states, value_states = qkv.chunk(3, dim=-1)
    cos, sin = position_embeddings
    query_states, key_states = apply_partial_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "dense", query_states, key_states, value_states,
                            attention_mask, head_size ** -0.5)


def neox_mlp(w, p, hidden_states):
    """GPTNeoXMLP: dense_4h_to_h(act(dense_h_to_4h(x))), act = ACT2FN["gelu"] (exact, erf)."""
    hidden_states = F.linear(hidden_states, w[p + "dense_h_to_4h.weight"],
                             w[p + "dense_h_to_4h.bias"])
    hidden_states = F.gelu(hidden_states)
    return F.linear(hidden_states, w[p + "dense_4h_to_h.weight"], w[p + "dense_4h_to_h.bias"])


def neox_forward(stored, ids, c, ft):
    """GPTNeoXForCausalLM(input_ids[None]) in dtype ft: (logits [n, vocab], [heads, n, n] per
    layer)."""
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids, "gpt_neox.embed_in.weight")  # emb_dropout: none
    causal_mask = eager_mask(len(ids), None, ft)
    # GPTNeoXRotaryEmbedding (= LlamaRotaryEmbedding): dim = int(head_dim * partial_rotary_factor)
    rope = position_embeddings(c["rope_base"], neox_rotary_ndims(c), None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."

        def ln(x, name):
            return layer_norm(x, w[p + name + ".weight"], w[p + name + ".bias"], eps)

        attn_output, attn_weights = neox_attention(
            w, p + "attention.", c, ln(hidden_states, "input_layernorm"), rope,
            causal_mask)
        if c["parallel"]:
            # x = x + attn(ln1(x)) + mlp(ln2(x))
            mlp_output = neox_mlp(w, p + "mlp.", ln(hidden_states, "post_attention_layernorm"))
            hidden_states = mlp_output + attn_output + hidden_states
        else:
            # x = x + attn(ln1(x)); x = x + mlp(ln2(x))
            attn_output = attn_output + hidden_states
            mlp_output = neox_mlp(w, p + "mlp.", ln(attn_output, "post_attention_layernorm"))
            hidden_states = mlp_output + attn_output
        attentions.append(attn_weights[0])
    hidden_states = layer_norm(hidden_states, w["gpt_neox.final_layer_norm.weight"],
                               w["gpt_neox.final_layer_norm.bias"], eps)
    logits = F.linear(hidden_states, w["embed_out.weight"])
    return logits[0], attentions


def neox_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, hd, eps = c["heads"], neox_head_dim(c), c["eps"]
    thetas = loop_inv_freq(c["rope_base"], neox_rotary_ndims(c))
    n = len(ids)
    x = torch.stack([w["gpt_neox.embed_in.weight"][int(t)] for t in ids])

    def mlp(p, h):
        up = loop_lin(h, w, p + "mlp.dense_h_to_4h")
        return loop_lin(loop_gelu_erf(up), w, p + "mlp.dense_4h_to_h")

    attentions = []
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."
        h = loop_layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = loop_lin(h, w, p + "attention.query_key_value")  # [n, 3d]

        def rows(hh, slot, t):
            """Head hh's rows of the fused weight: hh·3·hd + [0, hd) q, + [hd, 2hd) k,
            + [2hd, 3hd) v."""
            start = hh * 3 * hd + slot * hd
            return qkv[t, start:start + hd]

        qs = [[loop_rotate(rows(hh, 0, t), t, thetas) for t in range(n)] for hh in range(heads)]
        ks = [[loop_rotate(rows(hh, 1, t), t, thetas) for t in range(n)] for hh in range(heads)]
        vs = [[rows(hh, 2, t) for t in range(n)] for hh in range(heads)]
        A, ctx = loop_attention(qs, ks, vs, 1, None, 1.0 / math.sqrt(hd))
        attentions.append(A)
        attn = loop_lin(ctx, w, p + "attention.dense")
        ln2 = lambda y: loop_layer_norm(y, w[p + "post_attention_layernorm.weight"],  # noqa: E731
                                        w[p + "post_attention_layernorm.bias"], eps)
        if c["parallel"]:
            x = x + attn + mlp(p, ln2(x))
        else:
            x = x + attn
            x = x + mlp(p, ln2(x))
    x = loop_layer_norm(x, w["gpt_neox.final_layer_norm.weight"],
                        w["gpt_neox.final_layer_norm.bias"], eps)
    return x @ w["embed_out.weight"].T, attentions


def neox_blocked_qkv(stored, c):
    """The same file read as if query_key_value were [q; k; v] blocks (the wrong layout)."""
    out = dict(stored)
    d, heads, hd = c["d"], c["heads"], neox_head_dim(c)
    for l in range(c["layers"]):
        name = f"gpt_neox.layers.{l}.attention.query_key_value."
        wgt, bias = stored[name + "weight"], stored[name + "bias"]
        out[name + "weight"] = wgt.view(3, heads, hd, d).transpose(0, 1).reshape(3 * d, d)
        out[name + "bias"] = bias.view(3, heads, hd).transpose(0, 1).reshape(3 * d)
    return out


def neox_variants(c, stored):
    variants = [
        ("use_parallel_residual %s" % (not c["parallel"]), dict(c, parallel=not c["parallel"]),
         stored),
        ("rotary on the whole head", dict(c, rotary_pct=1.0), stored),
        ("query_key_value as [q; k; v] blocks", c, neox_blocked_qkv(stored, c)),
    ]
    if c["rope_base"] != 10000:
        variants.append(("rotary_emb_base 10000", dict(c, rope_base=10000), stored))
    return variants


def neox_params(config):
    """Every tensor GPTNeoXForCausalLM's checkpoint holds as a parameter (buffers apart)."""
    d, v, inter, layers = (config["hidden_size"], config["vocab_size"],
                           config["intermediate_size"], config["num_hidden_layers"])
    bias = config.get("attention_bias", True)
    per_layer = (2 * 2 * d                                   # input / post_attention LayerNorm
                 + 3 * d * d + (3 * d if bias else 0)        # query_key_value
                 + d * d + (d if bias else 0)                # dense
                 + inter * d + inter + d * inter + d)        # dense_h_to_4h, dense_4h_to_h
    embeddings = v * d * (1 if config.get("tie_word_embeddings", False) else 2)
    return embeddings + layers * per_layer + 2 * d          # + final_layer_norm


NEOX = dict(
    cases=NEOX_CASES, weights=neox_weights, config=neox_config, forward=neox_forward,
    loops=neox_loops, variants=neox_variants, params=neox_params,
    head_dim=neox_head_dim, kv_heads=lambda c: c["heads"],
    windows=lambda c: [None] * c["layers"],
    rope=lambda c: [(c["rope_base"], neox_rotary_ndims(c), None)] * c["layers"],
    attn_scale=lambda c: neox_head_dim(c) ** -0.5,
    meta=lambda c: {"residual": "parallel" if c["parallel"] else "sequential",
                    "buffers": c["buffers"] or "none", "hidden_act": "gelu"},
)


# =============================================================================================
# qwen3 — Qwen3ForCausalLM: models/qwen3/modeling_qwen3.py

QWEN3_CASES = [
    # head_dim 16 with hidden 48 and 4 heads (4·16 = 64 ≠ 48), GQA 4:2, tied embeddings.
    dict(name="qwen3-f32", family="qwen3", layers=2, heads=4, kv=2, d=48, head_dim=16, inter=96,
         vocab=88, ctx=128, theta=1000000, eps=1e-6, tied=True, bos=86, eos=87, dtype="F32",
         seed=41),
    dict(name="qwen3-bf16", family="qwen3", layers=2, heads=4, kv=2, d=48, head_dim=16, inter=96,
         vocab=88, ctx=128, theta=1000000, eps=1e-6, tied=True, bos=86, eos=87, dtype="BF16",
         seed=41),
]


def qwen3_weights(c):
    d, hd = c["d"], c["head_dim"]
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_qkv(w, randn, p, d, hq, hkv, 1.0)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        # q/k norms scale each normalised head vector (RMS 1) up: scores of a few units.
        w[p + "self_attn.q_norm.weight"] = randn(hd, std=0.3, mean=1.5)
        w[p + "self_attn.k_norm.weight"] = randn(hd, std=0.3, mean=1.5)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_mlp(w, randn, p, d, c["inter"])

    return (*llama_shaped_weights(c, N, layer), {})


def qwen3_config(c):
    """Qwen3Config as saved (transformers 4.51, the version Qwen3-0.6B was published with)."""
    return {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": c["bos"], "eos_token_id": c["eos"],
        "head_dim": c["head_dim"], "hidden_act": "silu", "hidden_size": c["d"],
        "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "max_window_layers": c["layers"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "rms_norm_eps": c["eps"], "rope_scaling": None,
        "rope_theta": c["theta"], "sliding_window": None, "tie_word_embeddings": c["tied"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "transformers_version": "4.51.0",
        "use_cache": True, "use_sliding_window": False, "vocab_size": c["vocab"],
    }


def qwen3_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Qwen3Attention.forward (eager): per-head q_norm / k_norm before the transpose and RoPE."""
    hd, eps = c["head_dim"], c["eps"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = rms_norm(proj("q_proj").view(hidden_shape), w[p + "q_norm.weight"],
                            eps).transpose(1, 2)
    key_states = rms_norm(proj("k_proj").view(hidden_shape), w[p + "k_norm.weight"],
                          eps).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def qwen3_forward(stored, ids, c, ft):
    w = floats(stored, ft)
    hidden_states, position_ids = embed(w, ids)
    causal_mask = eager_mask(len(ids), None, ft)  # use_sliding_window false
    rope = position_embeddings(c["theta"], c["head_dim"], None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "input_layernorm.weight"], c["eps"])
        hidden_states, attn_weights = qwen3_attention(w, p + "self_attn.", c, hidden_states,
                                                      rope, causal_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"],
                                 c["eps"])
        hidden_states = gated_mlp(w, p + "mlp.", hidden_states, F.silu)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm(hidden_states, w["model.norm.weight"], c["eps"])
    lm_head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return F.linear(hidden_states, lm_head)[0], attentions


def qwen3_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    hd, eps = c["head_dim"], c["eps"]

    def qk_norm(p):
        """Each head's vector normalised on its own (weight [head_dim]), then rotated."""
        return tuple(lambda vec, name=name: loop_rms(vec[None], w[p + name], eps)[0]
                     for name in ("self_attn.q_norm.weight", "self_attn.k_norm.weight"))

    return llama_loops(w, ids, c, hd, loop_inv_freq(c["theta"], hd), [None] * c["layers"],
                       qk_norm)


def swap_weights(stored, pairs):
    out = dict(stored)
    for a, b in pairs:
        out[a], out[b] = stored[b], stored[a]
    return out


def qwen3_variants(c, stored):
    swapped = swap_weights(stored, [(f"model.layers.{l}.self_attn.q_norm.weight",
                                     f"model.layers.{l}.self_attn.k_norm.weight")
                                    for l in range(c["layers"])])
    return [("rope_theta 10000", dict(c, theta=10000), stored),
            ("q_norm and k_norm weights swapped", c, swapped)]


def llama_like_params(config, q_norm, k_norm, norms_per_layer, fused=False):
    """Parameters of a Llama-shaped checkpoint: embeddings (lm_head only when untied), per layer
    q/k/v/o (no biases), q_norm/k_norm of the given widths, norms_per_layer vectors of hidden,
    a gated MLP; final norm."""
    d, v, layers, inter = (config["hidden_size"], config["vocab_size"],
                           config["num_hidden_layers"], config["intermediate_size"])
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    hd = config.get("head_dim") or d // heads
    attn = d * heads * hd + 2 * d * kv * hd + heads * hd * d
    per_layer = attn + q_norm + k_norm + norms_per_layer * d + 3 * d * inter
    tied = config.get("tie_word_embeddings", True)
    return v * d * (1 if tied else 2) + layers * per_layer + d


def qwen3_params(config):
    hd = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return llama_like_params(config, hd, hd, 2)


QWEN3 = dict(
    cases=QWEN3_CASES, weights=qwen3_weights, config=qwen3_config, forward=qwen3_forward,
    loops=qwen3_loops, variants=qwen3_variants, params=qwen3_params,
    head_dim=lambda c: c["head_dim"], kv_heads=lambda c: c["kv"],
    windows=lambda c: [None] * c["layers"],
    rope=lambda c: [(c["theta"], c["head_dim"], None)] * c["layers"],
    attn_scale=lambda c: c["head_dim"] ** -0.5,
    meta=lambda c: {"qk_norm": "per head [head_dim]", "tied": str(c["tied"]).lower()},
)


# =============================================================================================
# gemma2 — Gemma2ForCausalLM: models/gemma2/modeling_gemma2.py (Gemma 3 below builds on it, as
# modular_gemma3.py does)

GEMMA2_CASES = [
    # Layers 0 and 2 slide (window 4 < N), layer 1 is full; soft-caps small enough to bend the
    # scores and logits of this tiny model (the published 50 / 30 suit its larger ones);
    # query_pre_attn_scalar 32 with head_dim 16 (scale 1/√32, not 1/√16); head_dim·heads ≠ hidden.
    dict(name="gemma2-f32", family="gemma2", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=80, ctx=64, eps=1e-6, theta=10000.0, sliding_window=4, qpas=32,
         attn_softcap=5.0, final_softcap=3.0, dtype="F32", seed=51),
    dict(name="gemma2-bf16", family="gemma2", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=80, ctx=64, eps=1e-6, theta=10000.0, sliding_window=4, qpas=32,
         attn_softcap=5.0, final_softcap=3.0, dtype="BF16", seed=51),
]


def gemma2_layer_types(c):
    """Gemma2Config: layer_types, else "sliding_attention" if (i + 1) % 2 else "full_attention"
    (transformers < 4.53: Gemma2Attention slides when not layer_idx % 2 — the same layers)."""
    if c.get("layer_types"):
        return list(c["layer_types"])
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(c["layers"])]


def gemma_embed_scale(c):
    """√hidden_size rounded to the model's dtype (the checkpoint's torch_dtype)."""
    return round_to(c["d"] ** 0.5, c.get("embed_scale_dtype", c["dtype"]))


def gemma_weights(c, qk_norm):
    d, hd = c["d"], c["head_dim"]
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1)
        draw_qkv(w, randn, p, d, hq, hkv, 1.5)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = randn(hd, std=0.2, mean=0.6)
            w[p + "self_attn.k_norm.weight"] = randn(hd, std=0.2, mean=0.6)
        for norm in ("post_attention", "pre_feedforward", "post_feedforward"):
            w[p + norm + "_layernorm.weight"] = randn(d, std=0.1)
        draw_mlp(w, randn, p, d, c["inter"])

    # Small embeddings: × √hidden they reach unit size. Norm weights w act as (1 + w). Tied.
    return (*llama_shaped_weights(c, N, layer, embed_std=0.2, norm_mean=0.0, lm_head=False), {})


def gemma2_config(c):
    """Gemma2Config as saved (transformers 4.42, the version Gemma 2 was published with)."""
    return {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "attention_bias": False,
        "attention_dropout": 0.0, "attn_logit_softcapping": c["attn_softcap"], "bos_token_id": 2,
        "cache_implementation": "hybrid", "eos_token_id": 1,
        "final_logit_softcapping": c["final_softcap"], "head_dim": c["head_dim"],
        "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": 0,
        "query_pre_attn_scalar": c["qpas"], "rms_norm_eps": c["eps"], "rope_theta": c["theta"],
        "sliding_window": c["sliding_window"], "sliding_window_size": c["sliding_window"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "transformers_version": "4.42.4",
        "use_cache": True, "vocab_size": c["vocab"],
    }


def gemma_masks(c, n, ft):
    """The eager mask of each layer type (sliding_window on sliding_attention layers)."""
    return {"full_attention": eager_mask(n, None, ft),
            "sliding_attention": eager_mask(n, c["sliding_window"], ft)}


def gemma_attention(w, p, c, hidden_states, position_embeddings, attention_mask, qk_norm,
                    softcap):
    """Gemma2Attention.forward / Gemma3Attention.forward (eager): scaling
    query_pre_attn_scalar**-0.5; Gemma 2 passes softcap=attn_logit_softcapping to the attention
    function, Gemma 3 passes none (its attn_logit_softcapping is never read); Gemma 3 normalises q
    and k per head (q_norm / k_norm, (1 + w) RMSNorm) after the transpose, before RoPE."""
    hd = c["head_dim"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = proj("q_proj").view(hidden_shape).transpose(1, 2)
    key_states = proj("k_proj").view(hidden_shape).transpose(1, 2)
    value_states = proj("v_proj").view(hidden_shape).transpose(1, 2)
    if qk_norm:
        query_states = rms_norm_gemma(query_states, w[p + "q_norm.weight"], c["eps"])
        key_states = rms_norm_gemma(key_states, w[p + "k_norm.weight"], c["eps"])
    cos, sin = position_embeddings
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, c["qpas"] ** -0.5, softcap=softcap)


def gemma_decoder_layer(w, p, c, hidden_states, position_embeddings, attention_mask, qk_norm,
                        softcap):
    """Gemma2DecoderLayer / Gemma3DecoderLayer.forward: four norms, each (1 + w)."""
    eps = c["eps"]
    residual = hidden_states
    hidden_states = rms_norm_gemma(hidden_states, w[p + "input_layernorm.weight"], eps)
    hidden_states, attn_weights = gemma_attention(w, p + "self_attn.", c, hidden_states,
                                                  position_embeddings, attention_mask, qk_norm,
                                                  softcap)
    hidden_states = rms_norm_gemma(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
    hidden_states = residual + hidden_states
    residual = hidden_states
    hidden_states = rms_norm_gemma(hidden_states, w[p + "pre_feedforward_layernorm.weight"], eps)
    hidden_states = gated_mlp(w, p + "mlp.", hidden_states, gelu_tanh)  # gelu_pytorch_tanh
    hidden_states = rms_norm_gemma(hidden_states, w[p + "post_feedforward_layernorm.weight"], eps)
    hidden_states = residual + hidden_states
    return hidden_states, attn_weights


def gemma_head(w, c, hidden_states):
    """Final norm, lm_head tied to embed_tokens, Gemma2ForCausalLM's final soft-cap."""
    hidden_states = rms_norm_gemma(hidden_states, w["model.norm.weight"], c["eps"])
    logits = F.linear(hidden_states, w["model.embed_tokens.weight"])
    if c.get("final_softcap") is not None:
        logits = logits / c["final_softcap"]
        logits = torch.tanh(logits)
        logits = logits * c["final_softcap"]
    return logits[0]


def gemma2_forward(stored, ids, c, ft):
    w = floats(stored, ft)
    hidden_states, position_ids = embed(w, ids)
    masks = gemma_masks(c, len(ids), ft)
    rope = position_embeddings(c["theta"], c["head_dim"], None, ft, ft, position_ids)
    # Gemma2Model: normalizer = torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype)
    normalizer = torch.tensor(gemma_embed_scale(c), dtype=hidden_states.dtype)
    hidden_states = hidden_states * normalizer
    attentions = []
    for l, layer_type in enumerate(gemma2_layer_types(c)):
        hidden_states, attn_weights = gemma_decoder_layer(
            w, f"model.layers.{l}.", c, hidden_states, rope, masks[layer_type],
            qk_norm=False, softcap=c["attn_softcap"])
        attentions.append(attn_weights[0])
    return gemma_head(w, c, hidden_states), attentions


def gemma_loops(stored, ids, c, layer_types, layer_thetas, qk_norm, softcap):
    """Gemma 2 and 3 in loops: layer l uses layer_thetas[l] (θ_i per pair) and slides when its
    type is sliding_attention."""
    w = floats(stored, torch.float64)
    heads, kv, hd, eps = c["heads"], c["kv"], c["head_dim"], c["eps"]
    scale = gemma_embed_scale(c)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] * scale for t in ids])
    norm = lambda y, name: loop_rms(y, w[name], eps, offset=1.0)  # noqa: E731
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        thetas = layer_thetas[l]
        window = c["sliding_window"] if layer_types[l] == "sliding_attention" else None
        h = norm(x, p + "input_layernorm.weight")
        q = loop_lin(h, w, p + "self_attn.q_proj")
        k = loop_lin(h, w, p + "self_attn.k_proj")
        v = loop_lin(h, w, p + "self_attn.v_proj")
        qn = kn = None
        if qk_norm:
            qn = lambda vec: norm(vec[None], p + "self_attn.q_norm.weight")[0]  # noqa: E731
            kn = lambda vec: norm(vec[None], p + "self_attn.k_norm.weight")[0]  # noqa: E731
        qs = rotated_heads(q, heads, hd, thetas, qn)
        ks = rotated_heads(k, kv, hd, thetas, kn)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, window,
                                1.0 / math.sqrt(c["qpas"]), softcap)
        attentions.append(A)
        x = x + norm(loop_lin(ctx, w, p + "self_attn.o_proj"),
                     p + "post_attention_layernorm.weight")
        h2 = norm(x, p + "pre_feedforward_layernorm.weight")
        gate, up = loop_lin(h2, w, p + "mlp.gate_proj"), loop_lin(h2, w, p + "mlp.up_proj")
        m = loop_lin(loop_gelu_tanh(gate) * up, w, p + "mlp.down_proj")
        x = x + norm(m, p + "post_feedforward_layernorm.weight")
    logits = norm(x, "model.norm.weight") @ w["model.embed_tokens.weight"].T
    if c.get("final_softcap") is not None:
        cap = c["final_softcap"]
        logits = torch.tensor([[cap * math.tanh(z / cap) for z in row.tolist()] for row in logits],
                              dtype=torch.float64)
    return logits, attentions


def gemma2_loops(stored, ids, c):
    thetas = loop_inv_freq(c["theta"], c["head_dim"])
    return gemma_loops(stored, ids, c, gemma2_layer_types(c), [thetas] * c["layers"],
                       qk_norm=False, softcap=c["attn_softcap"])


def gemma_common_variants(c, stored):
    """Switches both Gemmas share: query_pre_attn_scalar, the window, the normalizer's dtype."""
    variants = [("no sliding window", dict(c, sliding_window=None), stored)]
    if c["qpas"] != c["head_dim"]:
        variants.append(("scale head_dim**-0.5 (query_pre_attn_scalar ignored)",
                         dict(c, qpas=c["head_dim"]), stored))
    if c["dtype"] != "F32":
        variants.append(("normalizer √hidden not rounded to %s" % c["dtype"],
                         dict(c, embed_scale_dtype="F32"), stored))
    return variants


def gemma2_variants(c, stored):
    flipped = ["full_attention" if t == "sliding_attention" else "sliding_attention"
               for t in gemma2_layer_types(c)]
    return gemma_common_variants(c, stored) + [
        ("no attn_logit_softcapping", dict(c, attn_softcap=None), stored),
        ("no final_logit_softcapping", dict(c, final_softcap=None), stored),
        ("odd layers slide instead of even ones", dict(c, layer_types=flipped), stored)]


def gemma2_params(config):
    return llama_like_params(config, 0, 0, 4)


def gemma_windows(layer_types_fn):
    return lambda c: [c["sliding_window"] if t == "sliding_attention" else None
                      for t in layer_types_fn(c)]


GEMMA2 = dict(
    cases=GEMMA2_CASES, weights=lambda c: gemma_weights(c, qk_norm=False), config=gemma2_config,
    forward=gemma2_forward, loops=gemma2_loops, variants=gemma2_variants, params=gemma2_params,
    head_dim=lambda c: c["head_dim"], kv_heads=lambda c: c["kv"],
    windows=gemma_windows(gemma2_layer_types),
    rope=lambda c: [(c["theta"], c["head_dim"], None)] * c["layers"],
    attn_scale=lambda c: c["qpas"] ** -0.5,
    meta=lambda c: {"embed_scale": repr(gemma_embed_scale(c)),
                    "attn_softcap": repr(c["attn_softcap"]),
                    "final_softcap": repr(c["final_softcap"]),
                    "layer_types": ",".join(gemma2_layer_types(c))},
)


# =============================================================================================
# gemma3_text — Gemma3ForCausalLM with Gemma3TextConfig: models/gemma3/modeling_gemma3.py

GEMMA3_CASES = [
    # layer_types given explicitly (not the default pattern: 3 layers of pattern 6 would all
    # slide); local RoPE base 10 000 on sliding layers, rope_theta 10⁶ on the full one; q/k norms.
    dict(name="gemma3-f32", family="gemma3_text", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=96, ctx=64, eps=1e-6, rope_theta=1000000.0, rope_local=10000.0,
         rope_scaling=None, sliding_window=4, qpas=24,
         layer_types=["sliding_attention", "full_attention", "sliding_attention"], pattern=None,
         style="4.55", dtype="F32", seed=61),
    dict(name="gemma3-bf16", family="gemma3_text", layers=3, heads=4, kv=2, d=48, head_dim=16,
         inter=96, vocab=96, ctx=64, eps=1e-6, rope_theta=1000000.0, rope_local=10000.0,
         rope_scaling=None, sliding_window=4, qpas=24,
         layer_types=["sliding_attention", "full_attention", "sliding_attention"], pattern=None,
         style="4.55", dtype="BF16", seed=61),
    # The older sliding_window_pattern (3: layers 0, 1 slide, layer 2 is full) and the larger
    # Gemma 3 models' rope_scaling {"rope_type": "linear", "factor": 8} on the full layers.
    dict(name="gemma3-pattern-f32", family="gemma3_text", layers=3, heads=2, kv=1, d=64,
         head_dim=32, inter=128, vocab=72, ctx=64, eps=1e-6, rope_theta=1000000,
         rope_local=10000, rope_scaling={"factor": 8.0, "rope_type": "linear"}, sliding_window=5,
         qpas=32, layer_types=None, pattern=3, style="4.52", dtype="F32", seed=62),
]


def gemma3_layer_types(c):
    """Gemma3TextConfig: layer_types, else "sliding_attention" if bool((i + 1) %
    sliding_window_pattern) else "full_attention" (sliding_window_pattern defaults to 6)."""
    if c.get("layer_types"):
        return list(c["layer_types"])
    pattern = c.get("pattern") or 6
    return ["sliding_attention" if (i + 1) % pattern else "full_attention"
            for i in range(c["layers"])]


def gemma3_config(c):
    """Gemma3TextConfig as saved: transformers 4.55 (gemma-3-270m's) writes layer_types and
    _sliding_window_pattern (6 whatever the layers say); 4.52 wrote sliding_window_pattern."""
    config = {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": None,
        "bos_token_id": 2, "eos_token_id": 1, "final_logit_softcapping": None,
        "head_dim": c["head_dim"], "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": 0,
        "query_pre_attn_scalar": c["qpas"], "rms_norm_eps": c["eps"],
        "rope_local_base_freq": c["rope_local"], "rope_scaling": c["rope_scaling"],
        "rope_theta": c["rope_theta"], "sliding_window": c["sliding_window"],
        "torch_dtype": TORCH_DTYPE[c["dtype"]], "use_cache": True, "vocab_size": c["vocab"],
    }
    if c["style"] == "4.55":
        config.update(_sliding_window_pattern=6, layer_types=c["layer_types"],
                      transformers_version="4.55.0", use_bidirectional_attention=False)
    else:
        config.update(cache_implementation="hybrid", sliding_window_pattern=c["pattern"],
                      transformers_version="4.52.1")
    return config


def gemma3_forward(stored, ids, c, ft):
    w = floats(stored, ft)
    hidden_states, position_ids = embed(w, ids)
    # Gemma3TextScaledWordEmbedding: embedding(input_ids) * embed_scale.to(weight.dtype)
    hidden_states = hidden_states * torch.tensor(gemma_embed_scale(c), dtype=ft)
    masks = gemma_masks(c, len(ids), ft)
    # Gemma3TextModel: rotary_emb (rope_theta, rope_scaling) and rotary_emb_local (a config copy
    # with rope_theta = rope_local_base_freq, rope_scaling = {"rope_type": "default"})
    position_embeddings_global = position_embeddings(c["rope_theta"], c["head_dim"],
                                                     c["rope_scaling"], ft, ft, position_ids)
    position_embeddings_local = position_embeddings(c["rope_local"], c["head_dim"], None, ft, ft,
                                                    position_ids)
    attentions = []
    for l, layer_type in enumerate(gemma3_layer_types(c)):
        # apply global RoPE to non-sliding layer only
        sliding = layer_type == "sliding_attention"
        rope = position_embeddings_local if sliding else position_embeddings_global
        hidden_states, attn_weights = gemma_decoder_layer(
            w, f"model.layers.{l}.", c, hidden_states, rope, masks[layer_type],
            qk_norm=True, softcap=None)
        attentions.append(attn_weights[0])
    return gemma_head(w, c, hidden_states), attentions


def gemma3_rope(c):
    """Per layer (base, rotary dim, scaling): rope_local_base_freq on sliding layers, rope_theta
    with rope_scaling on full ones."""
    return [(c["rope_local"], c["head_dim"], None) if t == "sliding_attention"
            else (c["rope_theta"], c["head_dim"], c["rope_scaling"]) for t in gemma3_layer_types(c)]


def gemma3_loops(stored, ids, c):
    thetas = [loop_inv_freq(base, dim, (scaling or {}).get("factor", 1.0))
              for base, dim, scaling in gemma3_rope(c)]
    return gemma_loops(stored, ids, c, gemma3_layer_types(c), thetas, qk_norm=True, softcap=None)


def gemma3_variants(c, stored):
    variants = gemma_common_variants(c, stored) + [
        ("rope_local_base_freq ignored (rope_theta everywhere)",
         dict(c, rope_local=c["rope_theta"]), stored)]
    if c.get("layer_types"):
        variants.append(("layer_types ignored (sliding_window_pattern 6)",
                         dict(c, layer_types=None, pattern=6), stored))
    else:
        variants.append(("sliding_window_pattern ignored (6)", dict(c, pattern=6), stored))
    if c["rope_scaling"]:
        variants.append(("rope_scaling ignored", dict(c, rope_scaling=None), stored))
    return variants


def gemma3_params(config):
    hd = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return llama_like_params(config, hd, hd, 4)


GEMMA3 = dict(
    cases=GEMMA3_CASES, weights=lambda c: gemma_weights(c, qk_norm=True), config=gemma3_config,
    forward=gemma3_forward, loops=gemma3_loops, variants=gemma3_variants, params=gemma3_params,
    head_dim=lambda c: c["head_dim"], kv_heads=lambda c: c["kv"],
    windows=gemma_windows(gemma3_layer_types), rope=gemma3_rope,
    attn_scale=lambda c: c["qpas"] ** -0.5,
    meta=lambda c: {"embed_scale": repr(gemma_embed_scale(c)),
                    "layer_types": ",".join(gemma3_layer_types(c))},
)


# =============================================================================================
# olmo2 — Olmo2ForCausalLM: models/olmo2/modeling_olmo2.py

OLMO2_CASES = [
    # q_norm over heads·head_dim = 64 and k_norm over kv_heads·head_dim = 32 (GQA 4:2), untied.
    dict(name="olmo2-f32", family="olmo2", layers=2, heads=4, kv=2, d=64, inter=128, vocab=100,
         ctx=64, theta=500000, eps=1e-6, pad=98, eos=99, dtype="F32", seed=71),
    dict(name="olmo2-bf16", family="olmo2", layers=2, heads=4, kv=2, d=64, inter=128, vocab=100,
         ctx=64, theta=500000, eps=1e-6, pad=98, eos=99, dtype="BF16", seed=71),
]


def olmo2_head_dim(c):
    """Olmo2Attention: head_dim = hidden_size // num_attention_heads (no head_dim key)."""
    return c["d"] // c["heads"]


def olmo2_weights(c):
    d, hd = c["d"], olmo2_head_dim(c)
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):  # no norm before a sublayer; q/k norms over the whole projection
        draw_qkv(w, randn, p, d, hq, hkv, 1.0)
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        w[p + "self_attn.q_norm.weight"] = randn(hq, std=0.3, mean=1.5)
        w[p + "self_attn.k_norm.weight"] = randn(hkv, std=0.3, mean=1.5)
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        draw_mlp(w, randn, p, d, c["inter"])
        w[p + "post_feedforward_layernorm.weight"] = randn(d, std=0.1, mean=1.0)

    return (*llama_shaped_weights(c, N, layer, lm_head=True), {})


def olmo2_config(c):
    """Olmo2Config as saved (transformers 4.47, the OLMo 2 release's)."""
    return {
        "architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "attention_bias": False,
        "attention_dropout": 0.0, "eos_token_id": c["eos"], "hidden_act": "silu",
        "hidden_size": c["d"], "initializer_range": 0.02, "intermediate_size": c["inter"],
        "max_position_embeddings": c["ctx"], "num_attention_heads": c["heads"],
        "num_hidden_layers": c["layers"], "num_key_value_heads": c["kv"], "pad_token_id": c["pad"],
        "rms_norm_eps": c["eps"], "rope_scaling": None, "rope_theta": c["theta"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.47.0", "use_cache": True, "vocab_size": c["vocab"],
    }


def olmo2_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_olmo2.apply_rotary_pos_emb: cos/sin stay float32, q/k cast back after."""
    q_type, k_type = q.dtype, k.dtype
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed.to(q_type), k_embed.to(k_type)


def olmo2_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Olmo2Attention.forward (eager): q_norm / k_norm over the whole projection, then split."""
    hd, eps = olmo2_head_dim(c), c["eps"]
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    proj = lambda name: F.linear(hidden_states, w[p + name + ".weight"])  # noqa: E731
    query_states = rms_norm_olmo2(proj("q_proj"), w[p + "q_norm.weight"], eps)
    key_states = rms_norm_olmo2(proj("k_proj"), w[p + "k_norm.weight"], eps)
    value_states = proj("v_proj")
    query_states = query_states.view(hidden_shape).transpose(1, 2)
    key_states = key_states.view(hidden_shape).transpose(1, 2)
    value_states = value_states.view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = olmo2_apply_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def olmo2_forward(stored, ids, c, ft):
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids)
    causal_mask = eager_mask(len(ids), None, ft)
    # Olmo2RotaryEmbedding.forward returns cos, sin in float32 (inv_freq's dtype, not x.dtype)
    rope = position_embeddings(c["theta"], olmo2_head_dim(c), None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        residual = hidden_states
        hidden_states, attn_weights = olmo2_attention(w, p + "self_attn.", c, hidden_states,
                                                      rope, causal_mask)
        hidden_states = rms_norm_olmo2(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = gated_mlp(w, p + "mlp.", hidden_states, F.silu)
        hidden_states = rms_norm_olmo2(hidden_states, w[p + "post_feedforward_layernorm.weight"],
                                       eps)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm_olmo2(hidden_states, w["model.norm.weight"], eps)
    return F.linear(hidden_states, w["lm_head.weight"])[0], attentions


def olmo2_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, kv, hd, eps = c["heads"], c["kv"], olmo2_head_dim(c), c["eps"]
    thetas = loop_inv_freq(c["theta"], hd)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        # The whole projection row (all heads together) normalised, then cut into heads.
        q = loop_rms(loop_lin(x, w, p + "self_attn.q_proj"), w[p + "self_attn.q_norm.weight"], eps)
        k = loop_rms(loop_lin(x, w, p + "self_attn.k_proj"), w[p + "self_attn.k_norm.weight"], eps)
        v = loop_lin(x, w, p + "self_attn.v_proj")
        qs, ks = rotated_heads(q, heads, hd, thetas), rotated_heads(k, kv, hd, thetas)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, None,
                                1.0 / math.sqrt(hd))
        attentions.append(A)
        o = loop_lin(ctx, w, p + "self_attn.o_proj")
        x = x + loop_rms(o, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = loop_lin(x, w, p + "mlp.gate_proj"), loop_lin(x, w, p + "mlp.up_proj")
        m = loop_lin(loop_silu(gate) * up, w, p + "mlp.down_proj")
        x = x + loop_rms(m, w[p + "post_feedforward_layernorm.weight"], eps)
    x = loop_rms(x, w["model.norm.weight"], eps)
    return x @ w["lm_head.weight"].T, attentions


def olmo2_variants(c, stored):
    swapped = swap_weights(stored, [(f"model.layers.{l}.post_attention_layernorm.weight",
                                     f"model.layers.{l}.post_feedforward_layernorm.weight")
                                    for l in range(c["layers"])])
    return [("rope_theta 10000", dict(c, theta=10000), stored),
            ("post_attention / post_feedforward norms swapped", c, swapped)]


def olmo2_params(config):
    d, heads = config["hidden_size"], config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    hd = d // heads
    return llama_like_params(config, heads * hd, kv * hd, 2)


OLMO2 = dict(
    cases=OLMO2_CASES, weights=olmo2_weights, config=olmo2_config, forward=olmo2_forward,
    loops=olmo2_loops, variants=olmo2_variants, params=olmo2_params,
    head_dim=olmo2_head_dim, kv_heads=lambda c: c["kv"],
    windows=lambda c: [None] * c["layers"],
    rope=lambda c: [(c["theta"], olmo2_head_dim(c), None)] * c["layers"],
    attn_scale=lambda c: olmo2_head_dim(c) ** -0.5,
    meta=lambda c: {"qk_norm": "whole projection [heads*head_dim], [kv_heads*head_dim]",
                    "norms": "after each sublayer"},
)


# =============================================================================================
# phi3 — Phi3ForCausalLM: models/phi3/modeling_phi3.py

PHI3_CASES = [
    # Fused qkv_proj [(4 + 2·2)·16, 64] and gate_up_proj [2·112, 64]; sliding_window 6 < N, applied
    # by the causal mask on every layer (Phi-3-mini's 2047 never bites at N = 12).
    dict(name="phi3-f32", family="phi3", layers=2, heads=4, kv=2, d=64, inter=112, vocab=72,
         ctx=64, theta=10000.0, eps=1e-5, sliding_window=6, bos=1, eos=70, pad=70, dtype="F32",
         seed=81),
    dict(name="phi3-bf16", family="phi3", layers=2, heads=4, kv=2, d=64, inter=112, vocab=72,
         ctx=64, theta=10000.0, eps=1e-5, sliding_window=6, bos=1, eos=70, pad=70, dtype="BF16",
         seed=81),
]


def phi3_head_dim(c):
    return c["d"] // c["heads"]


def phi3_weights(c):
    d, hd = c["d"], phi3_head_dim(c)
    hq, hkv = c["heads"] * hd, c["kv"] * hd

    def layer(w, randn, p):
        w[p + "input_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        w[p + "self_attn.qkv_proj.weight"] = torch.cat(qkv_draws(randn, d, hq, hkv, 1.4))  # [q|k|v]
        w[p + "self_attn.o_proj.weight"] = randn(d, hq, std=1.0 / math.sqrt(hq))
        w[p + "post_attention_layernorm.weight"] = randn(d, std=0.1, mean=1.0)
        gate, up, down = mlp_draws(randn, d, c["inter"])
        w[p + "mlp.gate_up_proj.weight"] = torch.cat([gate, up])  # rows [gate | up]
        w[p + "mlp.down_proj.weight"] = down

    return (*llama_shaped_weights(c, N, layer, lm_head=True), {})


def phi3_config(c):
    """Phi3Config as saved (transformers 4.40, Phi-3-mini's release)."""
    return {
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "attention_dropout": 0.0,
        "bos_token_id": c["bos"], "embd_pdrop": 0.0, "eos_token_id": c["eos"],
        "hidden_act": "silu", "hidden_size": c["d"], "initializer_range": 0.02,
        "intermediate_size": c["inter"], "max_position_embeddings": c["ctx"],
        "num_attention_heads": c["heads"], "num_hidden_layers": c["layers"],
        "num_key_value_heads": c["kv"], "original_max_position_embeddings": c["ctx"],
        "pad_token_id": c["pad"], "resid_pdrop": 0.0, "rms_norm_eps": c["eps"],
        "rope_scaling": None, "rope_theta": c["theta"], "sliding_window": c["sliding_window"],
        "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[c["dtype"]],
        "transformers_version": "4.40.2", "use_cache": True, "vocab_size": c["vocab"],
    }


def phi3_attention(w, p, c, hidden_states, position_embeddings, attention_mask):
    """Phi3Attention.forward (eager): qkv_proj split at heads·hd and heads·hd + kv·hd."""
    hd = phi3_head_dim(c)
    hidden_shape = (*hidden_states.shape[:-1], -1, hd)  # [batch, n, heads, hd]
    qkv = F.linear(hidden_states, w[p + "qkv_proj.weight"])
    query_pos = c["heads"] * hd
    query_states = qkv[..., :query_pos]
    key_states = qkv[..., query_pos: query_pos + c["kv"] * hd]
    value_states = qkv[..., query_pos + c["kv"] * hd:]
    query_states = query_states.view(hidden_shape).transpose(1, 2)
    key_states = key_states.view(hidden_shape).transpose(1, 2)
    value_states = value_states.view(hidden_shape).transpose(1, 2)
    cos, sin = position_embeddings
    query_states, key_states = apply_partial_rotary_pos_emb(query_states, key_states, cos, sin)
    return attention_output(w, p + "o_proj", query_states, key_states, value_states,
                            attention_mask, hd ** -0.5)


def phi3_mlp(w, p, hidden_states):
    """Phi3MLP: gate, up = gate_up_proj(x).chunk(2, -1); down_proj(up * silu(gate))."""
    up_states = F.linear(hidden_states, w[p + "gate_up_proj.weight"])
    gate, up_states = up_states.chunk(2, dim=-1)
    up_states = up_states * F.silu(gate)
    return F.linear(up_states, w[p + "down_proj.weight"])


def phi3_forward(stored, ids, c, ft):
    w, eps = floats(stored, ft), c["eps"]
    hidden_states, position_ids = embed(w, ids)
    # Phi3Model: create_sliding_window_causal_mask when config.sliding_window is not None
    causal_mask = eager_mask(len(ids), c["sliding_window"], ft)
    # partial_rotary_factor 1
    rope = position_embeddings(c["theta"], phi3_head_dim(c), None, ft, ft, position_ids)
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "input_layernorm.weight"], eps)
        hidden_states, attn_weights = phi3_attention(w, p + "self_attn.", c, hidden_states,
                                                     rope, causal_mask)
        hidden_states = residual + hidden_states  # resid_attn_dropout: identity in eval
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, w[p + "post_attention_layernorm.weight"], eps)
        hidden_states = phi3_mlp(w, p + "mlp.", hidden_states)
        hidden_states = residual + hidden_states
        attentions.append(attn_weights[0])
    hidden_states = rms_norm(hidden_states, w["model.norm.weight"], eps)
    return F.linear(hidden_states, w["lm_head.weight"])[0], attentions


def phi3_loops(stored, ids, c):
    w = floats(stored, torch.float64)
    heads, kv, hd, eps, inter = c["heads"], c["kv"], phi3_head_dim(c), c["eps"], c["inter"]
    thetas = loop_inv_freq(c["theta"], hd)
    x = torch.stack([w["model.embed_tokens.weight"][int(t)] for t in ids])
    attentions = []
    for l in range(c["layers"]):
        p = f"model.layers.{l}."
        h = loop_rms(x, w[p + "input_layernorm.weight"], eps)
        wqkv = w[p + "self_attn.qkv_proj.weight"]
        q = h @ wqkv[: heads * hd].T
        k = h @ wqkv[heads * hd: (heads + kv) * hd].T
        v = h @ wqkv[(heads + kv) * hd:].T
        qs, ks = rotated_heads(q, heads, hd, thetas), rotated_heads(k, kv, hd, thetas)
        A, ctx = loop_attention(qs, ks, split_heads(v, kv, hd), heads // kv, c["sliding_window"],
                                1.0 / math.sqrt(hd))
        attentions.append(A)
        x = x + loop_lin(ctx, w, p + "self_attn.o_proj")
        h2 = loop_rms(x, w[p + "post_attention_layernorm.weight"], eps)
        wgu = w[p + "mlp.gate_up_proj.weight"]
        gate, up = h2 @ wgu[:inter].T, h2 @ wgu[inter:].T  # rows [gate | up]
        x = x + (loop_silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    x = loop_rms(x, w["model.norm.weight"], eps)
    return x @ w["lm_head.weight"].T, attentions


def phi3_variants(c, stored):
    inter = c["inter"]
    swapped = dict(stored)
    for l in range(c["layers"]):
        name = f"model.layers.{l}.mlp.gate_up_proj.weight"
        swapped[name] = torch.cat([stored[name][inter:], stored[name][:inter]])
    return [("sliding_window ignored", dict(c, sliding_window=None), stored),
            ("gate_up_proj read as [up | gate]", c, swapped)]


def phi3_params(config):
    return llama_like_params(config, 0, 0, 2)  # qkv_proj / gate_up_proj: the same counts fused


PHI3 = dict(
    cases=PHI3_CASES, weights=phi3_weights, config=phi3_config, forward=phi3_forward,
    loops=phi3_loops, variants=phi3_variants, params=phi3_params,
    head_dim=phi3_head_dim, kv_heads=lambda c: c["kv"],
    windows=lambda c: [c["sliding_window"]] * c["layers"],
    rope=lambda c: [(c["theta"], phi3_head_dim(c), None)] * c["layers"],
    attn_scale=lambda c: phi3_head_dim(c) ** -0.5,
    meta=lambda c: {"fused": "qkv_proj [q|k|v], gate_up_proj [gate|up]"},
)


# =============================================================================================
# Driver: files, checks, expected values

FAMILIES = {"gpt_neox": NEOX, "qwen3": QWEN3, "gemma2": GEMMA2, "gemma3_text": GEMMA3,
            "olmo2": OLMO2, "phi3": PHI3}


def check_rope(c, fam):
    """golden_case.check_rope for each layer's distinct (base, rotary dim, scaling), θ from
    loop_inv_freq: how many were checked."""
    seen = set()
    for base, dim, scaling in fam["rope"](c):
        key = (base, dim, json.dumps(scaling, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        thetas = loop_inv_freq(base, dim, (scaling or {}).get("factor", 1.0))
        golden_case.check_rope(c["name"], c["seed"], c["heads"], fam["kv_heads"](c),
                               fam["head_dim"](c), (base, dim, scaling), thetas, N)
    return len(seen)


def case_meta(c, fam):
    windows = fam["windows"](c)
    rope = fam["rope"](c)
    rotary_dims = sorted({dim for _, dim, _ in rope})
    meta = {"family": c["family"], "case": c["name"], "layers": str(c["layers"]),
            "heads": str(c["heads"]), "kv_heads": str(fam["kv_heads"](c)),
            "head_dim": str(fam["head_dim"](c)), "d_model": str(c["d"]),
            "vocab": str(c["vocab"]), "context": str(c["ctx"]), "n": str(N),
            "dtype": c["dtype"],
            "windows": ",".join("none" if wd is None else str(wd) for wd in windows),
            "rope_bases": ",".join(repr(float(base)) for base, _, _ in rope),
            "rope_scaling": ",".join("none" if s is None else "%s:%r" % (s["rope_type"],
                                                                          s["factor"])
                                     for _, _, s in rope),
            "rotary_dim": ",".join(str(dim) for dim in rotary_dims),
            "attn_scale": repr(float(fam["attn_scale"](c)))}
    meta.update(fam["meta"](c))
    return meta


def run_case(c, fam):
    w, ids, dtypes = fam["weights"](c)
    path = os.path.join(OUT, c["name"] + ".safetensors")
    write_checkpoint(path, w, c["dtype"], dtypes)
    golden_case.write_config(os.path.join(OUT, c["name"] + ".config.json"), fam["config"](c))

    # The file reads back as written: names, dtypes, shapes; F32 / U8 / BOOL bit for bit.
    header, file_meta = read_header(path)
    assert file_meta == {"format": "pt"} and list(header) == sorted(w), c["name"]
    stored = read_checkpoint(path)  # the weights as the file holds them, exactly, in float64
    for name, x in w.items():
        code = dtypes.get(name, c["dtype"])
        assert header[name]["dtype"] == code and stored[name].shape == x.shape, name
        if code in ("U8", "BOOL") or code == "F32":
            assert torch.equal(stored[name].to(torch.float64), x.to(torch.float64)), name
        else:  # rounded once to F16/BF16, and exactly what torch rounds to
            assert torch.equal(stored[name], x.to(STORAGE[code]).to(torch.float64)), name

    results = {label: fam["forward"](stored, ids, c, ft)
               for label, ft in (("32", torch.float32), ("64", torch.float64))}
    logits64 = results["64"][0]
    ropes = check_rope(c, fam)
    d_logits, d_attn, loop_err, top_mean, top_max = golden_case.check_case(
        c["name"], results, fam["loops"](stored, ids, c), fam["windows"](c), N)

    # Every switch matters: a loader that got it wrong would miss by far more than float32's error.
    effects = []
    for label, c2, stored2 in fam["variants"](c, stored):
        changed = float((fam["forward"](stored2, ids, c2, torch.float64)[0] - logits64).abs().max())
        assert changed > max(100 * d_logits, 1e-3), (c["name"], label, changed, d_logits)
        effects.append((label, changed))

    golden_case.write_expected(os.path.join(OUT, c["name"] + ".expected.safetensors"), ids,
                               results, case_meta(c, fam))
    print("wrote %-20s max|f32-f64| logits %.2e attn %.2e; loops vs vectorized %.1e; mean top "
          "attention %.2f (max %.3f); %d RoPE table(s) checked"
          % (c["name"], d_logits, d_attn, loop_err, top_mean, top_max, ropes))
    for label, changed in effects:
        print("    if a loader ignored it — %-50s max|Δlogits| %.3f" % (label, changed))
    return d_logits, d_attn


# =============================================================================================
# Published configs: tests/data/families/published/<org>--<name>.config.json (saved verbatim from
# the official repo's Hub page when the search tools held it) and cards.json: what each model card
# states, the count every_tensor_params gives for the published config, and the 3 GiB limit.

LIMIT_BYTES = 3 * 2 ** 30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

PYTHIA_CARD_TABLE = ("| Pythia model | Non-Embedding Params | Layers | Model Dim | Heads | "
                     "Batch Size | Learning Rate | Equivalent Models |")
PYTHIA_CARD_READ_AT = ("https://hf.898520.xyz/EleutherAI/pythia-70m-deduped-v0 (a copy of the "
                       "Pythia card)")
# (model, non-embedding params, layers, model dim) rows of that table, as the card prints them.
PYTHIA_CARD_ROWS = [("70M", 18915328, 6, 512), ("160M", 85056000, 12, 768),
                    ("410M", 302311424, 24, 1024), ("1.0B", 805736448, 16, 2048),
                    ("1.4B", 1208602624, 24, 2048), ("2.8B", 2517652480, 32, 2560)]

# What the search tools held of each model's card (card_wording verbatim, card_read_at where).
PUBLISHED_MODELS = [
    dict(repo="EleutherAI/pythia-70m", family="gpt_neox",
         card_wording=PYTHIA_CARD_TABLE + " | 70M | 18,915,328 | 6 | 512 | 8 | 2M | "
                                          "1.0 x 10-3 | — |",
         card_read_at=PYTHIA_CARD_READ_AT, card_params=18915328, card_counts="non-embedding",
         stated_total=70e6),
    dict(repo="EleutherAI/pythia-410m", family="gpt_neox",
         card_wording=PYTHIA_CARD_TABLE + " | 410M | 302,311,424 | 24 | 1024 | 16 | 4M | "
                                          "3.0 x 10-4 | OPT-350M |",
         card_read_at=PYTHIA_CARD_READ_AT, card_params=302311424, card_counts="non-embedding",
         stated_total=410e6),
    dict(repo="Qwen/Qwen3-0.6B", family="qwen3",
         card_wording="Number of Parameters: 0.6B (0.44B non-embedding)",
         card_read_at="https://docs.m5stack.com/en/stackflow/models/qwen3-0.6b (quoting the card; "
                      "the card page itself was not found)",
         card_params=600000000, card_counts="total", stated_total=0.6e9),
    dict(repo="google/gemma-3-270m", family="gemma3_text",
         card_wording='The "270m" in the gemma-3-270m model name represents the exact number of '
                      "parameters (270 million) while 0.3b is common way to round up for easier "
                      "reference.",
         card_read_at="https://huggingface.co/google/gemma-3-270m/discussions/1 (a Google org "
                      "reply; the card page itself was not found)",
         card_params=270000000, card_counts="total", stated_total=270e6),
    dict(repo="google/gemma-2-2b", family="gemma2", card_wording=None,
         card_read_at="not found (gated repo); keras-hub's gemma2_2b_en preset states params "
                      "2614341888 (https://github.com/keras-team/keras-hub/pull/1721.diff)",
         card_params=None, card_counts=None, stated_total=2614341888),
    dict(repo="allenai/OLMo-2-0425-1B", family="olmo2", card_wording=None,
         card_read_at="not found; the repo's file list (https://huggingface.co/allenai/"
                      "OLMo-2-0425-1B/tree/main) shows model-00001-of-00002.safetensors 4.98 GB "
                      "+ model-00002-of-00002.safetensors 956 MB",
         card_params=None, card_counts=None, stated_total=None, bytes_evidence=4.98e9 + 956e6),
    dict(repo="microsoft/Phi-3-mini-4k-instruct", family="phi3",
         card_wording="The Phi-3-Mini-4K-Instruct is a 3.8B parameters, lightweight, "
                      "state-of-the-art open model trained with the Phi-3 datasets",
         card_read_at="https://huggingface.co/microsoft/Phi-3-mini-4k-instruct",
         card_params=3800000000, card_counts="total", stated_total=3.8e9),
]


def published_path(repo):
    return os.path.join(PUBLISHED, repo.replace("/", "--") + ".config.json")


def pythia_card_check():
    """neox_params minus the embeddings for each row of Pythia's card table (intermediate 4 × model
    dim, GPT-NeoX's default): the card's non-embedding counts, exactly."""
    rows = []
    for model, stated, layers, dim in PYTHIA_CARD_ROWS:
        config = {"hidden_size": dim, "vocab_size": 0, "intermediate_size": 4 * dim,
                  "num_hidden_layers": layers}
        count = neox_params(config)
        assert count == stated, (model, count, stated)
        rows.append({"model": model, "card_non_embedding": stated, "reference": count})
    return rows


def write_cards():
    """cards.json: per published model, the card's statement, the reference count for the saved
    config (when it was found) and whether a 3 GiB parameter-byte limit refuses it."""
    entries = []
    for p in PUBLISHED_MODELS:
        path = published_path(p["repo"])
        entry = {
            "repo": p["repo"], "family": p["family"],
            "config_url": "https://huggingface.co/%s/blob/main/config.json" % p["repo"],
            "config_file": os.path.relpath(path, OUT), "config_found": os.path.exists(path),
            "card_url": "https://huggingface.co/%s" % p["repo"], "card_wording": p["card_wording"],
            "card_read_at": p["card_read_at"], "card_params": p["card_params"],
            "card_counts": p["card_counts"],
        }
        if entry["config_found"]:
            with open(path) as f:
                config = json.load(f)
            count = FAMILIES[config["model_type"]]["params"](config)
            dtype = config.get("torch_dtype") or config.get("dtype")
            entry.update(reference_params=count, published_dtype=dtype,
                         param_bytes=count * DTYPE_BYTES[dtype],
                         refused_by_limit=count * DTYPE_BYTES[dtype] > LIMIT_BYTES,
                         limit_basis="reference count × published dtype")
        else:
            entry.update(reference_params=None, published_dtype=None, param_bytes=None)
            if p.get("bytes_evidence"):
                entry.update(refused_by_limit=p["bytes_evidence"] > LIMIT_BYTES,
                             limit_basis="the official file list's weight bytes, %.2f GB (float32 "
                                         "weights), against %d" % (p["bytes_evidence"] / 1e9,
                                                                   LIMIT_BYTES))
            elif p["stated_total"] is not None:
                # Whatever the published dtype, the weights are F16/BF16 (2 bytes) or F32 (4).
                low, high = p["stated_total"] * 2, p["stated_total"] * 4
                verdict = True if low > LIMIT_BYTES else False if high <= LIMIT_BYTES else None
                entry.update(refused_by_limit=verdict,
                             limit_basis="the stated ~%.3g parameters at 2 (F16/BF16) to 4 (F32) "
                                         "bytes each: %.2f to %.2f GB, limit %.2f GB"
                                         % (p["stated_total"], low / 1e9, high / 1e9,
                                            LIMIT_BYTES / 1e9))
            else:
                entry.update(refused_by_limit=None, limit_basis="no count or size found")
        entries.append(entry)
    cards = {
        "limit_bytes": LIMIT_BYTES,
        "counting": "every tensor the family's checkpoint holds as a parameter "
                    "(make-family-golden.py <family>_params; tied embeddings once; GPT-NeoX's "
                    "attention.bias / masked_bias / inv_freq buffers are not parameters)",
        "note": "No official config.json was found with the search tools (docs and pages "
                "corpora): only fine-tunes, duplicates and quantised copies of these repos, which "
                "this file does not use. Save a repo's config.json verbatim as config_file and "
                "rerun the generator to fill reference_params, published_dtype and param_bytes.",
        "pythia_card_table_check": pythia_card_check(),
        "models": entries,
    }
    os.makedirs(PUBLISHED, exist_ok=True)
    with open(os.path.join(PUBLISHED, "cards.json"), "w") as f:
        json.dump(cards, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return entries


def main():
    os.makedirs(OUT, exist_ok=True)
    for fam in FAMILIES.values():
        for c in fam["cases"]:
            run_case(c, fam)
    for entry in write_cards():
        print("published %-34s config %-9s card %-14s refused by the 3 GiB limit: %s"
              % (entry["repo"], "found" if entry["config_found"] else "not found",
                 entry["card_params"], entry["refused_by_limit"]))


if __name__ == "__main__":
    main()
