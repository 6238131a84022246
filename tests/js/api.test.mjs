// The public JS API's behaviour (README "The JavaScript API"): result shapes, the
// trace, copies vs views, masks, weight round trips, tokenizer and embeddings, the single-file
// build. Expected values come from invariants computed here in plain JS (or from golden data),
// never from a second call down the same code path.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  assertBitIdentical, assertClose, assertMatchesGolden, goldenForwardOptions, goldenLayer,
  lcgFloats, loadGoldenCase, loadLens, parseSafetensors,
} from './support.mjs';
import { withLayer } from './api-support.mjs';

// ---- small plain-JS references ----------------------------------------------------------------

/** a [rows, inner] · b [inner, cols] (+ bias [cols]); float64 accumulation. */
function matmul(a, b, rows, inner, cols, bias = null) {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; ++i) {
    for (let j = 0; j < cols; ++j) {
      let s = bias ? bias[j] : 0;
      for (let k = 0; k < inner; ++k) s += a[i * inner + k] * b[k * cols + j];
      out[i * cols + j] = s;
    }
  }
  return out;
}

/** Rows [first, first + count) of a row-major [*, cols] matrix, transposed: [cols, count]. */
function rowsTransposed(m, first, count, cols) {
  const out = new Float64Array(cols * count);
  for (let r = 0; r < count; ++r) for (let c = 0; c < cols; ++c) out[c * count + r] = m[(first + r) * cols + c];
  return out;
}

/** Columns [first, first + count) of a row-major [rows, cols] matrix. */
function columns(m, rows, cols, first, count) {
  const out = new Float64Array(rows * count);
  for (let r = 0; r < rows; ++r) for (let c = 0; c < count; ++c) out[r * count + c] = m[r * cols + first + c];
  return out;
}

/** Row softmax over the visible cells of scores [n, kvN]; hidden cells and empty rows give 0. */
function maskedSoftmax(scores, visible, n, kvN) {
  const out = new Float64Array(n * kvN);
  for (let i = 0; i < n; ++i) {
    let max = -Infinity;
    for (let j = 0; j < kvN; ++j) if (visible(i, j)) max = Math.max(max, scores[i * kvN + j]);
    if (max === -Infinity) continue;
    let sum = 0;
    for (let j = 0; j < kvN; ++j) if (visible(i, j)) sum += Math.exp(scores[i * kvN + j] - max);
    for (let j = 0; j < kvN; ++j) {
      if (visible(i, j)) out[i * kvN + j] = Math.exp(scores[i * kvN + j] - max) / sum;
    }
  }
  return out;
}

/** The attention slice of head h: [n, kvN]. */
const headSlice = (attention, h, n, kvN) => attention.subarray(h * n * kvN, (h + 1) * n * kvN);

// ---- result shapes ----------------------------------------------------------------------------

test('self-attention returns output [n·dModel] and attention [heads·n·n]', async () => {
  await withLayer({ dModel: 12, heads: 3, seed: 1 }, (layer) => {
    const n = 5;
    const r = layer.forward(lcgFloats(n * 12, 1), { n });
    assert.ok(r.output instanceof Float32Array);
    assert.equal(r.output.length, n * 12);
    assert.ok(r.attention instanceof Float32Array);
    assert.equal(r.attention.length, 3 * n * n);
    assert.equal(r.steps, undefined, 'no steps without trace: true');
    // Each query row of each head is a probability distribution.
    for (let row = 0; row < 3 * n; ++row) {
      const sum = r.attention.subarray(row * n, row * n + n).reduce((a, b) => a + b, 0);
      assertClose([sum], [1], { atol: 1e-6, what: `row ${row} sum` });
    }
  });
});

test('cross-attention returns output [n·dModel] and attention [heads·n·kvN]', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 2 }, (layer) => {
    const n = 3;
    const kvN = 7;
    const r = layer.forward(lcgFloats(n * 8, 2), { n, kv: lcgFloats(kvN * 8, 3), kvN });
    assert.equal(r.output.length, n * 8);
    assert.equal(r.attention.length, 2 * n * kvN);
    // kvN defaults to kv.length / dModel, n to x.length / dModel.
    const d = layer.forward(lcgFloats(n * 8, 2), { kv: lcgFloats(kvN * 8, 3) });
    assertBitIdentical(d.output, r.output, 'output with n and kvN inferred');
    assertBitIdentical(d.attention, r.attention, 'attention with n and kvN inferred');
  });
});

test('without an output projection the output is the concatenated heads [n·heads·headDim]',
  async () => {
    await withLayer({ dModel: 8, heads: 2, headDim: 3, outProj: false, seed: 3 }, (layer) => {
      assert.equal(layer.config.headDim, 3);
      const r = layer.forward(lcgFloats(4 * 8, 4), { n: 4, trace: true });
      assert.equal(r.output.length, 4 * 2 * 3);
      assert.equal(r.attention.length, 2 * 4 * 4);
      const concat = r.steps.find((s) => s.id === 'concat');
      assertBitIdentical(r.output, concat.data, 'output vs concat');
    });
  });

test('config reports the normalized options', async () => {
  await withLayer({ dModel: 24, heads: 6 }, (layer) => {
    assert.deepEqual({ ...layer.config }, {
      dModel: 24, heads: 6, headDim: 4, kvHeads: 6, bias: true, outBias: true, outProj: true, positional: 'none',
      rope: { pairing: 'interleaved', base: 10000, frequencies: null, rotaryDims: 0 }, scale: 0, softcap: 0,
      qkNorm: 'none', qkNormWeight: 'plain', qkNormEps: 1e-6, seed: 42,
    });
    assert.ok(Object.isFrozen(layer.config));
  });
  // The Llama family's options: grouped-query heads, q/k/v biases without an output bias, rotate-half RoPE.
  await withLayer({ dModel: 16, heads: 4, kvHeads: 2, outBias: false, positional: 'rope', rope: { pairing: 'rotate-half', base: 1e6 } }, (layer) => {
    assert.equal(layer.config.kvHeads, 2);
    assert.equal(layer.config.outBias, false);
    assert.deepEqual(layer.config.rope, { pairing: 'rotate-half', base: 1e6, frequencies: null, rotaryDims: 0 });
    const weights = layer.getWeights();
    assert.equal(weights.inProjWeight.length, (4 + 2 * 2) * 4 * 16);
    assert.equal(weights.outProjBias, undefined);
  });
  const lens = await loadLens();
  assert.throws(() => lens.createLayer({ heads: 4, kvHeads: 3 }), /kvHeads must divide heads/);
  assert.throws(() => lens.createLayer({ positional: 'rope', rope: { pairing: 'halves' } }), /rope.pairing must be 'interleaved' or 'rotate-half', got 'halves'/);
  assert.throws(() => lens.createLayer({ rope: { spin: 1 } }), /unknown rope key 'spin'/);
});

// ---- the trace --------------------------------------------------------------------------------

test('trace: steps come in walkthrough order with per-head steps grouped by head', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 4 }, (layer) => {
    const r = layer.forward(lcgFloats(4 * 8, 5), { n: 4, mask: 'causal', trace: true });
    const perHead = (id) => [`${id}#0`, `${id}#1`];
    const expected = ['embedding#-1', 'input#-1', ...perHead('q'), ...perHead('k'), ...perHead('v'),
      ...perHead('scores'), ...perHead('scaled'), ...perHead('masked'), ...perHead('weights'),
      ...perHead('context'), 'concat#-1', 'output#-1'];
    assert.deepEqual(r.steps.map((s) => `${s.id}#${s.head}`), expected);
    for (const s of r.steps) {
      assert.equal(typeof s.title, 'string');
      assert.ok(s.title.length > 0, `${s.id} has a title`);
      assert.equal(typeof s.equation, 'string');
      assert.ok(s.equation.length > 0, `${s.id} has an equation`);
      assert.ok(s.data instanceof Float32Array, `${s.id} data is a Float32Array`);
      assert.equal(s.data.length, s.shape[0] * s.shape[1], `${s.id} data matches its shape`);
    }
  });
});

test('trace: every step has the documented shape (self- and cross-attention)', async () => {
  await withLayer({ dModel: 12, heads: 3, seed: 5 }, (layer) => {
    const n = 4;
    const kvN = 6;
    const dk = 4;
    const r = layer.forward(lcgFloats(n * 12, 6), { n, kv: lcgFloats(kvN * 12, 7), kvN, trace: true });
    const shapes = {
      embedding: [n, 12], input: [n, 12], source: [kvN, 12], q: [n, dk], k: [kvN, dk],
      v: [kvN, dk], scores: [n, kvN], scaled: [n, kvN], masked: [n, kvN], weights: [n, kvN],
      context: [n, dk], concat: [n, 12], output: [n, 12],
    };
    const ids = new Set(r.steps.map((s) => s.id));
    assert.deepEqual([...ids].sort(), Object.keys(shapes).sort());
    const order = r.steps.map((s) => s.id);
    assert.ok(order.indexOf('source') === order.indexOf('input') + 1, 'source right after input');
    for (const s of r.steps) assert.deepEqual(s.shape, shapes[s.id], `${s.id} shape`);
    for (const id of ['q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context']) {
      assert.deepEqual(r.steps.filter((s) => s.id === id).map((s) => s.head), [0, 1, 2], `${id} heads`);
    }
  });
});

test('trace: the weights step of each head equals that head\'s slice of r.attention', async () => {
  await withLayer({ dModel: 16, heads: 4, seed: 6 }, (layer) => {
    const n = 5;
    const r = layer.forward(lcgFloats(n * 16, 8), { n, mask: 'causal', trace: true });
    const weights = r.steps.filter((s) => s.id === 'weights');
    assert.equal(weights.length, 4);
    for (const s of weights) {
      assertBitIdentical(s.data, headSlice(r.attention, s.head, n, n), `weights head ${s.head}`);
    }
    assertBitIdentical(r.steps.at(-1).data, r.output, 'output step vs r.output');
    assertBitIdentical(r.steps[0].data, lcgFloats(n * 16, 8), 'embedding step vs x');
  });
});

test('trace: masked holds -Infinity exactly where causal hides keys, scaled values elsewhere',
  async () => {
    await withLayer({ dModel: 8, heads: 2, seed: 7 }, (layer) => {
      const n = 6;
      const r = layer.forward(lcgFloats(n * 8, 9), { n, mask: 'causal', trace: true });
      for (let h = 0; h < 2; ++h) {
        const masked = r.steps.find((s) => s.id === 'masked' && s.head === h).data;
        const scaled = r.steps.find((s) => s.id === 'scaled' && s.head === h).data;
        for (let i = 0; i < n; ++i) {
          for (let j = 0; j < n; ++j) {
            const at = i * n + j;
            if (j > i) assert.equal(masked[at], -Infinity, `head ${h} masked[${i}][${j}]`);
            else {
              assert.ok(Number.isFinite(masked[at]), `head ${h} masked[${i}][${j}] is finite`);
              assert.equal(masked[at], scaled[at], `head ${h} masked[${i}][${j}] = scaled`);
            }
          }
        }
      }
    });
  });

test('trace: each step is the documented arithmetic of the ones before it', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 8 }, (layer) => {
    const n = 4;
    const d = 8;
    const dk = 4;
    const x = lcgFloats(n * d, 10);
    const w = layer.getWeights();
    const r = layer.forward(x, { n, mask: 'causal', trace: true });
    const step = (id, h = -1) => r.steps.find((s) => s.id === id && s.head === h).data;
    const tol = { atol: 1e-5, rtol: 1e-5 };
    // Q = X·W_qᵀ + b_q per head (rows of in_proj_weight: Q, then K, then V).
    const proj = (which) => matmul(x, rowsTransposed(w.inProjWeight, which * d, d, d), n, d, d,
      w.inProjBias.subarray(which * d, (which + 1) * d));
    const [Q, K, V] = [proj(0), proj(1), proj(2)];
    const concat = new Float64Array(n * d);
    for (let h = 0; h < 2; ++h) {
      const q = columns(Q, n, d, h * dk, dk);
      const k = columns(K, n, d, h * dk, dk);
      const v = columns(V, n, d, h * dk, dk);
      assertClose(step('q', h), q, { ...tol, what: `q head ${h}` });
      assertClose(step('k', h), k, { ...tol, what: `k head ${h}` });
      assertClose(step('v', h), v, { ...tol, what: `v head ${h}` });
      const kT = rowsTransposed(k, 0, n, dk);
      const scores = matmul(q, kT, n, dk, n);
      assertClose(step('scores', h), scores, { ...tol, what: `scores head ${h}` });
      assertClose(step('scaled', h), scores.map((s) => s / Math.sqrt(dk)), { ...tol, what: `scaled head ${h}` });
      const a = maskedSoftmax(step('scaled', h), (i, j) => j <= i, n, n);
      assertClose(step('weights', h), a, { atol: 1e-6, rtol: 1e-5, what: `weights head ${h}` });
      const context = matmul(step('weights', h), v, n, n, dk);
      assertClose(step('context', h), context, { ...tol, what: `context head ${h}` });
      for (let i = 0; i < n; ++i) for (let c = 0; c < dk; ++c) concat[i * d + h * dk + c] = context[i * dk + c];
    }
    assertClose(step('concat'), concat, { ...tol, what: 'concat' });
    const out = matmul(step('concat'), rowsTransposed(w.outProjWeight, 0, d, d), n, d, d, w.outProjBias);
    assertClose(r.output, out, { ...tol, what: 'output' });
  });
});

test('scale: false leaves the scaled step equal to the raw scores', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 9 }, (layer) => {
    const r = layer.forward(lcgFloats(3 * 8, 11), { n: 3, scale: false, trace: true });
    for (let h = 0; h < 2; ++h) {
      const scores = r.steps.find((s) => s.id === 'scores' && s.head === h).data;
      const scaled = r.steps.find((s) => s.id === 'scaled' && s.head === h).data;
      assertBitIdentical(scaled, scores, `head ${h}`);
    }
  });
});

// ---- returned arrays are copies ----------------------------------------------------------------

test('every array forward returns is a copy: mutating it or running again changes nothing',
  async () => {
    await withLayer({ dModel: 8, heads: 2, seed: 10 }, (layer) => {
      const x = lcgFloats(4 * 8, 12);
      const r1 = layer.forward(x, { n: 4, mask: 'causal', trace: true });
      const saved = {
        output: Float32Array.from(r1.output),
        attention: Float32Array.from(r1.attention),
        steps: r1.steps.map((s) => Float32Array.from(s.data)),
      };
      for (const a of [r1.output, r1.attention, ...r1.steps.map((s) => s.data)]) {
        assert.equal(a.byteOffset, 0);
        assert.equal(a.buffer.byteLength, a.byteLength, 'an array with its own buffer');
      }
      // A different input: a view into wasm memory would now show the new numbers.
      const other = layer.forward(lcgFloats(4 * 8, 13), { n: 4, trace: true });
      assertBitIdentical(r1.output, saved.output, 'r1.output after another forward');
      assertBitIdentical(r1.attention, saved.attention, 'r1.attention after another forward');
      r1.steps.forEach((s, i) => assertBitIdentical(s.data, saved.steps[i], `r1 step ${s.id}`));
      assert.notDeepEqual(other.output, saved.output);
      // Scribbling over a result does not leak into the next one.
      r1.output.fill(999);
      r1.attention.fill(999);
      for (const s of r1.steps) s.data.fill(999);
      const r2 = layer.forward(x, { n: 4, mask: 'causal', trace: true });
      assertBitIdentical(r2.output, saved.output, 'r2.output');
      assertBitIdentical(r2.attention, saved.attention, 'r2.attention');
      r2.steps.forEach((s, i) => assertBitIdentical(s.data, saved.steps[i], `r2 step ${s.id}`));
      // The input is not modified either.
      assertBitIdentical(x, lcgFloats(4 * 8, 12), 'x');
    });
  });

test('getWeights, saveSafetensors, embed, tokenize and numpyRandn return copies', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 11 }, (layer, lens) => {
    const w1 = layer.getWeights();
    const saved = Float32Array.from(w1.inProjWeight);
    w1.inProjWeight.fill(0);
    assertBitIdentical(layer.getWeights().inProjWeight, saved, 'getWeights after mutation');

    const bytes1 = layer.saveSafetensors();
    const savedBytes = Uint8Array.from(bytes1);
    bytes1.fill(0);
    assert.deepEqual(layer.saveSafetensors(), savedBytes);

    const e1 = layer.embed([1, 2, 3]);
    const savedE = Float32Array.from(e1);
    layer.embed([4, 5, 6, 7]); // would overwrite a view
    assertBitIdentical(e1, savedE, 'embed after another embed');

    const t1 = lens.tokenize('hello world');
    t1.ids.fill(0);
    t1.tokens.push('x');
    assert.deepEqual(lens.tokenize('hello world').tokens, ['hello', 'world']);
    assert.notEqual(lens.tokenize('hello world').ids[0], 0);

    const r1 = lens.numpyRandn(1, 10);
    const savedR = Float64Array.from(r1);
    lens.numpyRandn(2, 10);
    assert.deepEqual(r1, savedR);
  });
});

test('results stay valid after wasm memory grows (a big layer allocated afterwards)', async () => {
  const lens = await loadLens();
  const c = loadGoldenCase('causal_bias');
  const small = goldenLayer(lens, c);
  let big = null;
  try {
    const r = small.forward(c.x, goldenForwardOptions(c, { trace: true }));
    const weights = small.getWeights();
    const bytes = small.saveSafetensors();
    const randn = lens.numpyRandn(42, 2000);
    const heapBefore = lens.memory().heapBytes;
    // 1024-wide weights (~32 MB with their transposed copies) and n = 512 need more heap.
    big = lens.createLayer({ dModel: 1024, heads: 4, seed: 1 });
    const n = 512;
    const bigResult = big.forward(lcgFloats(n * 1024, 14), { n, trace: true });
    assert.equal(bigResult.output.length, n * 1024);
    const heapAfter = lens.memory().heapBytes;
    assert.ok(heapAfter > heapBefore, `memory grew (${heapBefore} -> ${heapAfter} bytes)`);
    // Nothing is detached (length 0) or overwritten: still PyTorch's numbers.
    assertMatchesGolden(r, c, 'causal_bias after memory growth');
    const w = r.steps.filter((s) => s.id === 'weights');
    w.forEach((s) => assertBitIdentical(s.data, headSlice(r.attention, s.head, c.n, c.kvN), `step ${s.id}`));
    assertBitIdentical(weights.inProjWeight, c.weights.inProjWeight, 'getWeights after growth');
    assert.deepEqual(parseSafetensors(bytes).tensors.in_proj_weight.data, c.weights.inProjWeight);
    assert.equal(randn.length, 2000);
    // The small layer still works after growth.
    assertMatchesGolden(small.forward(c.x, goldenForwardOptions(c)), c, 'causal_bias, forward after growth');
  } finally {
    big?.dispose();
    small.dispose();
  }
});

// ---- weights: false ---------------------------------------------------------------------------

test('weights: false gives the same output and no attention', async () => {
  await withLayer({ dModel: 16, heads: 4, seed: 12 }, (layer) => {
    const n = 9;
    const x = lcgFloats(n * 16, 15);
    for (const options of [{}, { mask: 'causal' }, { keyPadding: [0, 0, 1, 0, 0, 0, 0, 1, 0] },
      { kv: lcgFloats(5 * 16, 16), kvN: 5 }]) {
      const full = layer.forward(x, { n, ...options });
      const outputOnly = layer.forward(x, { n, ...options, weights: false });
      assert.equal(outputOnly.attention, undefined);
      assert.ok(!('attention' in outputOnly), 'no attention key at all');
      assertClose(outputOnly.output, full.output, { atol: 1e-6, rtol: 1e-5, what: JSON.stringify(Object.keys(options)) });
    }
  });
});

test('preview: every head\'s weights max-pooled, with or without weights, self and cross', async () => {
  await withLayer({ dModel: 16, heads: 4, seed: 12 }, (layer) => {
    const n = 11;
    const x = lcgFloats(n * 16, 15);
    for (const options of [{ mask: 'causal' }, { kv: lcgFloats(7 * 16, 16), kvN: 7 }]) {
      const kvN = options.kvN ?? n;
      const full = layer.forward(x, { n, ...options });
      const pooled = layer.forward(x, { n, ...options, weights: false, preview: 4 }); // step ceil(11 / 4) = 3
      assert.ok(!('attention' in pooled));
      const { step, rows, cols, data } = pooled.preview;
      assert.deepEqual([step, rows, cols, data.length], [3, 4, Math.ceil(kvN / 3), 4 * 4 * Math.ceil(kvN / 3)]);
      for (let h = 0; h < 4; ++h) {
        for (let pr = 0; pr < rows; ++pr) {
          for (let pc = 0; pc < cols; ++pc) {
            let best = -Infinity;
            for (let i = pr * 3; i < Math.min(n, pr * 3 + 3); ++i) {
              for (let j = pc * 3; j < Math.min(kvN, pc * 3 + 3); ++j) best = Math.max(best, full.attention[(h * n + i) * kvN + j]);
            }
            assert.equal(data[(h * rows + pr) * cols + pc], best, `head ${h} cell (${pr}, ${pc})`);
          }
        }
      }
      assertClose(pooled.output, full.output, { atol: 0, rtol: 0, what: 'output with a preview' });
      // Without the option there is no preview; with both, the weights are unchanged.
      assert.ok(!('preview' in full));
      assert.deepEqual(layer.forward(x, { n, ...options, preview: 4 }).attention, full.attention);
    }
    assert.throws(() => layer.forward(x, { n, preview: -1 }), /preview must be an integer from 0/);
    assert.throws(() => layer.forward(x, { n, preview: 70000 }), /preview must be a side of at most 65536 cells, got 70000/);
  });
});

// ---- masks ------------------------------------------------------------------------------------

/** Checks every head's attention against a masked softmax of its own scaled scores. */
function assertMaskedAttention(r, visible, n, kvN, heads, what) {
  for (let h = 0; h < heads; ++h) {
    const a = headSlice(r.attention, h, n, kvN);
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < kvN; ++j) {
        if (!visible(i, j)) assert.equal(a[i * kvN + j], 0, `${what}: head ${h} [${i}][${j}] hidden`);
        else assert.ok(a[i * kvN + j] > 0, `${what}: head ${h} [${i}][${j}] visible`);
      }
    }
    if (r.steps) {
      const scaled = r.steps.find((s) => s.id === 'scaled' && s.head === h).data;
      assertClose(a, maskedSoftmax(scaled, visible, n, kvN), { atol: 1e-6, rtol: 1e-5, what: `${what} head ${h}` });
      const masked = r.steps.find((s) => s.id === 'masked' && s.head === h).data;
      for (let i = 0; i < n; ++i) {
        for (let j = 0; j < kvN; ++j) {
          assert.equal(masked[i * kvN + j] === -Infinity, !visible(i, j), `${what}: masked [${i}][${j}]`);
        }
      }
    }
  }
}

test('sliding-window mask: each query sees itself and window-1 keys before it', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 13 }, (layer) => {
    const n = 7;
    for (const window of [1, 2, 3, 7]) {
      const r = layer.forward(lcgFloats(n * 8, 17), { n, mask: 'sliding-window', window, trace: true });
      assertMaskedAttention(r, (i, j) => j <= i && i - j < window, n, n, 2, `window ${window}`);
    }
  });
});

test('prefix-lm mask: the first `prefix` keys are visible to all, the rest causal', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 14 }, (layer) => {
    const n = 6;
    for (const prefix of [0, 1, 3, 6]) {
      const r = layer.forward(lcgFloats(n * 8, 18), { n, mask: 'prefix-lm', prefix, trace: true });
      assertMaskedAttention(r, (i, j) => j < prefix || j <= i, n, n, 2, `prefix ${prefix}`);
    }
  });
});

test('cellMask hides exactly the chosen cells, combined with causal and key padding', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 15 }, (layer) => {
    const n = 5;
    const kvN = 5;
    const cells = new Uint8Array(n * kvN);
    for (const [i, j] of [[0, 3], [1, 0], [2, 2], [3, 1], [3, 4], [4, 0], [4, 4]]) cells[i * kvN + j] = 1;
    const hidden = (i, j) => cells[i * kvN + j] === 1;
    let r = layer.forward(lcgFloats(n * 8, 19), { n, cellMask: cells, trace: true });
    assertMaskedAttention(r, (i, j) => !hidden(i, j), n, kvN, 2, 'cells');
    // Booleans in a plain array work the same way.
    const asBooleans = Array.from(cells, (v) => v === 1);
    const again = layer.forward(lcgFloats(n * 8, 19), { n, cellMask: asBooleans });
    assertBitIdentical(again.attention, r.attention, 'cellMask as booleans');
    const keyPadding = [0, 1, 0, 0, 0];
    r = layer.forward(lcgFloats(n * 8, 19), { n, cellMask: cells, mask: 'causal', keyPadding, trace: true });
    assertMaskedAttention(r, (i, j) => !hidden(i, j) && j <= i && !keyPadding[j] && !(i === 1 && j === 0),
      n, kvN, 2, 'cells + causal + padding');
  });
});

test('a query row with every key masked yields zeros, never NaN', async () => {
  await withLayer({ dModel: 8, heads: 2, seed: 16 }, (layer) => {
    const n = 4;
    const w = layer.getWeights();
    // All keys padded: every attention weight is 0, the context is 0, so output = out_proj.bias.
    const all = layer.forward(lcgFloats(n * 8, 20), { n, keyPadding: [1, 1, 1, 1] });
    assert.ok(all.attention.every((v) => v === 0), 'all attention weights are 0');
    for (let i = 0; i < n; ++i) assertBitIdentical(all.output.subarray(i * 8, i * 8 + 8), w.outProjBias, `row ${i}`);
    // One row fully hidden by cells: only that row is zero.
    const cells = new Uint8Array(n * n);
    cells.fill(1, 2 * n, 3 * n);
    const r = layer.forward(lcgFloats(n * 8, 20), { n, cellMask: cells, trace: true });
    assert.ok(r.output.every(Number.isFinite));
    assertMaskedAttention(r, (i) => i !== 2, n, n, 2, 'row 2 hidden');
    assertBitIdentical(r.output.subarray(16, 24), w.outProjBias, 'row 2 output');
    // The output-only path agrees.
    const outputOnly = layer.forward(lcgFloats(n * 8, 20), { n, cellMask: cells, weights: false });
    assertClose(outputOnly.output, r.output, { atol: 1e-6, rtol: 1e-5, what: 'weights: false' });
  });
});
