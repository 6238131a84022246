// A small random GPT-2 checkpoint (config.json, Hugging Face's tensor names, seeded weights) and the
// seeded floats it is made of: shared by the tests (tests/js) and the build's data scripts
// (scripts/data/make-blog-snapshots.mjs).
import { writeSafetensors } from './safetensors.mjs';

/** Deterministic pseudo-random floats in [-1, 1) (a small LCG; no dependence on the module). */
export function lcgFloats(count, seed = 1) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** config.json of a GPT-2 of these sizes. */
export function gpt2Config({ layers = 1, heads = 2, d = 8, vocab = 50257, context = 16 } = {}) {
  return {
    architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_layer: layers, n_head: heads,
    n_embd: d, n_positions: context, n_ctx: context, vocab_size: vocab, n_inner: null,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new',
  };
}

/** HF GPT-2 tensors ({ name: { dtype, shape, data } }) with small seeded random weights. */
export function gpt2Tensors({ layers = 1, d = 8, vocab = 50257, context = 16, prefix = '' } = {}) {
  let seed = 1;
  const t = (shape) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = lcgFloats(size, seed++).map((v) => v * 0.1);
    return { dtype: 'F32', shape, data };
  };
  const tensors = { [`${prefix}wte.weight`]: t([vocab, d]), [`${prefix}wpe.weight`]: t([context, d]) };
  for (let l = 0; l < layers; ++l) {
    const p = `${prefix}h.${l}.`;
    Object.assign(tensors, {
      [`${p}ln_1.weight`]: t([d]), [`${p}ln_1.bias`]: t([d]),
      [`${p}attn.c_attn.weight`]: t([d, 3 * d]), [`${p}attn.c_attn.bias`]: t([3 * d]),
      [`${p}attn.c_proj.weight`]: t([d, d]), [`${p}attn.c_proj.bias`]: t([d]),
      [`${p}ln_2.weight`]: t([d]), [`${p}ln_2.bias`]: t([d]),
      [`${p}mlp.c_fc.weight`]: t([d, 4 * d]), [`${p}mlp.c_fc.bias`]: t([4 * d]),
      [`${p}mlp.c_proj.weight`]: t([4 * d, d]), [`${p}mlp.c_proj.bias`]: t([d]),
    });
  }
  tensors[`${prefix}ln_f.weight`] = t([d]);
  tensors[`${prefix}ln_f.bias`] = t([d]);
  return tensors;
}

/** loadCheckpoint options of a random GPT-2 with GPT-2's 50 257 ids (1 layer, d 8: 1.6 MB). */
export function gpt2SizedCheckpoint(sizes = {}) {
  return { weights: writeSafetensors(gpt2Tensors(sizes)), config: gpt2Config(sizes) };
}
