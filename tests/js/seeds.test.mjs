// The tutorials' NumPy examples (shared/seeds 001 and 004) replayed through the JS API, number
// for number, as tests/cpp/test_seeds.cpp does natively: weights drawn with lens.numpyRandn
// exactly as the tutorials draw them, then outputs and attention against NumPy's float64.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { inProjFrom, randnStream, transposedHeads, transposeSquare } from '../../web/shared/presets.js';
import { assertClose, loadLens, numpyPath, readSafetensors } from './support.mjs';

// The tutorial's weight layouts, shared with the page's presets (web/shared/presets.js): they only
// arrange numbers; every result below is checked against NumPy's own output.
const stream = randnStream;
const inProj = inProjFrom;

/** The numbers in a NumPy-printed array, e.g. "[[0.245 0.254]\n [0.3 0.2]]". */
function printedNumbers(text) {
  return (text.match(/-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/g) ?? []).map(Number);
}

test('numpyRandn equals NumPy RandomState(seed).randn(2000) bit for bit for every stored seed',
  async () => {
    const lens = await loadLens();
    const { tensors } = readSafetensors(numpyPath('randn_streams'));
    const seeds = Object.keys(tensors).filter((k) => /^seed_\d+$/.test(k));
    assert.deepEqual(seeds.sort(), ['seed_0', 'seed_1', 'seed_123456789', 'seed_42', 'seed_4294967295']);
    for (const key of seeds) {
      const seed = Number(key.slice('seed_'.length));
      const want = tensors[key].data;
      assert.equal(want.length, 2000);
      const got = lens.numpyRandn(seed, 2000);
      assert.ok(got instanceof Float64Array);
      assert.equal(got.length, 2000);
      for (let i = 0; i < 2000; ++i) {
        if (got[i] !== want[i]) {
          assert.fail(`seed ${seed}: index ${i} got ${got[i]} want ${want[i]}`);
        }
      }
    }
  });

test('numpyRandn is a prefix-stable stream: a shorter count gives the same leading values',
  async () => {
    const lens = await loadLens();
    const { tensors } = readSafetensors(numpyPath('randn_streams'));
    // Odd counts end on the first value of a Box–Muller pair; the next call must not reuse it.
    for (const count of [0, 1, 7, 473, 474]) {
      const got = lens.numpyRandn(123456789, count);
      assert.equal(got.length, count);
      assert.deepEqual(got, tensors.seed_123456789.data.slice(0, count));
    }
  });

test('seed 001: the causal single-head example (np.random.seed(0)) matches NumPy', async () => {
  const lens = await loadLens();
  const { tensors: t, metadata } = readSafetensors(numpyPath('seed001_causal'));
  assert.equal(typeof metadata.description, 'string');
  const n = 5;
  const dModel = 16;
  const dK = 8;
  const rng = stream(lens, 0, n * dModel + 3 * dModel * dK);
  const X = rng.take(n * dModel);
  const Wq = rng.take(dModel * dK);
  const Wk = rng.take(dModel * dK);
  const Wv = rng.take(dModel * dK);
  assert.deepEqual(X, t.X.data); // bit for bit
  assert.deepEqual(Wq, t.Wq.data);
  assert.deepEqual(Wk, t.Wk.data);
  assert.deepEqual(Wv, t.Wv.data);

  const layer = lens.createLayer({ dModel, heads: 1, headDim: dK, bias: false, outProj: false,
    positional: 'none' });
  try {
    assert.equal(layer.config.headDim, dK);
    layer.setWeights({ inProjWeight: inProj([Wq, Wk, Wv], 1, dModel, dK) });
    const r = layer.forward(Float32Array.from(X), { n, mask: 'causal', trace: true });
    // The example prints "Output shape: (5, 8)  Attn shape: (5, 5)".
    const shapes = metadata.printed.match(/\((\d+), (\d+)\)\D+\((\d+), (\d+)\)/);
    assert.ok(shapes, `unexpected printout ${metadata.printed}`);
    const [yRows, yCols, aRows, aCols] = shapes.slice(1).map(Number);
    assert.equal(r.output.length, yRows * yCols);
    assert.equal(r.attention.length, aRows * aCols);
    assertClose(r.output, t.Y.data, { atol: 1e-5, rtol: 1e-5, what: 'Y' });
    assertClose(r.attention, t.A.data, { atol: 1e-6, rtol: 1e-5, what: 'A' });
    const step = (id) => {
      const found = r.steps.filter((s) => s.id === id);
      assert.equal(found.length, 1, `one '${id}' step for one head`);
      return found[0];
    };
    assertClose(step('q').data, t.Q.data, { atol: 1e-5, rtol: 1e-5, what: 'Q' });
    assertClose(step('k').data, t.K.data, { atol: 1e-5, rtol: 1e-5, what: 'K' });
    assertClose(step('v').data, t.V.data, { atol: 1e-5, rtol: 1e-5, what: 'V' });
    assertClose(step('scaled').data, t.scores.data, { atol: 1e-5, rtol: 1e-5, what: 'scores' });
    // The tutorial adds -1e9 above the diagonal; the core writes -inf there and keeps the rest.
    const masked = step('masked').data;
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < n; ++j) {
        const want = j > i ? -Infinity : t.scores.data[i * n + j];
        if (j > i) assert.equal(masked[i * n + j], -Infinity, `masked[${i}][${j}]`);
        else assertClose([masked[i * n + j]], [want], { atol: 1e-5, rtol: 1e-5, what: `masked[${i}][${j}]` });
      }
    }
  } finally {
    layer.dispose();
  }
});

test('seed 004: the single-head example (np.random.seed(42)) matches NumPy and its printout',
  async () => {
    const lens = await loadLens();
    const { tensors: t, metadata } = readSafetensors(numpyPath('seed004_single_head'));
    const rng = stream(lens, 42, 4 * 8 + 3 * 64);
    const X = rng.take(4 * 8);
    const W_Q = rng.take(64, 0.1);
    const W_K = rng.take(64, 0.1);
    const W_V = rng.take(64, 0.1);
    assert.deepEqual(X, t.X.data);
    assert.deepEqual(W_Q, t.W_Q.data);
    assert.deepEqual(W_K, t.W_K.data);
    assert.deepEqual(W_V, t.W_V.data);

    const layer = lens.createLayer({ dModel: 8, heads: 1, headDim: 8, bias: false, outProj: false });
    try {
      layer.setWeights({ inProjWeight: inProj([W_Q, W_K, W_V], 1, 8, 8) });
      const r = layer.forward(Float32Array.from(X), { n: 4 });
      assertClose(r.output, t.output.data, { atol: 1e-6, rtol: 1e-5, what: 'output' });
      assertClose(r.attention, t.weights.data, { atol: 1e-7, rtol: 1e-5, what: 'weights' });
      // The numbers the tutorial prints (np.round(weights, 3)) are ours rounded the same way.
      const printed = printedNumbers(metadata.printed_weights);
      assert.equal(printed.length, 16, `parsed ${metadata.printed_weights}`);
      for (let i = 0; i < 16; ++i) {
        const rounded = Math.round(r.attention[i] * 1000) / 1000;
        assert.ok(Math.abs(rounded - printed[i]) < 1e-9,
          `weights[${i}] = ${r.attention[i]} rounds to ${rounded}, the tutorial prints ${printed[i]}`);
      }
    } finally {
      layer.dispose();
    }
  });

test('seed 004: the multi-head example (4 heads, MultiHeadAttention(seed=42)) matches NumPy',
  async () => {
    const lens = await loadLens();
    const { tensors: t } = readSafetensors(numpyPath('seed004_multi_head'));
    const heads = 4;
    const dModel = 16;
    const dK = 4;
    const X = stream(lens, 42, 6 * 16).take(6 * 16); // np.random.seed(42); randn(6, 16)
    const rng = stream(lens, 42, 3 * heads * dModel * dK + dModel * dModel); // the class's own
    const W_Q = rng.take(heads * dModel * dK, 0.1);
    const W_K = rng.take(heads * dModel * dK, 0.1);
    const W_V = rng.take(heads * dModel * dK, 0.1);
    const W_O = rng.take(dModel * dModel, 0.1);
    assert.deepEqual(X, t.X.data);
    assert.deepEqual(W_Q, t.W_Q.data);
    assert.deepEqual(W_K, t.W_K.data);
    assert.deepEqual(W_V, t.W_V.data);
    assert.deepEqual(W_O, t.W_O.data);

    const layer = lens.createLayer({ dModel, heads, bias: false, outProj: true });
    try {
      assert.equal(layer.config.headDim, dK);
      layer.setWeights({
        inProjWeight: inProj([W_Q, W_K, W_V], heads, dModel, dK),
        outProjWeight: transposeSquare(W_O, dModel),
      });
      const r = layer.forward(Float32Array.from(X), { n: 6 });
      assertClose(r.output, t.output.data, { atol: 1e-6, rtol: 1e-5, what: 'output' });
      assertClose(r.attention, t.all_weights.data, { atol: 1e-7, rtol: 1e-5, what: 'all_weights' });
    } finally {
      layer.dispose();
    }
  });

test('seed 004: the NumPy-vs-PyTorch comparison block matches out_np (and out_pt)', async () => {
  const lens = await loadLens();
  const { tensors: t } = readSafetensors(numpyPath('seed004_pytorch_compare'));
  const heads = 2;
  const dModel = 8;
  const dK = 4;
  // np.random.seed(42); X_np = randn(4, 8).astype(float32)
  const X = Float32Array.from(stream(lens, 42, 32).take(32));
  assert.deepEqual(Float64Array.from(X), t.X.data);
  // MultiHeadAttention(8, 2, seed=0): its own RandomState(0), weights randn * 0.1.
  const rng = stream(lens, 0, 3 * heads * dModel * dK + dModel * dModel);
  const W_Q = rng.take(heads * dModel * dK, 0.1);
  const W_K = rng.take(heads * dModel * dK, 0.1);
  const W_V = rng.take(heads * dModel * dK, 0.1);
  const W_O = rng.take(dModel * dModel, 0.1);
  // The block's in_proj_weight = [W_Q; W_K; W_V] (heads concatenated, transposed), float64.
  const inProj64 = [W_Q, W_K, W_V].flatMap((w) => transposedHeads(w, heads, dModel, dK));
  assert.deepEqual(Float64Array.from(inProj64), t.in_proj_weight.data);
  const outProj64 = new Float64Array(dModel * dModel);
  for (let o = 0; o < dModel; ++o) for (let c = 0; c < dModel; ++c) outProj64[o * dModel + c] = W_O[c * dModel + o];
  assert.deepEqual(outProj64, t.out_proj_weight.data);

  const layer = lens.createLayer({ dModel, heads, bias: false, outProj: true });
  try {
    layer.setWeights({ inProjWeight: Float32Array.from(inProj64), outProjWeight: Float32Array.from(outProj64) });
    const r = layer.forward(X, { n: 4 });
    assertClose(r.output, t.out_np.data, { atol: 1e-6, rtol: 1e-5, what: 'out_np' });
    if (t.out_pt) assertClose(r.output, t.out_pt.data, { atol: 1e-6, rtol: 1e-5, what: 'out_pt' });
  } finally {
    layer.dispose();
  }
});
