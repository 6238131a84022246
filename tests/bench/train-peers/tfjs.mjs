// The training benchmark's TensorFlow.js peer: @tensorflow/tfjs-core 4.22 with its wasm backend
// (SIMD, one thread), the standard transformer as tfjs ops, tf.variableGrads, global-norm
// clipping and tf.train.adam. tfjs has no AdamW: the decoupled weight decay is applied to every
// variable (w ← w·(1 − lr·wd)) just before the Adam update, which is exactly torch's AdamW.
// tfjs 4.22's wasm backend has no UnsortedSegmentSum (gather's gradient), so the embedding
// lookup is a one-hot matmul.
import { register } from 'node:module';

import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';

// tfjs-core's Node bundle registers no gradients (the @tensorflow/tfjs union package imports
// tfjs-core/dist/register_all_gradients.js for that, an ES module whose relative imports have no
// extension, which Node's loader refuses). A resolve hook adds the '.js' for imports inside
// tfjs-core/dist only; the registries are global, so the Node bundle's engine sees the gradients.
const RESOLVE_JS = `export async function resolve(specifier, context, next) {
  try { return await next(specifier, context); } catch (error) {
    const inside = context.parentURL && context.parentURL.includes('/@tensorflow/tfjs-core/dist/');
    if (inside && specifier.startsWith('.')) return next(specifier + '.js', context);
    throw error;
  }
}`;

/**
 * Registers tfjs's gradients and selects the wasm backend, one thread (as bench.mjs does).
 * Returns the tfjs version.
 */
export async function initTfjs() {
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_JS)}`);
  await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
  await tf.ready();
  return tf.version_core;
}

function layerNorm(x, w, b, eps) {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), w), b);
}

/**
 * The benchmark peer (call initTfjs() first): tfjs variables initialised from the setup's
 * parameters. step({ ids, targets }) runs one training step and returns the loss before its update.
 */
export function createTfjsPeer(setup) {
  const { config, optimizer: o } = setup;
  const { vocab: V, context: T, dModel: C, heads: H, layers: L } = config;
  const hs = C / H;
  const lnEps = setup.lnEps ?? 1e-5;
  // Dense kernels as tfjs code keeps them, [in, out] (tf.layers.dense's layout), so the forward
  // is x·W without transposes: every [out, in] weight (PyTorch layout) is transposed once here,
  // before any timing. (Both layouts timed alike on this machine.)
  const transposed = (w, rows, cols) => {
    const t = new Float32Array(w.length);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
    return tf.tensor2d(t, [cols, rows]);
  };
  const isKernel = (name) => /(in_proj_weight|out_proj\.weight|unembed\.weight)$/.test(name);
  const vars = Object.fromEntries(
    Object.entries(setup.params).map(([name, w]) => {
      let value;
      if (isKernel(name)) value = transposed(w, w.length / C, C);
      else if (name === 'embed.weight' || name === 'pos.weight') value = tf.tensor2d(w, [w.length / C, C]);
      else value = tf.tensor1d(w);
      return [name, tf.variable(value, true)];
    }),
  );
  const p = (name) => vars[name];
  const adam = tf.train.adam(o.lr, o.beta1, o.beta2, o.eps);
  // causal mask as an additive bias [T, T]: 0 on and below the diagonal, -1e9 above
  const causal = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causal[i * T + j] = -1e9;
  const maskBias = tf.tensor2d(causal, [T, T]);

  function loss(oneHotIds, targetWeights, B) {
    const N = B * T;
    let x = tf.add(tf.reshape(tf.matMul(oneHotIds, p('embed.weight')), [B, T, C]), p('pos.weight'));
    x = tf.reshape(x, [N, C]);
    for (let l = 0; l < L; l++) {
      const pre = `layers.${l}.`;
      const h = layerNorm(x, p(`${pre}ln1.weight`), p(`${pre}ln1.bias`), lnEps);
      const qkv = tf.add(tf.matMul(h, p(`${pre}attn.in_proj_weight`)), p(`${pre}attn.in_proj_bias`));
      const heads = (m) => tf.transpose(tf.reshape(m, [B, T, H, hs]), [0, 2, 1, 3]); // [B, H, T, hs]
      const [q, k, v] = tf.split(qkv, 3, 1).map(heads);
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(hs)), maskBias);
      const y = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), v), [0, 2, 1, 3]), [N, C]);
      const out = tf.add(tf.matMul(y, p(`${pre}attn.out_proj.weight`)), p(`${pre}attn.out_proj.bias`));
      x = tf.add(x, out);
    }
    const logits = tf.matMul(layerNorm(x, p('ln_f.weight'), p('ln_f.bias'), lnEps), p('unembed.weight'));
    // mean cross-entropy over the kept targets: targetWeights is 1/count at each target, else 0
    return tf.neg(tf.sum(tf.mul(targetWeights, tf.logSoftmax(logits))));
  }

  return {
    name: 'tfjs-wasm',
    step({ ids, targets }) {
      const N = ids.length;
      const B = N / T;
      const oneHot = new Float32Array(N * V);
      const weights = new Float32Array(N * V);
      let count = 0;
      for (let n = 0; n < N; n++) if (targets[n] >= 0) count++;
      for (let n = 0; n < N; n++) {
        oneHot[n * V + ids[n]] = 1;
        if (targets[n] >= 0) weights[n * V + targets[n]] = 1 / count;
      }
      const value = tf.tidy(() => {
        const oneHotIds = tf.tensor2d(oneHot, [N, V]);
        const targetWeights = tf.tensor2d(weights, [N, V]);
        const { value: lossValue, grads } = tf.variableGrads(() => loss(oneHotIds, targetWeights, B), Object.values(vars));
        // global-norm clipping, as torch's clip_grad_norm_
        const norm = tf.sqrt(tf.addN(Object.values(grads).map((g) => tf.sum(tf.square(g)))));
        const factor = tf.minimum(1, tf.div(o.clip, tf.add(norm, 1e-6)));
        const clipped = Object.fromEntries(Object.entries(grads).map(([name, g]) => [name, tf.mul(g, factor)]));
        for (const w of Object.values(vars)) w.assign(tf.mul(w, 1 - o.lr * o.weightDecay)); // AdamW's decay
        adam.applyGradients(clipped);
        return lossValue;
      });
      const result = value.dataSync()[0];
      value.dispose();
      return result;
    },
    dispose() {
      adam.dispose();
      maskBias.dispose();
      Object.values(vars).forEach((v) => v.dispose());
    },
  };
}
