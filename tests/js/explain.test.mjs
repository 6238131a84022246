// layer.explain({ step, head, row, col }): the arithmetic behind a cell of the last traced
// forward, computed by the core. Checked against the trace's own data and the layer's weights
// through the public API: terms are the inputs read independently, products sum to the cell,
// quantities compose to it; plain objects only; every bad call throws a readable Error and the
// module stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertThrowsMessage, lcgFloats, loadLens } from './support.mjs';

const lens = await loadLens();

/** A layer and a traced forward; returns { layer, steps, x, kv, weights, step(id, head) }. */
function traced(config, n, options = {}, kvN = 0) {
  const layer = lens.createLayer({ dModel: 8, heads: 2, seed: 3, ...config });
  const d = layer.config.dModel;
  const x = lcgFloats(n * d, 17);
  const forwardOptions = { n, trace: true, ...options };
  let kv;
  if (kvN > 0) {
    kv = lcgFloats(kvN * d, 29);
    forwardOptions.kv = kv;
    forwardOptions.kvN = kvN;
  }
  const { steps } = layer.forward(x, forwardOptions);
  const step = (id, head = -1) => {
    const found = steps.find((s) => s.id === id && s.head === head);
    assert.ok(found, `no step ${id} head ${head}`);
    return found;
  };
  return { layer, steps, x, kv, weights: layer.getWeights(), step };
}

const at = (s, r, c) => s.data[r * s.shape[1] + c];
const quantity = (e, name) => {
  const q = e.quantities.find((item) => item.name === name);
  assert.ok(q, `no quantity '${name}' in ${e.step}: ${e.quantities.map((item) => item.name)}`);
  return q.value;
};
const near = (got, want, magnitude, what) => {
  const tol = 1e-5 * Math.max(magnitude, Math.abs(want)) + 1e-7;
  assert.ok(Math.abs(got - want) <= tol, `${what}: got ${got}, want ${want} (tolerance ${tol})`);
};
const sumTerms = (e) => {
  let total = 0;
  let magnitude = 0;
  for (const t of e.terms) {
    assert.equal(t.product, Math.fround(t.left * t.right), `${e.step}: product of term ${t.index}`);
    total += t.product;
    magnitude += Math.abs(t.product);
  }
  return { total, magnitude };
};

/** Plain data all the way down: no typed arrays, nothing that could be a wasm view. */
function assertPlain(e) {
  assert.deepEqual(Object.keys(e).sort(), ['col', 'equation', 'head', 'leftLabel', 'quantities',
    'rightLabel', 'row', 'step', 'summary', 'terms', 'value'].sort());
  for (const key of ['step', 'summary', 'equation', 'leftLabel', 'rightLabel']) {
    assert.equal(typeof e[key], 'string', key);
  }
  for (const key of ['head', 'row', 'col', 'value']) assert.equal(typeof e[key], 'number', key);
  assert.ok(Array.isArray(e.terms) && Array.isArray(e.quantities));
  for (const t of e.terms) {
    assert.deepEqual(Object.keys(t), ['index', 'left', 'right', 'product']);
    for (const v of Object.values(t)) assert.equal(typeof v, 'number');
  }
  for (const q of e.quantities) {
    assert.deepEqual(Object.keys(q), ['name', 'latex', 'value']);
    assert.equal(typeof q.name, 'string');
    assert.equal(typeof q.latex, 'string');
    assert.equal(typeof q.value, 'number');
  }
}

/** Explains every cell of every step of `run` and checks each against the trace. */
function checkAllCells(run, keyVisible) {
  const { layer, steps, weights, step } = run;
  const { dModel: d, headDim: dk, heads, bias, outProj, positional } = layer.config;
  const inner = heads * dk;
  const cross = run.kv !== undefined;
  let checked = 0;
  for (const s of steps) {
    for (let i = 0; i < s.shape[0]; ++i) {
      for (let c = 0; c < s.shape[1]; ++c) {
        const e = layer.explain(s.head >= 0 ? { step: s.id, head: s.head, row: i, col: c }
          : { step: s.id, row: i, col: c });
        const what = `${s.id} head ${s.head} cell ${i},${c}`;
        assertPlain(e);
        assert.deepEqual([e.step, e.head, e.row, e.col], [s.id, s.head, i, c], what);
        assert.equal(e.value, at(s, i, c), `${what}: value`);
        const sum = sumTerms(e);
        const b = e.quantities.some((q) => q.name === 'bias') ? quantity(e, 'bias') : 0;
        const h = s.head;
        switch (s.id) {
          case 'q': case 'k': case 'v': {
            const which = ['q', 'k', 'v'].indexOf(s.id);
            const xIn = step(which > 0 && cross ? 'source' : 'input');
            const row = which * inner + h * dk + c;
            assert.equal(e.terms.length, d);
            e.terms.forEach((t, k) => {
              assert.equal(t.left, at(xIn, i, k), `${what}: left ${k}`);
              assert.equal(t.right, weights.inProjWeight[row * d + k], `${what}: right ${k}`);
            });
            if (bias) assert.equal(b, weights.inProjBias[row]);
            near(sum.total + b, e.value, sum.magnitude + Math.abs(b), `${what}: x·W + b`);
            break;
          }
          case 'q_rotated': case 'k_rotated': {
            const raw = step(s.id[0], h);
            const p = Math.floor(c / 2);
            assert.deepEqual(e.terms.map((t) => t.index), [2 * p, 2 * p + 1]);
            assert.equal(e.terms[0].left, at(raw, i, 2 * p));
            assert.equal(e.terms[1].left, at(raw, i, 2 * p + 1));
            near(sum.total, e.value, sum.magnitude, `${what}: rotation`);
            break;
          }
          case 'scores': {
            const rope = positional === 'rope';
            const q = step(rope ? 'q_rotated' : 'q', h);
            const k = step(rope ? 'k_rotated' : 'k', h);
            assert.equal(e.terms.length, dk);
            e.terms.forEach((t, k2) => {
              assert.equal(t.left, at(q, i, k2), `${what}: left ${k2}`);
              assert.equal(t.right, at(k, c, k2), `${what}: right ${k2}`);
            });
            near(sum.total, e.value, sum.magnitude, `${what}: q·k`);
            break;
          }
          case 'scaled':
            assert.equal(quantity(e, 'score'), at(step('scores', h), i, c));
            assert.equal(quantity(e, 'scale'), Math.fround(1 / Math.sqrt(dk)));
            near(quantity(e, 'score') * quantity(e, 'scale'), e.value, Math.abs(e.value), what);
            break;
          case 'alibi':
            assert.equal(quantity(e, 'distance'), Math.abs(i - c));
            near(-quantity(e, 'slope') * quantity(e, 'distance'), e.value, Math.abs(e.value), what);
            break;
          case 'masked': {
            const scaled = quantity(e, 'scaled score');
            assert.equal(scaled, at(step('scaled', h), i, c));
            const alibi = positional === 'alibi' ? quantity(e, 'ALiBi bias') : 0;
            if (keyVisible(i, c)) {
              assert.equal(quantity(e, 'mask (visible)'), 0);
              near(scaled + alibi, e.value, Math.abs(scaled) + Math.abs(alibi), what);
            } else {
              assert.equal(quantity(e, 'mask (masked)'), -Infinity, what);
              assert.equal(e.value, -Infinity, what);
            }
            break;
          }
          case 'weights': {
            const x = step('masked', h);
            assert.equal(quantity(e, 'masked score'), at(x, i, c));
            let max = -Infinity;
            for (let k = 0; k < x.shape[1]; ++k) max = Math.max(max, at(x, i, k));
            if (max === -Infinity) {
              assert.equal(e.value, 0);
              assert.equal(e.terms.length, 0);
              assert.match(e.summary, /every key is masked/);
              break;
            }
            assert.equal(quantity(e, 'row max'), max);
            near(quantity(e, 'exp') / quantity(e, 'row sum'), e.value, 1, `${what}: exp / sum`);
            near(sum.total, 1, 1, `${what}: the row's weights sum to 1`);
            const a = step('weights', h);
            e.terms.forEach((t, k) => near(t.product, at(a, i, k), 1, `${what}: term ${k} = A_ik`));
            break;
          }
          case 'context': {
            const a = step('weights', h);
            const v = step('v', h);
            assert.equal(e.terms.length, a.shape[1]);
            e.terms.forEach((t, j) => {
              assert.equal(t.left, at(a, i, j));
              assert.equal(t.right, at(v, j, c));
            });
            near(sum.total, e.value, sum.magnitude, `${what}: A·V`);
            break;
          }
          case 'concat':
            assert.equal(quantity(e, 'head index (0-based)'), Math.floor(c / dk));
            assert.equal(quantity(e, 'context value'), at(step('context', Math.floor(c / dk)), i, c % dk));
            break;
          case 'output': {
            const z = step('concat');
            if (!outProj) {
              assert.equal(quantity(e, 'concat'), e.value);
              break;
            }
            e.terms.forEach((t, k) => {
              assert.equal(t.left, at(z, i, k));
              assert.equal(t.right, weights.outProjWeight[c * inner + k]);
            });
            if (bias) assert.equal(b, weights.outProjBias[c]);
            near(sum.total + b, e.value, sum.magnitude + Math.abs(b), `${what}: z·W_O + b`);
            break;
          }
          case 'input': case 'source': {
            const raw = s.id === 'input' ? run.x[i * d + c] : run.kv[i * d + c];
            if (positional === 'sinusoidal' || positional === 'learned') {
              const pe = quantity(e, 'positional encoding');
              const xPart = quantity(e, s.id === 'input' ? 'embedding' : 'source token (value − PE)');
              near(xPart, raw, Math.abs(raw) + Math.abs(pe), `${what}: raw`);
              near(xPart + pe, e.value, Math.abs(xPart) + Math.abs(pe), `${what}: x + PE`);
            } else {
              assert.equal(e.value, raw);
            }
            break;
          }
          case 'positional':
            if (positional === 'sinusoidal') {
              const angle = quantity(e, 'angle');
              near(c % 2 === 0 ? Math.sin(angle) : Math.cos(angle), e.value, 1, what);
            }
            break;
          case 'embedding':
            assert.equal(e.value, run.x[i * d + c]);
            assert.match(e.summary, /lookup/);
            break;
          default:
            assert.fail(`unexpected step ${s.id}`);
        }
        checked += 1;
      }
    }
  }
  return checked;
}

test('every cell of a causal self-attention layer with bias', () => {
  const run = traced({ bias: true }, 4, { mask: 'causal' });
  assert.ok(checkAllCells(run, (i, j) => j <= i) > 200);
  run.layer.dispose();
});

test('RoPE, ALiBi with key padding, and cross-attention with a sinusoidal encoding', () => {
  const rope = traced({ positional: 'rope', bias: false }, 5, { mask: 'causal' });
  checkAllCells(rope, (i, j) => j <= i);
  rope.layer.dispose();
  const padding = [0, 1, 0, 0, 0];
  const alibi = traced({ positional: 'alibi' }, 5, { keyPadding: padding });
  checkAllCells(alibi, (i, j) => padding[j] === 0);
  alibi.layer.dispose();
  const cross = traced({ positional: 'sinusoidal', heads: 4 }, 3, {}, 6);
  assert.ok(cross.steps.some((s) => s.id === 'source'));
  checkAllCells(cross, () => true);
  cross.layer.dispose();
  const noProj = traced({ outProj: false }, 3, { mask: 'causal' });
  checkAllCells(noProj, (i, j) => j <= i);
  noProj.layer.dispose();
});

test('a fully masked query row: zero weights, and the explanation says so', () => {
  const run = traced({}, 4, { mask: 'causal', keyPadding: [1, 0, 0, 0] });
  const e = run.layer.explain({ step: 'weights', head: 1, row: 0, col: 0 });
  assert.equal(e.value, 0);
  assert.deepEqual(e.terms, []);
  assert.equal(quantity(e, 'masked score'), -Infinity);
  assert.equal(quantity(e, 'visible keys'), 0);
  const m = run.layer.explain({ step: 'masked', head: 1, row: 2, col: 3 });
  assert.equal(m.value, -Infinity);
  assert.equal(quantity(m, 'mask (masked)'), -Infinity);
  run.layer.dispose();
});

test('the explanation is a copy: later forwards and memory growth leave it intact', () => {
  const run = traced({}, 4, { mask: 'causal' });
  const e = run.layer.explain({ step: 'scores', head: 1, row: 2, col: 1 });
  const snapshot = structuredClone(e);
  // A much larger traced forward grows the wasm heap and reuses the layer's buffers.
  const big = lens.createLayer({ dModel: 256, heads: 8 });
  big.forward(lcgFloats(256 * 256, 5), { n: 256, trace: true });
  run.layer.forward(lcgFloats(4 * 8, 99), { n: 4, trace: true });
  assert.deepEqual(e, snapshot);
  assert.notDeepEqual(run.layer.explain({ step: 'scores', head: 1, row: 2, col: 1 }).terms, e.terms);
  big.dispose();
  run.layer.dispose();
});

test('bad calls throw readable Errors; the module keeps working after 100 of them', () => {
  const fresh = lens.createLayer({ dModel: 8, heads: 2 });
  assertThrowsMessage(() => fresh.explain({ step: 'scores', head: 0, row: 0, col: 0 }),
    /^explain needs a forward with trace: true first$/);
  const run = traced({}, 4, { mask: 'causal' });
  const { layer } = run;
  const good = { step: 'weights', head: 1, row: 2, col: 1 };
  const expected = layer.explain(good);

  const cases = [
    [() => layer.explain(), /explain expects an object \{ step, head, row, col \}, got undefined/],
    [() => layer.explain(null), /explain expects an object.*got null/],
    [() => layer.explain([1, 2]), /explain expects an object.*got an array of length 2/],
    [() => layer.explain({ ...good, colum: 1 }),
      /unknown explain key 'colum'; expected one of: step, head, row, col/],
    [() => layer.explain({ ...good, step: 3 }), /step must be a step id string such as 'scores', got 3/],
    [() => layer.explain({ ...good, step: 'foo' }),
      /unknown step 'foo'; the last trace has: embedding, input, q, k, v, scores, scaled, masked, weights, context, concat, output/],
    [() => layer.explain({ ...good, step: 'alibi' }),
      /step 'alibi' is not in the last trace \(it appears with positional: 'alibi'\)/],
    [() => layer.explain({ ...good, head: 2 }),
      /head 2 is out of range for step 'weights': expected 0 to 1 \(0-based; 2 heads\)/],
    [() => layer.explain({ step: 'weights', row: 0, col: 0 }),
      /step 'weights' has one grid per head: pass head 0 to 1/],
    [() => layer.explain({ step: 'concat', head: 0, row: 0, col: 0 }),
      /step 'concat' is shared by all heads: head must be -1 \(or omitted\), got 0/],
    [() => layer.explain({ ...good, head: -2 }), /head must be an integer from -1 to 2147483647, got -2/],
    [() => layer.explain({ ...good, head: 0.5 }), /head must be an integer.*got 0\.5/],
    [() => layer.explain({ ...good, row: 4 }),
      /row 4 is out of range for step 'weights' \(shape \[4, 4\], a row per query\): expected 0 to 3/],
    [() => layer.explain({ ...good, col: 9 }),
      /col 9 is out of range for step 'weights' \(shape \[4, 4\], a column per key\): expected 0 to 3/],
    [() => layer.explain({ step: 'output', row: 0, col: 8 }), /col 8 is out of range for step 'output'/],
    [() => layer.explain({ ...good, row: -1 }), /row must be an integer from 0 to 4294967295, got -1/],
    [() => layer.explain({ ...good, col: '1' }), /col must be an integer.*got "1"/],
    [() => layer.explain({ step: 'weights', head: 1, col: 1 }), /row must be an integer.*got undefined/],
    [() => layer.explain({ ...good, row: 2 ** 40 }), /row must be an integer from 0 to 4294967295/],
  ];
  const allocated = lens.memory().allocatedBytes;
  for (let round = 0; round < 100; ++round) {
    const [fn, pattern] = cases[round % cases.length];
    assertThrowsMessage(fn, pattern);
  }
  assert.equal(lens.memory().allocatedBytes, allocated, 'failed calls leak no wasm memory');
  assert.deepEqual(layer.explain(good), expected);

  // Weights replaced after the traced forward no longer match the trace.
  const w = layer.getWeights();
  layer.setWeights({ ...w, inProjWeight: w.inProjWeight.map((v) => -2 * v) });
  assertThrowsMessage(() => layer.explain({ step: 'q', head: 0, row: 1, col: 1 }),
    /the layer's weights changed since the last traced forward.*run forward with trace: true again/);
  assert.deepEqual(layer.explain(good), expected); // trace-only steps are unaffected
  // A forward without trace leaves nothing to explain.
  layer.forward(run.x, { n: 4 });
  assertThrowsMessage(() => layer.explain(good), /explain needs a forward with trace: true first/);
  layer.forward(run.x, { n: 4, mask: 'causal', trace: true });
  layer.setWeights(w);
  layer.forward(run.x, { n: 4, mask: 'causal', trace: true });
  assert.deepEqual(layer.explain(good), expected);

  layer.dispose();
  assertThrowsMessage(() => layer.explain(good), /this layer was disposed/);
  fresh.dispose();
});

test('the documented examples: a scores cell and a weights cell', () => {
  const run = traced({}, 4, { mask: 'causal' });
  const s = run.layer.explain({ step: 'scores', head: 1, row: 2, col: 1 });
  assert.equal(s.leftLabel, 'q_2[t]');
  assert.equal(s.rightLabel, 'k_1[t]');
  assert.match(s.summary, /^score = q_2 · k_1 = Σ_t q_2\[t\]·k_1\[t\] over d_k = 4 terms = .* \(head 2 of 2\)$/);
  assert.match(s.equation, /^S_\{2,1\} = \\sum_\{t=0\}\^\{3\} q_\{2,t\}\\, k_\{1,t\} = /);
  assert.deepEqual(s.quantities, []);
  const w = run.layer.explain({ step: 'weights', head: 1, row: 2, col: 1 });
  assert.deepEqual(w.quantities.map((q) => q.name), ['masked score', 'row max', 'shifted', 'exp', 'row sum']);
  assert.equal(w.terms.length, 4);
  assert.equal(w.terms[3].left, 0); // causal: key 3 is hidden from query 2
  assert.match(w.summary, /softmax over row 2 \(3 of 4 keys visible\)/);
  if (process.env.ATTN_EXPLAIN_PRINT) console.log(JSON.stringify({ scores: s, weights: w }, null, 2));
  run.layer.dispose();
});
