// Tutorial presets: the seeds' NumPy examples rebuilt exactly (inputs and weights drawn with
// lens.numpyRandn, the bit-exact np.random.RandomState stream) and the lines their code prints.
// This file only arranges numbers into the layouts the API takes; the core does the math.
import { numpyArrayString, pythonShape } from './format.js';

/** Consecutive draws from one RandomState(seed).randn stream. */
export function randnStream(lens, seed, total) {
  const values = lens.numpyRandn(seed, total);
  let at = 0;
  return {
    take(count, scale = 1) {
      if (at + count > total) throw new Error('preset drew more values than its stream holds');
      const out = values.slice(at, at + count).map((v) => v * scale);
      at += count;
      return out;
    },
  };
}

/**
 * in_proj_weight rows for one projection from per-head [dModel, dK] matrices, as the tutorial
 * builds PyTorch's: the heads concatenated along columns, then transposed.
 */
export function transposedHeads(perHead, heads, dModel, dK) {
  const out = [];
  for (let h = 0; h < heads; ++h) {
    for (let c = 0; c < dK; ++c) {
      for (let r = 0; r < dModel; ++r) out.push(perHead[(h * dModel + r) * dK + c]);
    }
  }
  return out;
}

/** in_proj_weight [3·heads·dK, dModel] from the tutorial's W_Q, W_K, W_V. */
export const inProjFrom = (ws, heads, dModel, dK) =>
  Float32Array.from(ws.flatMap((w) => transposedHeads(w, heads, dModel, dK)));

/** out_proj.weight = W_Oᵀ for a square W_O [d, d]. */
export function transposeSquare(w, d) {
  const out = new Float32Array(d * d);
  for (let o = 0; o < d; ++o) for (let c = 0; c < d; ++c) out[o * d + c] = w[c * d + o];
  return out;
}

const labels = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** The tutorial's per-head weights drawn by its MultiHeadAttention class (seed 004). */
function mhaClassWeights(lens, seed, heads, dModel) {
  const dK = dModel / heads;
  const rng = randnStream(lens, seed, 3 * heads * dModel * dK + dModel * dModel);
  const [W_Q, W_K, W_V] = [0, 1, 2].map(() => rng.take(heads * dModel * dK, 0.1));
  const W_O = rng.take(dModel * dModel, 0.1);
  return {
    inProjWeight: inProjFrom([W_Q, W_K, W_V], heads, dModel, dK),
    outProjWeight: transposeSquare(W_O, dModel),
  };
}

export const PRESET_INFO = {
  'seed001-causal': {
    title: 'Tutorial 001: causal self-attention in NumPy',
    code: 'np.random.seed(0); n, d_model, d_k = 5, 16, 8; X, Wq, Wk, Wv = randn(...); causal mask',
  },
  'seed004-single': {
    title: 'Tutorial 004: scaled dot-product attention, one head',
    code: 'np.random.seed(42); X = randn(4, 8); W_Q, W_K, W_V = randn(8, 8) * 0.1',
  },
  'seed004-multi': {
    title: 'Tutorial 004: multi-head attention, 4 heads',
    code: 'np.random.seed(42); X = randn(6, 16); MultiHeadAttention(16, 4, seed=42)',
  },
  'seed004-pytorch': {
    title: 'Tutorial 004: the scratch MultiHeadAttention that matches PyTorch',
    code: 'np.random.seed(42); X_np = randn(4, 8).astype(float32); MultiHeadAttention(8, 2, seed=0)',
  },
};

/**
 * A one-head preset without W_O, as seeds 001 and 004 build it: X = randn(n, d_model), then W_Q,
 * W_K, W_V = randn(d_model, d_k) · scale, all from one RandomState(seed) stream.
 */
function singleHeadPreset(lens, { seed, n, dModel, dK, scale, prefix, mask, printout }) {
  const rng = randnStream(lens, seed, n * dModel + 3 * dModel * dK);
  const x = Float32Array.from(rng.take(n * dModel));
  const ws = [0, 1, 2].map(() => rng.take(dModel * dK, scale));
  return {
    config: { dModel, heads: 1, headDim: dK, bias: false, outProj: false, positional: 'none' },
    tokens: labels(prefix, n),
    x,
    weights: { inProjWeight: inProjFrom(ws, 1, dModel, dK) },
    mask,
    printout,
  };
}

/** A preset of seed 004's MultiHeadAttention class: X = randn(n, d_model) at seed 42, the class's weights at `weightSeed`. */
function mhaClassPreset(lens, { n, dModel, heads, weightSeed, printout }) {
  const x = Float32Array.from(randnStream(lens, 42, n * dModel).take(n * dModel));
  return {
    config: { dModel, heads, bias: false, outProj: true, positional: 'none' },
    tokens: labels('Token ', n),
    x,
    weights: mhaClassWeights(lens, weightSeed, heads, dModel),
    mask: 'none',
    printout,
  };
}

/**
 * Builds a preset: { config, tokens, x (Float32Array [n·dModel]), weights, mask, printout(result) }.
 * printout(result) returns the text the tutorial's print() calls show, from our numbers.
 */
export function buildPreset(lens, id) {
  switch (id) {
    case 'seed001-causal': {
      const [n, dK] = [5, 8];
      return singleHeadPreset(lens, { seed: 0, n, dModel: 16, dK, scale: 1, prefix: 'x', mask: 'causal',
        printout: () => `Output shape: ${pythonShape([n, dK])}  Attn shape: ${pythonShape([n, n])}` });
    }
    case 'seed004-single': {
      const [n, dModel] = [4, 8];
      return singleHeadPreset(lens, { seed: 42, n, dModel, dK: 8, scale: 0.1, prefix: 'Token ', mask: 'none',
        printout: (r) => [`Input shape: ${pythonShape([n, dModel])}`,
          `Output shape: ${pythonShape([n, dModel])}`,
          `Attention weights:\n ${numpyArrayString(r.attention, [n, n], 3)}`].join('\n') });
    }
    case 'seed004-multi': {
      const [n, dModel, heads] = [6, 16, 4];
      return mhaClassPreset(lens, { n, dModel, heads, weightSeed: 42,
        printout: () => [`Input shape: ${pythonShape([n, dModel])}`,
          `Output shape: ${pythonShape([n, dModel])}`,
          `Attention weights shape: ${pythonShape([heads, n, n])}`].join('\n') });
    }
    case 'seed004-pytorch': {
      const [n, dModel] = [4, 8];
      return mhaClassPreset(lens, { n, dModel, heads: 2, weightSeed: 0,
        printout: (r) => `Scratch output:\n ${numpyArrayString(r.output, [n, dModel], 4)}` });
    }
    default:
      throw new Error(`unknown tutorial preset '${String(id).slice(0, 40)}'`);
  }
}
