#!/usr/bin/env python3
"""Analysis golden data: tests/data/analysis/<case>.expected.safetensors, the logit lens,
attention rollout, direct logit attribution and activation patching of committed golden
checkpoints, from PyTorch.

Cases (each on its golden file's ids, N = 12): tests/data/gpt2/tiny-f32 (GPT-2: LayerNorm with
biases, learned positions, tied unembedding, every linear with a bias), tests/data/llama/llama-f32
(Llama: RMSNorm, RoPE, grouped-query attention 4 heads on 2 K/V heads, SwiGLU, no biases, untied)
and tests/data/families/pythia-f32 (GPT-NeoX: the parallel residual x + attn(ln1(x)) +
mlp(ln2(x)), partial rotary, LayerNorm and linear biases, untied embed_out).

The reference is TransformerLens's way of reading a model (TransformerLens/transformer_lens:
HookedTransformer.run_with_cache, ActivationCache.accumulated_resid / decompose_resid /
stack_head_results / apply_ln_to_stack, components.py's HookPoint): each case's forward is
written as torch modules with HookPoints — identities named as TransformerLens names them —
and run once with forward hooks that record every hook's output:
  hook_embed, hook_pos_embed          the token embedding, the learned positions (GPT-2)
  blocks.<l>.hook_resid_pre           the residual stream entering block l
  blocks.<l>.attn.hook_pattern        the attention weights [heads, n, n] (query heads)
  blocks.<l>.attn.hook_z              each head's A·V before the output projection [n, heads, hd]
  blocks.<l>.hook_attn_out            the attention's output (o_proj / c_proj / dense, its bias in)
  blocks.<l>.hook_mlp_out             the MLP's output (its bias in)
  blocks.<l>.hook_resid_post          the residual stream after block l
  ln_final.hook_scale                 the final norm's scale: √(var + ε) (LayerNorm), √(mean x² +
                                      ε) (RMSNorm), of each position
The blocks compute what the committed golden scripts compute (make-gpt2-golden.py's
gpt2_reference, make-llama-golden.py's eager Llama code through hf_eager.py, family_gpt_neox.py's
GPTNeoX): the recorded forward's logits equal the committed <case>.expected.safetensors' logits64
to 1e-12 and its patterns their attn64 (float64), checked before anything is written.

From the recorded activations, in float32 (the weights cast, every op float32) and float64:
  logit lens   rows = resid_pre of every block, then the last block's resid_post ([layers + 1, n,
               d]), each row through the final norm with its own statistics (the norm module run
               on it: TransformerLens's accumulated_resid with the norm recomputed), the
               unembedding, softmax. Stored: lens.ids [rows, n, k] the float64 run's top-k ids
               (most likely first), lens32.probs / lens64.probs those ids' probabilities in each
               run, lens32.token / lens64.token [rows, n] the token's probability, lens.ranks
               [rows, n] its rank in the float64 run (0 = the most likely). The last row equals
               softmax(logits) of the forward (checked).
  rollout      Abnar & Zuidema (2020), samiraabnar/attention_flow's compute_joint_attention:
               Â_l = (mean_h A_l + I) rows renormalised (= 0.5 · mean + 0.5 · I), R_0 = Â_0, R_l =
               Â_l · R_{l−1}; rollout32 / rollout64 [layers, n, n].
  attribution  at the last position, metric logit[a] − logit[b]: the final residual decomposed as
               TransformerLens's decompose_resid / stack_head_results does — embed (hook_embed +
               hook_pos_embed), per head z_h · W_O[:, h]ᵀ (hook_result), per layer the output
               projection's bias, per layer hook_mlp_out — each part through apply_ln_to_stack
               (mean-centred for LayerNorm, not for RMSNorm; divided by the cached
               ln_final.hook_scale) and the direction w_final ⊙ (W_U[a] − W_U[b]); constant = the
               final norm's bias · (W_U[a] − W_U[b]) (no case has an unembedding bias).
               attribution32.<part> / attribution64.<part> for embed [1], heads [layers, heads],
               attention_bias [layers], mlp [layers], constant [1], total [1] (the forward's
               logit[a] − logit[b]).
  patching    denoising activation patching, one site at a time with forward hooks that replace
               a hook's output (TransformerLens's run_with_hooks; no shortcut): the corrupted
               prompt is ids with positions CORRUPTED_AT changed; patch<label>.metrics [2] the clean
               and corrupted logit[a] − logit[b] at the last position; per site (patched −
               corrupted) / (clean − corrupted) for heads [layers, heads] (one head's columns of
               hook_z at every position), residual [layers, n] (one position of hook_resid_pre),
               attention [layers] and mlp [layers] (the whole hook_attn_out / hook_mlp_out).
Every file also holds ids [n], corrupted [n] and answers [2] (a = the float64 forward's most likely next token at
the last position, b = the second), all F64, and metadata: case, folder, family, top_k, token
(= a).

Checks (a failing one stops the script before the file is written): the forward's logits and
patterns equal the committed golden data (float64, 1e-12); the parts sum to the final residual
(1e-12) and, through the frozen norm, to total (float64: 1e-10; float32: 1e-4); the lens' last row
is the forward's softmax; rollout rows sum to 1 (1e-12) and R_0 is layer 0's Â; no near-ties in the
float64 top-k + 1 (logit gaps > 1e-4) or around the token's rank (> 1e-5), so float32 cannot
reorder them;
float32 and float64 agree (lens probabilities 1e-5, rollout 1e-6, attribution 1e-4, patching
effects 1e-3); the clean metric is the recorded forward's logit difference (1e-12).

Run with Debian's python3-torch: /usr/bin/python3 scripts/data/make-analysis-golden.py
(deterministic).
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import family_gpt_neox as neox  # noqa: E402
import gpt2_reference  # noqa: E402
from data_scripts import load_script  # noqa: E402
from hf_eager import (apply_partial_rotary_pos_emb, apply_rotary_pos_emb,  # noqa: E402
                      eager_attention_forward, eager_mask, gated_mlp, position_embeddings,
                      rms_norm, rotary_embedding)
from safetensors_io import read_checkpoint, read_safetensors, write_safetensors  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "analysis")
TOP_K = 5
CORRUPTED_AT = (2, 7)  # the corrupted prompt's positions that differ from the clean one
torch.set_num_threads(1)  # one reduction order for every run

llama = load_script("make-llama-golden")
gpt2 = load_script("make-gpt2-golden")

# case, folder, family
CASES = [("tiny-f32", "gpt2", "gpt2"), ("llama-f32", "llama", "llama"),
         ("pythia-f32", "families", "gpt_neox")]


class HookPoint(nn.Module):
    """TransformerLens's HookPoint: the identity, a named place a forward hook reads."""

    def forward(self, x):
        return x


class FinalNorm(nn.Module):
    """ln_final: LayerNorm (weight, bias, ε 1e-5) or RMSNorm (weight, ε), its scale through
    hook_scale as TransformerLens's LayerNorm / RMSNorm compute it."""

    def __init__(self, kind, weight, bias, eps):
        super().__init__()
        self.kind, self.weight, self.bias, self.eps = kind, weight, bias, eps
        self.hook_scale = HookPoint()

    def forward(self, x):
        if self.kind == "layer":
            x = x - x.mean(-1, keepdim=True)
            scale = self.hook_scale((x.pow(2).mean(-1, keepdim=True) + self.eps).sqrt())
            return x / scale * self.weight + self.bias
        scale = self.hook_scale((x.pow(2).mean(-1, keepdim=True) + self.eps).sqrt())
        return x / scale * self.weight


class Attention(nn.Module):
    """hook_pattern, hook_z around a family's attention: z_and_pattern(x) -> (z [n, heads, hd],
    pattern [heads, n, n]); out(z) = the output projection with its bias."""

    def __init__(self, z_and_pattern, out):
        super().__init__()
        self.z_and_pattern, self.out = z_and_pattern, out
        self.hook_pattern, self.hook_z = HookPoint(), HookPoint()

    def forward(self, x):
        z, pattern = self.z_and_pattern(x)
        self.hook_pattern(pattern)
        return self.out(self.hook_z(z))


class Block(nn.Module):
    """x → resid_pre → attn(ln1(x)) → attn_out; mlp(ln2(·)) → mlp_out; resid_post = resid_pre +
    attn_out + mlp_out (sequential: the MLP reads resid_pre + attn_out; parallel: resid_pre)."""

    def __init__(self, ln1, attn, ln2, mlp, parallel):
        super().__init__()
        self.ln1, self.ln2, self.mlp, self.parallel = ln1, ln2, mlp, parallel
        self.attn = attn
        for name in ("hook_resid_pre", "hook_attn_out", "hook_mlp_out", "hook_resid_post"):
            setattr(self, name, HookPoint())

    def forward(self, x):
        x = self.hook_resid_pre(x)
        attn_out = self.hook_attn_out(self.attn(self.ln1(x)))
        if self.parallel:  # GPTNeoXLayer: mlp_output + attn_output + hidden_states
            mlp_out = self.hook_mlp_out(self.mlp(self.ln2(x)))
            return self.hook_resid_post(mlp_out + attn_out + x)
        mid = x + attn_out
        return self.hook_resid_post(mid + self.hook_mlp_out(self.mlp(self.ln2(mid))))


class HookedModel(nn.Module):
    """embed → blocks → ln_final → unembed, with the hooks above. spec: the family's pieces in
    dtype (see gpt2_spec, llama_spec, neox_spec)."""

    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        self.hook_embed, self.hook_pos_embed = HookPoint(), HookPoint()
        self.blocks = nn.ModuleList(spec["blocks"])
        self.ln_final = spec["ln_final"]

    def forward(self, ids):
        x = self.hook_embed(self.spec["embed"](ids))
        if self.spec.get("pos") is not None:
            x = x + self.hook_pos_embed(self.spec["pos"](ids))
        for block in self.blocks:
            x = block(x)
        return self.ln_final(x) @ self.spec["W_U"].T

    def run_with_patches(self, ids, patches):
        """The logits with each named HookPoint's output replaced by patches[name](output),
        through forward hooks (TransformerLens's run_with_hooks)."""
        handles = []
        for name, module in self.named_modules():
            if name in patches:
                handles.append(module.register_forward_hook(
                    lambda mod, inputs, output, name=name: patches[name](output)))
        try:
            return self(ids)
        finally:
            for handle in handles:
                handle.remove()

    def run_with_cache(self, ids):
        """(logits, cache): every HookPoint's output under its name, recorded by forward hooks."""
        cache, handles = {}, []
        for name, module in self.named_modules():
            if isinstance(module, HookPoint):
                handles.append(module.register_forward_hook(
                    lambda mod, inputs, output, name=name: cache.__setitem__(name, output)))
        try:
            logits = self(ids)
        finally:
            for handle in handles:
                handle.remove()
        return logits, cache


# ---- the families: what the committed golden scripts compute -------------------------------


def gpt2_spec(w, c, ft):
    """make-gpt2-golden.py's model (gpt2_reference) on bare-named weights w (float64)."""
    w = {k: x.to(ft) for k, x in w.items()}
    d, heads = c["d"], c["heads"]

    def ln(name):
        return lambda x: gpt2_reference.layer_norm(x, w[name + ".weight"], w[name + ".bias"], d)

    def attention(p):
        def z_and_pattern(h):  # h = ln_1(x): attention_inputs without its own ln_1
            n = h.shape[0]
            qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # [n, 3d]
            q, k, v = (t.reshape(n, heads, d // heads).transpose(0, 1) for t in qkv.split(d, -1))
            att = gpt2_reference.attention_weights(
                q, k, torch.tril(torch.ones(n, n, dtype=torch.bool)), c)
            return (att @ v).transpose(0, 1), att  # z [n, heads, dk]

        def out(z):
            return z.reshape(z.shape[0], d) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]

        return Attention(z_and_pattern, out)

    def mlp(p):
        def run(h):
            m = gpt2_reference.gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
            return m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        return run

    blocks = [Block(ln(f"h.{l}.ln_1"), attention(f"h.{l}."), ln(f"h.{l}.ln_2"), mlp(f"h.{l}."),
                    False) for l in range(c["layers"])]
    W_O = [w[f"h.{l}.attn.c_proj.weight"].T for l in range(c["layers"])]  # [d, heads·dk]
    return dict(embed=lambda ids: w["wte.weight"][ids],
                pos=lambda ids: w["wpe.weight"][:ids.shape[0]], blocks=blocks,
                ln_final=FinalNorm("layer", w["ln_f.weight"], w["ln_f.bias"], 1e-5),
                W_U=w["wte.weight"], W_O=W_O, b_O=[w[f"h.{l}.attn.c_proj.bias"]
                                                    for l in range(c["layers"])],
                heads=heads, hd=d // heads, ln_bias=w["ln_f.bias"], ln_weight=w["ln_f.weight"])


def llama_spec(stored, c, ft):
    """make-llama-golden.py's forward (transformers' eager Llama, hf_eager.py)."""
    w = {k: x.to(ft) for k, x in stored.items()}
    hd, heads, kv, eps = llama.head_dim(c), c["heads"], c["kv"], c["eps"]

    def attention(p, window):
        def z_and_pattern(x):
            n = x.shape[0]
            h = x[None]
            shape = (1, n, -1, hd)
            proj = lambda s: F.linear(h, w[p + s + ".weight"], w.get(p + s + ".bias"))  # noqa: E731
            q = proj("q_proj").view(shape).transpose(1, 2)
            k = proj("k_proj").view(shape).transpose(1, 2)
            v = proj("v_proj").view(shape).transpose(1, 2)
            cos, sin = rotary_embedding(*llama.rope(c, ft), ft, torch.arange(n)[None])
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            z, att = eager_attention_forward(heads // kv, q, k, v, eager_mask(n, window, ft),
                                             hd ** -0.5)
            return z[0], att[0]  # z [n, heads, hd]

        def out(z):
            return F.linear(z.reshape(z.shape[0], heads * hd), w[p + "o_proj.weight"],
                            w.get(p + "o_proj.bias"))

        return Attention(z_and_pattern, out)

    def norm(name):
        return lambda x: rms_norm(x, w[name], eps)

    blocks = []
    for l, window in enumerate(llama.layer_windows(c)):
        p = f"model.layers.{l}."
        blocks.append(Block(norm(p + "input_layernorm.weight"), attention(p + "self_attn.", window),
                            norm(p + "post_attention_layernorm.weight"),
                            lambda x, p=p: gated_mlp(w, p + "mlp.", x), False))
    L = c["layers"]
    W_U = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return dict(embed=lambda ids: w["model.embed_tokens.weight"][ids], pos=None, blocks=blocks,
                ln_final=FinalNorm("rms", w["model.norm.weight"], None, eps), W_U=W_U,
                W_O=[w[f"model.layers.{l}.self_attn.o_proj.weight"] for l in range(L)],
                b_O=[w.get(f"model.layers.{l}.self_attn.o_proj.bias") for l in range(L)],
                heads=heads, hd=hd, ln_bias=None, ln_weight=w["model.norm.weight"])


def neox_spec(stored, c, ft):
    """family_gpt_neox.py's GPTNeoX forward."""
    w = {k: x.to(ft) for k, x in stored.items() if x.is_floating_point()}
    hd, heads, eps = neox.neox_head_dim(c), c["heads"], c["eps"]

    def ln(name):
        return lambda x: F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps)

    def attention(p):
        def z_and_pattern(x):
            n = x.shape[0]
            qkv = F.linear(x[None], w[p + "query_key_value.weight"], w[p + "query_key_value.bias"])
            q, k, v = qkv.view(1, n, -1, 3 * hd).transpose(1, 2).chunk(3, dim=-1)
            cos, sin = position_embeddings(c["rope_base"], neox.neox_rotary_ndims(c), None, ft, ft,
                                           torch.arange(n)[None])
            q, k = apply_partial_rotary_pos_emb(q, k, cos, sin)
            z, att = eager_attention_forward(1, q, k, v, eager_mask(n, None, ft), hd ** -0.5)
            return z[0], att[0]

        def out(z):
            return F.linear(z.reshape(z.shape[0], heads * hd), w[p + "dense.weight"],
                            w[p + "dense.bias"])

        return Attention(z_and_pattern, out)

    blocks = []
    for l in range(c["layers"]):
        p = f"gpt_neox.layers.{l}."
        blocks.append(Block(ln(p + "input_layernorm"), attention(p + "attention."),
                            ln(p + "post_attention_layernorm"),
                            lambda x, p=p: neox.neox_mlp(w, p + "mlp.", x), c["parallel"]))
    L = c["layers"]
    return dict(embed=lambda ids: w["gpt_neox.embed_in.weight"][ids], pos=None, blocks=blocks,
                ln_final=FinalNorm("layer", w["gpt_neox.final_layer_norm.weight"],
                                   w["gpt_neox.final_layer_norm.bias"], eps),
                W_U=w["embed_out.weight"],
                W_O=[w[f"gpt_neox.layers.{l}.attention.dense.weight"] for l in range(L)],
                b_O=[w[f"gpt_neox.layers.{l}.attention.dense.bias"] for l in range(L)],
                heads=heads, hd=hd, ln_bias=w["gpt_neox.final_layer_norm.bias"],
                ln_weight=w["gpt_neox.final_layer_norm.weight"])


def read_gpt2(path):
    """A GPT-2 checkpoint's tensors under their bare names (no "transformer." prefix), float64."""
    tensors, _ = read_safetensors(path)
    return {(name[len("transformer."):] if name.startswith("transformer.") else name):
            torch.from_numpy(np.array(array, dtype=np.float64)) for name, array in tensors.items()}


def case_spec(name, folder, family):
    """(spec(ft), c) of a case."""
    path = os.path.join(DATA, folder, name + ".safetensors")
    if family == "gpt2":
        c = next(case for case in gpt2.CASES if case["name"] == name)
        stored = read_gpt2(path)
        return (lambda ft: gpt2_spec(stored, c, ft)), c
    stored = read_checkpoint(path)
    if family == "llama":
        c = next(case for case in llama.CASES if case["name"] == name)
        return (lambda ft: llama_spec(stored, c, ft)), c
    c = next(case for case in neox.NEOX_CASES if case["name"] == name)
    return (lambda ft: neox_spec(stored, c, ft)), c


# ---- the analyses, from the recorded activations --------------------------------------------


def logit_lens(model, cache, layers, token):
    """(every probability [rows, n, vocab], the token's [rows, n], the logits [rows, n, vocab]):
    accumulated_resid through the final norm recomputed on each row, unembedded, softmax."""
    rows = [cache[f"blocks.{l}.hook_resid_pre"] for l in range(layers)]
    rows.append(cache[f"blocks.{layers - 1}.hook_resid_post"])
    stack = torch.stack(rows)  # [rows, n, d]
    logits = model.ln_final(stack) @ model.spec["W_U"].T
    probs = torch.softmax(logits, dim=-1)
    return probs, probs[..., token], logits


def rollout(cache, layers):
    """compute_joint_attention over the head-mean patterns: [layers, n, n]."""
    joint = []
    for l in range(layers):
        a = cache[f"blocks.{l}.attn.hook_pattern"].mean(0)
        aug = a + torch.eye(a.shape[-1], dtype=a.dtype)
        aug = aug / aug.sum(-1, keepdim=True)
        joint.append(aug if l == 0 else aug @ joint[-1])
    return torch.stack(joint)


def attribution(model, cache, logits, layers, a, b, layer_norm):
    """The parts of logit[a] − logit[b] at the last position (see the docstring), and the sum of
    the decomposed residual (for the check)."""
    spec = model.spec
    last = -1
    parts = [cache["hook_embed"][last]
             + (cache["hook_pos_embed"][last] if "hook_pos_embed" in cache else 0)]
    heads, hd = spec["heads"], spec["hd"]
    for l in range(layers):
        z = cache[f"blocks.{l}.attn.hook_z"][last]  # [heads, hd]
        W_O = spec["W_O"][l]  # [d, heads·hd]
        for h in range(heads):  # hook_result: z_h · W_O[:, h]ᵀ
            parts.append(W_O[:, h * hd:(h + 1) * hd] @ z[h])
        b_O = spec["b_O"][l]
        parts.append(b_O if b_O is not None else torch.zeros_like(parts[0]))
        parts.append(cache[f"blocks.{l}.hook_mlp_out"][last])
    stack = torch.stack(parts)  # [components, d]
    residual_sum = stack.sum(0)
    # apply_ln_to_stack: centre each part (LayerNorm), divide by the cached final scale
    if layer_norm:
        stack = stack - stack.mean(-1, keepdim=True)
    stack = stack / cache["ln_final.hook_scale"][last]
    direction = spec["ln_weight"] * (spec["W_U"][a] - spec["W_U"][b])
    values = stack @ direction
    per_layer = heads + 2  # the heads, the bias, the MLP
    constant = (spec["ln_bias"] @ (spec["W_U"][a] - spec["W_U"][b])
                if spec["ln_bias"] is not None else torch.zeros((), dtype=values.dtype))
    out = {
        "embed": values[0:1],
        "heads": torch.stack([values[1 + l * per_layer: 1 + l * per_layer + heads]
                              for l in range(layers)]),
        "attention_bias": torch.stack([values[1 + l * per_layer + heads] for l in range(layers)]),
        "mlp": torch.stack([values[1 + l * per_layer + heads + 1] for l in range(layers)]),
        "constant": constant.reshape(1),
        "total": (logits[last, a] - logits[last, b]).reshape(1),
    }
    return out, residual_sum


def corrupt(ids, vocab):
    """The corrupted prompt: ids with positions CORRUPTED_AT replaced by other ids."""
    out = ids.clone()
    for p in CORRUPTED_AT:
        out[p] = (int(ids[p]) + 7) % vocab
    return out


def patching(model, clean, clean_cache, corrupted, layers, heads, a, b):
    """Denoising activation patching, one site at a time, as TransformerLens's patching module
    does with hooks: the corrupted run with one hook's output (or one head's columns of hook_z,
    or one position of hook_resid_pre) replaced by the clean run's. Returns the clean and
    corrupted metrics logit[a] − logit[b] at the last position and, per site, (patched −
    corrupted) / (clean − corrupted)."""
    def metric(logits):
        return logits[-1, a] - logits[-1, b]

    clean_metric = metric(model(clean))
    corrupted_metric = metric(model(corrupted))

    def effect(patches):
        return (metric(model.run_with_patches(corrupted, patches)) - corrupted_metric) / (
            clean_metric - corrupted_metric)

    def head_patch(l, h):
        def patch(z):
            z = z.clone()
            z[:, h] = clean_cache[f"blocks.{l}.attn.hook_z"][:, h]
            return z
        return {f"blocks.{l}.attn.hook_z": patch}

    def resid_patch(l, p):
        def patch(x):
            x = x.clone()
            x[p] = clean_cache[f"blocks.{l}.hook_resid_pre"][p]
            return x
        return {f"blocks.{l}.hook_resid_pre": patch}

    def whole(name):
        return {name: lambda out: clean_cache[name]}

    n = corrupted.shape[0]
    return {
        "metrics": torch.stack([clean_metric, corrupted_metric]),
        "heads": torch.stack([torch.stack([effect(head_patch(l, h)) for h in range(heads)])
                              for l in range(layers)]),
        "residual": torch.stack([torch.stack([effect(resid_patch(l, p)) for p in range(n)])
                                 for l in range(layers)]),
        "attention": torch.stack([effect(whole(f"blocks.{l}.hook_attn_out"))
                                  for l in range(layers)]),
        "mlp": torch.stack([effect(whole(f"blocks.{l}.hook_mlp_out")) for l in range(layers)]),
    }


def top_k_margin(logits, k):
    """The smallest gap between neighbouring logits among the k + 1 largest, over every row and
    position."""
    top = logits.topk(k + 1, dim=-1).values
    return float((top[..., :-1] - top[..., 1:]).min())


def token_margin(logits, token):
    """The smallest |logit − the token's logit| over every other id, row and position."""
    diff = (logits - logits[..., token:token + 1]).abs()
    diff[..., token] = float("inf")
    return float(diff.min())


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, folder, family in CASES:
        golden, _ = read_safetensors(os.path.join(DATA, folder, name + ".expected.safetensors"))
        ids = torch.from_numpy(golden["ids"].astype(np.int64))
        spec_of, c = case_spec(name, folder, family)
        layers = c["layers"]
        runs = {}
        for label, ft in (("32", torch.float32), ("64", torch.float64)):
            model = HookedModel(spec_of(ft))
            logits, cache = model.run_with_cache(ids)
            runs[label] = (model, logits, cache)

        # The recorded forward is the committed golden one.
        model64, logits64, cache64 = runs["64"]
        err = float((logits64 - torch.from_numpy(np.array(golden["logits64"]))).abs().max())
        assert err < 1e-12, (name, "logits vs committed golden", err)
        for l in range(layers):
            want = torch.from_numpy(np.array(golden[f"attn64.{l}"]))
            got = cache64[f"blocks.{l}.attn.hook_pattern"]
            assert float((got - want).abs().max()) < 1e-12, (name, "pattern", l)

        top2 = logits64[-1].topk(2).indices
        a, b = int(top2[0]), int(top2[1])
        expected = {"ids": ids.to(torch.float64).numpy(),
                    "answers": np.array([a, b], dtype=np.float64)}
        lens = {}
        for label, (model, logits, cache) in runs.items():
            probs, token_probs, lens_logits = logit_lens(model, cache, layers, a)
            # The last row is the forward's softmax.
            assert float((probs[-1] - torch.softmax(logits, -1)).abs().max()) < (
                1e-6 if label == "32" else 1e-14), (name, label, "last row")
            lens[label] = (probs, token_probs, lens_logits)
        probs64, _, lens_logits64 = lens["64"]
        top_ids = probs64.topk(TOP_K, dim=-1).indices  # [rows, n, k]
        ranks = (lens_logits64 > lens_logits64[..., a:a + 1]).sum(-1)
        margin_k, margin_t = top_k_margin(lens_logits64, TOP_K), token_margin(lens_logits64, a)
        assert margin_k > 1e-4 and margin_t > 1e-5, (name, "near-ties", margin_k, margin_t)
        expected["lens.ids"] = top_ids.to(torch.float64).numpy()
        expected["lens.ranks"] = ranks.to(torch.float64).numpy()
        for label in ("32", "64"):
            probs, token_probs, _ = lens[label]
            expected[f"lens{label}.probs"] = probs.gather(-1, top_ids).to(torch.float64).numpy()
            expected[f"lens{label}.token"] = token_probs.to(torch.float64).numpy()
        d_lens = float(np.abs(expected["lens32.probs"] - expected["lens64.probs"]).max())
        assert d_lens < 1e-5, (name, "lens float32 vs float64", d_lens)

        for label, (model, logits, cache) in runs.items():
            r = rollout(cache, layers)
            assert float((r.to(torch.float64).sum(-1) - 1).abs().max()) < (
                1e-6 if label == "32" else 1e-12), (name, label, "rollout rows")
            expected[f"rollout{label}"] = r.to(torch.float64).numpy()
        d_roll = float(np.abs(expected["rollout32"] - expected["rollout64"]).max())
        assert d_roll < 1e-6, (name, "rollout float32 vs float64", d_roll)

        sums = {}
        for label, (model, logits, cache) in runs.items():
            parts, residual_sum = attribution(model, cache, logits, layers, a, b,
                                              model.ln_final.kind == "layer")
            final = cache[f"blocks.{layers - 1}.hook_resid_post"][-1]
            tol = 1e-4 if label == "32" else 1e-12
            assert float((residual_sum - final).abs().max()) < tol, (name, label, "residual")
            total = sum(float(v.sum()) for key, v in parts.items() if key != "total")
            sums[label] = abs(total - float(parts["total"]))
            assert sums[label] < (1e-4 if label == "32" else 1e-10), (name, label, sums[label])
            for key, v in parts.items():
                expected[f"attribution{label}.{key}"] = v.to(torch.float64).numpy()
        d_attr = max(float(np.abs(expected[f"attribution32.{key}"]
                                  - expected[f"attribution64.{key}"]).max()) for key in parts)
        assert d_attr < 1e-4, (name, "attribution float32 vs float64", d_attr)

        corrupted = corrupt(ids, c["vocab"])
        expected["corrupted"] = corrupted.to(torch.float64).numpy()
        for label, (model, logits, cache) in runs.items():
            with torch.no_grad():
                patched = patching(model, ids, cache, corrupted, layers, c["heads"], a, b)
            for key, v in patched.items():
                expected[f"patch{label}.{key}"] = v.to(torch.float64).numpy()
        # The clean metric is the recorded forward's own logit difference.
        d_clean = abs(float(expected["patch64.metrics"][0]) - float(logits64[-1, a] - logits64[-1, b]))
        assert d_clean < 1e-12, (name, "clean metric", d_clean)
        d_patch = max(float(np.abs(expected[f"patch32.{key}"] - expected[f"patch64.{key}"]).max())
                      for key in patched)
        assert d_patch < 1e-3, (name, "patching float32 vs float64", d_patch)

        meta = {"case": name, "folder": folder, "family": family, "top_k": str(TOP_K),
                "token": str(a)}
        path = os.path.join(OUT, name + ".expected.safetensors")
        write_safetensors(path, expected, meta)
        back, back_meta = read_safetensors(path)
        assert back_meta == meta and all(np.array_equal(back[k], expected[k]) for k in expected)
        heads = expected["attribution64.heads"]
        print("wrote analysis/%s: answers %d, %d (logit diff %.3f, largest head part %.3f); "
              "f32-f64 lens %.1e rollout %.1e attribution %.1e; parts vs total f64 %.1e; "
              "margins top-k %.1e token %.1e; patching f32-f64 %.1e"
              % (name, a, b, float(expected["attribution64.total"][0]),
                 float(np.abs(heads).max()), d_lens, d_roll, d_attr, sums["64"], margin_k,
                 margin_t, d_patch))


if __name__ == "__main__":
    main()
