// The training benchmark's plain-JS peer and shared set-up (tests/bench/train-peers/): the
// hand-written backward against central finite differences in float64 on a tiny config, the
// AdamW step against its closed form, the induction batches and the .safetensors round trip.
// (The benchmark itself also cross-checks every peer's losses against PyTorch's.)
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CONFIG,
  decodeSafetensors,
  encodeSafetensors,
  inductionBatches,
  initialParameters,
  parameterShapes,
} from '../bench/train-peers/setup.mjs';
import { adamwState, adamwStep, lossAndGradients } from '../bench/train-peers/plain.mjs';

const TINY = { ...CONFIG, vocab: 7, context: 6, dModel: 8, heads: 2, layers: 2, batch: 2 };

function tinyProblem() {
  const params = Object.fromEntries(Object.entries(initialParameters(TINY, 3)).map(([k, v]) => [k, Float64Array.from(v)]));
  const ids = Int32Array.from([0, 3, 6, 1, 3, 2, 5, 5, 4, 0, 1, 6]);
  const targets = Int32Array.from([3, -1, 1, 3, 2, -1, 5, 4, -1, 1, 6, 2]);
  return { params, ids, targets };
}

test('plain JS backward matches central finite differences (float64) for every parameter', () => {
  const { params, ids, targets } = tinyProblem();
  const opts = { Float: Float64Array };
  const { loss, grads } = lossAndGradients(params, TINY, ids, targets, opts);
  assert.ok(Number.isFinite(loss) && loss > 0);
  assert.deepEqual(Object.keys(grads), parameterShapes(TINY).map(([name]) => name));
  const h = 1e-5;
  let checked = 0;
  for (const [name, w] of Object.entries(params)) {
    let worst = 0;
    for (let i = 0; i < w.length; i++) {
      const saved = w[i];
      w[i] = saved + h;
      const up = lossAndGradients(params, TINY, ids, targets, opts).loss;
      w[i] = saved - h;
      const down = lossAndGradients(params, TINY, ids, targets, opts).loss;
      w[i] = saved;
      const numeric = (up - down) / (2 * h);
      worst = Math.max(worst, Math.abs(numeric - grads[name][i]) / (1e-6 + Math.abs(numeric)));
      checked++;
    }
    assert.ok(worst < 1e-4, `${name}: relative error ${worst.toExponential(2)} vs finite differences`);
  }
  assert.ok(checked > 500);
});

test('plain JS ignores targets < 0 and averages over the kept ones', () => {
  const { params, ids, targets } = tinyProblem();
  const all = lossAndGradients(params, TINY, ids, targets, { Float: Float64Array }).loss;
  // the same loss with one kept target dropped, recombined by hand: the mean over 9 targets
  const one = Int32Array.from(targets, (t, i) => (i === 0 ? t : -1));
  const rest = Int32Array.from(targets, (t, i) => (i === 0 ? -1 : t));
  const lossOne = lossAndGradients(params, TINY, ids, one, { Float: Float64Array }).loss;
  const lossRest = lossAndGradients(params, TINY, ids, rest, { Float: Float64Array }).loss;
  const kept = targets.filter((t) => t >= 0).length;
  assert.ok(Math.abs(all - (lossOne + (kept - 1) * lossRest) / kept) < 1e-12);
});

test('AdamW step: decoupled decay, bias-corrected first step, global-norm clipping', () => {
  const options = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, clip: 1.0 };
  const params = { a: Float64Array.from([1, -2]), b: Float64Array.from([0.5]) };
  const grads = { a: Float64Array.from([3, 0]), b: Float64Array.from([-4]) }; // norm 5: clipped to 1
  const state = adamwState(params, Float64Array);
  assert.equal(adamwStep(params, grads, state, options), 5);
  // step 1: m̂ = g·f, v̂ = (g·f)², so w ← w(1 − lr·wd) − lr·g·f / (|g·f| + eps), f = 1/(5 + 1e-6)
  const f = 1 / (5 + 1e-6);
  const expected = (w, g) => w * (1 - 1e-5) - (1e-3 * g * f) / (Math.abs(g * f) + 1e-8);
  assert.ok(Math.abs(params.a[0] - expected(1, 3)) < 1e-12);
  assert.ok(Math.abs(params.a[1] - expected(-2, 0)) < 1e-12);
  assert.ok(Math.abs(params.b[0] - expected(0.5, -4)) < 1e-12);
  assert.ok(Math.abs(state.m.a[0] - 0.1 * 3 * f) < 1e-12);
});

test('induction batches: the second half repeats the first, targets only on the repeat', () => {
  const { ids, targets } = inductionBatches(2);
  const { batch: B, context: T, vocab: V } = CONFIG;
  assert.equal(ids.length, 2 * B * T);
  for (let row = 0; row < 2 * B; row++) {
    for (let t = 0; t < T; t++) {
      const i = row * T + t;
      assert.ok(ids[i] >= 0 && ids[i] < V);
      if (t >= T / 2) assert.equal(ids[i], ids[i - T / 2]);
      assert.equal(targets[i], t >= T / 2 && t < T - 1 ? ids[i + 1] : -1);
    }
  }
  assert.deepEqual(inductionBatches(2), { ids, targets }, 'deterministic');
  assert.notDeepEqual(ids.subarray(0, T), ids.subarray(T, 2 * T));
});

test('.safetensors round trip of the set-up tensors (F32 and I32, metadata)', () => {
  const params = initialParameters();
  const shapes = new Map(parameterShapes());
  const tensors = Object.fromEntries(Object.entries(params).map(([k, data]) => [k, { shape: shapes.get(k), data }]));
  tensors.ids = { shape: [2, 3], data: Int32Array.from([1, 2, 3, -1, 5, 6]) };
  const bytes = encodeSafetensors(tensors, { config: JSON.stringify(CONFIG) });
  const headerEnd = 8 + Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal(headerEnd % 8, 0, 'data 8-byte aligned');
  const back = decodeSafetensors(bytes);
  assert.deepEqual(JSON.parse(back.metadata.config), CONFIG);
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    assert.deepEqual(back.tensors[name].shape, shape);
    assert.deepEqual(back.tensors[name].data, data, name);
  }
});
