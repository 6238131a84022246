#!/usr/bin/env python3
"""Golden data for six more Hugging Face families: tests/data/families/<case>.safetensors,
.config.json, .expected.safetensors, for `gpt_neox` (Pythia), `qwen3`, `gemma3_text`, `gemma2`,
`olmo2` and `phi3`; and tests/data/families/published/cards.json (parameter counts of the
published configs saved beside it).

This driver writes and checks every case; each family's cases and reference are its own module
(family_gpt_neox.py, family_qwen3.py, family_gemma.py, family_olmo2.py, family_phi3.py), with
family_common.py for what they share and family_cards.py for the published configs.

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
import os
import sys

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_case  # noqa: E402
from family_cards import write_cards  # noqa: E402
from family_common import N, OUT, STORAGE  # noqa: E402
from family_gemma import GEMMA2, GEMMA3  # noqa: E402
from family_gpt_neox import NEOX  # noqa: E402
from family_olmo2 import OLMO2  # noqa: E402
from family_phi3 import PHI3  # noqa: E402
from family_qwen3 import QWEN3  # noqa: E402
from golden_case import loop_inv_freq  # noqa: E402
from safetensors_io import read_checkpoint, read_header, write_checkpoint  # noqa: E402


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


def main():
    os.makedirs(OUT, exist_ok=True)
    for fam in FAMILIES.values():
        for c in fam["cases"]:
            run_case(c, fam)
    for entry in write_cards(FAMILIES):
        print("published %-34s config %-9s card %-14s refused by the 3 GiB limit: %s"
              % (entry["repo"], "found" if entry["config_found"] else "not found",
                 entry["card_params"], entry["refused_by_limit"]))


if __name__ == "__main__":
    main()
