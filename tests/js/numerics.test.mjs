// Numerics at the edges through the wasm module (as tests/cpp/test_numerics.cpp natively):
// crafted logits of ±1e4 stay finite and pick the right keys, a row of equal -1e4 scores is
// uniform, fully masked rows are zeros on both paths, and NaN, infinity or values so large that
// float32 would overflow are refused with a message instead of spreading.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertClose, assertThrowsMessage, loadLens } from './support.mjs';

const lens = await loadLens();

// dModel 4, one head (d_k 4, scale 1/2), no biases: W_Q = 50·I, W_K = 100·I, W_V = W_O = I, so
// score(i, j) = 2500 · (x_i · kv_j) exactly, and the output is the weighted sum of the kv rows.
function craftedLayer() {
  const layer = lens.createLayer({ dModel: 4, heads: 1, bias: false });
  const inProjWeight = new Float32Array(12 * 4);
  const outProjWeight = new Float32Array(4 * 4);
  for (let i = 0; i < 4; ++i) {
    inProjWeight[i * 4 + i] = 50; // W_Q
    inProjWeight[(4 + i) * 4 + i] = 100; // W_K
    inProjWeight[(8 + i) * 4 + i] = 1; // W_V
    outProjWeight[i * 4 + i] = 1; // W_O
  }
  layer.setWeights({ inProjWeight, outProjWeight });
  return layer;
}

// x_i · kv_j ranges over -4 .. 4, so the scores reach ±1e4; query 4 ties two keys at 7500.
const queries = Float32Array.of(1, 1, 1, 1, -1, -1, -1, -1, 1, -1, 1, -1, 1, 1, -1, -1, 1, 1, 1, 0);
const keys = Float32Array.of(1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, -1, 1, -1, 1, -1);
const weights = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0.5, 0, 0.5, 0];
const cross = { n: 5, kv: keys, kvN: 4 };

/** Σ_j w_ij kv_j for every query. */
function weightedKeys(w, kv, n, kvN) {
  const out = new Float32Array(n * 4);
  for (let i = 0; i < n; ++i) {
    for (let j = 0; j < kvN; ++j) for (let c = 0; c < 4; ++c) out[i * 4 + c] += w[i * kvN + j] * kv[j * 4 + c];
  }
  return out;
}

/** Every weight finite in [0, 1] and each row summing to 1; every output finite. */
function assertProbabilityRows(r, kvN) {
  for (let row = 0; row * kvN < r.attention.length; ++row) {
    const cells = r.attention.subarray(row * kvN, (row + 1) * kvN);
    assert.ok(cells.every((a) => Number.isFinite(a) && a >= 0 && a <= 1), `row ${row}: ${cells}`);
    const sum = cells.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) <= 1e-6, `row ${row} sums to ${sum}`);
  }
  assert.ok(r.output.every(Number.isFinite), 'every output is finite');
}

const step = (r, id) => r.steps.find((s) => s.id === id).data;
const maxAbs = (values) => values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

test('crafted logits of ±1e4 stay finite, rows sum to 1 and the largest score wins', () => {
  const layer = craftedLayer();
  try {
    const r = layer.forward(queries, { ...cross, trace: true });
    const scaled = step(r, 'scaled');
    assert.equal(maxAbs(scaled), 1e4, 'the scores really are ±1e4');
    assert.equal(Math.min(...scaled), -1e4);
    assertProbabilityRows(r, 4);
    assertClose(r.attention, weights, { rtol: 1e-6, what: 'weights' });
    const expected = weightedKeys(weights, keys, 5, 4);
    assertClose(r.output, expected, { atol: 1e-6, rtol: 1e-6, what: 'output' });

    const unscaled = layer.forward(queries, { ...cross, scale: false, trace: true });
    assert.equal(maxAbs(step(unscaled, 'scaled')), 2e4, 'without 1/√d_k the scores reach ±2e4');
    assertProbabilityRows(unscaled, 4);
    assertClose(unscaled.attention, weights, { rtol: 1e-6, what: 'weights without scaling' });

    const outputOnly = layer.forward(queries, { ...cross, weights: false });
    assertClose(outputOnly.output, expected, { atol: 1e-6, rtol: 1e-6, what: 'output, weights: false' });
  } finally {
    layer.dispose();
  }
});

test('a row whose every score is -1e4 is uniform, not zero or NaN', () => {
  const layer = craftedLayer();
  try {
    const r = layer.forward(Float32Array.of(1, 1, 1, 1), { n: 1, kv: new Float32Array(12).fill(-1), kvN: 3, trace: true });
    assert.deepEqual(Array.from(step(r, 'scaled')), [-1e4, -1e4, -1e4]);
    assertProbabilityRows(r, 3);
    assertClose(r.attention, [1 / 3, 1 / 3, 1 / 3], { rtol: 1e-6, what: 'uniform' });
    assertClose(r.output, [-1, -1, -1, -1], { atol: 1e-6, what: 'the mean of the keys' });
  } finally {
    layer.dispose();
  }
});

test('fully masked rows give zero weights and a zero context on both paths', () => {
  const layer = craftedLayer();
  try {
    const cellMask = new Uint8Array(5 * 4);
    cellMask.fill(1, 2 * 4, 3 * 4); // query 2 sees no key
    const kept = layer.forward(queries, { ...cross, cellMask });
    assert.deepEqual(Array.from(kept.attention.subarray(8, 12)), [0, 0, 0, 0]);
    assert.deepEqual(Array.from(kept.output.subarray(8, 12)), [0, 0, 0, 0]);
    for (const i of [0, 1, 3, 4]) {
      const sum = kept.attention.subarray(i * 4, i * 4 + 4).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) <= 1e-6, `row ${i} sums to ${sum}`);
    }
    const outputOnly = layer.forward(queries, { ...cross, cellMask, weights: false });
    assertClose(outputOnly.output, kept.output, { atol: 1e-6, what: 'weights: false' });
    assert.deepEqual(Array.from(outputOnly.output.subarray(8, 12)), [0, 0, 0, 0]);
  } finally {
    layer.dispose();
  }
});

test('NaN and infinity in inputs or weights are reported, never spread', () => {
  const layer = craftedLayer();
  try {
    const x = Float32Array.from(queries);
    x[6] = NaN;
    assertThrowsMessage(() => layer.forward(x, cross), /x\[6\] is NaN: values must be finite/);
    const kv = Float32Array.from(keys);
    kv[3] = -Infinity;
    assertThrowsMessage(() => layer.forward(queries, { ...cross, kv }), /kv\[3\] is infinite: values must be finite/);
    const w = layer.getWeights();
    w.outProjWeight[7] = NaN;
    assertThrowsMessage(() => layer.setWeights(w), /out_proj\.weight\[7\] is NaN: values must be finite/);
    assertClose(layer.forward(queries, cross).attention, weights, { rtol: 1e-6, what: 'after the errors' });
  } finally {
    layer.dispose();
  }
});

test('finite values that would overflow float32 inside the forward are refused', () => {
  const layer = craftedLayer();
  try {
    const huge = new Float32Array(4).fill(1e18);
    assertThrowsMessage(() => layer.forward(huge, { n: 1, kv: huge, kvN: 1 }),
      /values too large for float32: the attention scores Q·Kᵀ could reach [\d.e+]+, more than the limit of 1e\+37/);
    // W_Q and W_K of 1e30 (as a .safetensors file could hold): finite, accepted, but Q·Kᵀ ≈ 1e60.
    const original = layer.getWeights();
    const inProjWeight = Float32Array.from(original.inProjWeight);
    for (let i = 0; i < 4; ++i) inProjWeight[i * 4 + i] = inProjWeight[(4 + i) * 4 + i] = 1e30;
    layer.setWeights({ ...original, inProjWeight });
    assertThrowsMessage(() => layer.forward(queries, cross),
      /the attention scores Q·Kᵀ could reach 6\.4e\+61.*with \|Q\| up to 4e\+30 and \|K\| up to 4e\+30/);
    layer.setWeights(original);
    // Large but safe: |x| = 1e8 gives scores up to 2e21; the row is one-hot.
    const r = layer.forward(new Float32Array(4).fill(1e8), { n: 1, kv: keys, kvN: 4 });
    assertProbabilityRows(r, 4);
    assert.equal(r.attention[0], 1);
  } finally {
    layer.dispose();
  }
});
