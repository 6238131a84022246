// model.attentionLayer on every family of tests/data/families (Pythia's partial rotary, Qwen3's,
// Gemma 3's and OLMo 2's q/k norms, Gemma's own scale, Gemma 2's soft-cap, local and global
// windows): the standalone layer the walkthrough opens reproduces the model's attention and traces
// the same steps as the model's own trace; and createLayer's q/k norm options and weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import { loadLens } from './support.mjs';
import { familyGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const CASES = readdirSync(new URL('../data/families/', import.meta.url))
  .filter((file) => file.endsWith('.config.json')).map((file) => file.slice(0, -'.config.json'.length)).sort();
const idsOf = (expected) => Int32Array.from(expected.ids.data, Number);

const worstDifference = (a, b) => {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
};

test('attentionLayer: every layer of every family, as a layer of its own, reproduces the model', async () => {
  assert.ok(CASES.length >= 14, `the family cases: ${CASES}`);
  const seen = { qkNorm: new Set(), softcap: 0, scale: 0, rotaryDims: 0 };
  for (const name of CASES) {
    const { weights, config, expected } = familyGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const ids = idsOf(expected);
      const n = ids.length;
      const traced = m.forward(ids, { trace: true });
      for (let l = 0; l < m.config.layers; ++l) {
        const what = `${name} layer ${l}`;
        const found = m.attentionLayer(l, ids, { n });
        const layer = lens.createLayer(found.config);
        try {
          layer.setWeights(found.weights);
          const r = layer.forward(found.input, { n, ...found.mask, trace: true });
          // The model's forward runs its own block kernels (the fused projection, its attention
          // loop), the layer its packed matmuls: the sums are ordered differently, so the float32
          // weights (in [0, 1]) may differ by a few ulp. 2e-6 is 16 ulp of 1, the bound the model's
          // own traced layers are held to (tests/cpp/test_families.cpp).
          const worst = worstDifference(r.attention, traced.attention[l]);
          assert.ok(worst < 2e-6, `${what}: attention differs by ${worst}`);
          // The model's trace runs the same layer code over the same weights and input: every step,
          // the final output included, is the same bit for bit.
          const want = traced.steps[l];
          assert.deepEqual(r.steps.map((s) => `${s.id}/${s.head}`), want.map((s) => `${s.id}/${s.head}`), what);
          for (let i = 0; i < want.length; ++i) {
            assert.deepEqual(r.steps[i].data, want[i].data, `${what}: step ${want[i].id}, head ${want[i].head}`);
          }
          const output = r.steps.find((s) => s.id === 'output');
          assert.deepEqual(output.data, r.output, `${what}: the traced output is the layer's output`);
          // Each switch shows as its step.
          const ids = new Set(r.steps.map((s) => s.id));
          const { qkNorm = 'none', softcap = 0, scale = 0, rope } = found.config;
          assert.equal(ids.has('q_normed') && ids.has('k_normed'), qkNorm !== 'none', `${what}: q/k norm steps`);
          assert.equal(ids.has('capped'), softcap > 0, `${what}: soft-cap step`);
          if (qkNorm !== 'none') seen.qkNorm.add(qkNorm);
          if (softcap > 0) seen.softcap += 1;
          if (scale > 0) seen.scale += 1;
          if (rope?.rotaryDims) {
            seen.rotaryDims += 1;
            assert.ok(rope.rotaryDims < m.config.headDim, `${what}: a partial rotary`);
          }
        } finally {
          layer.dispose();
        }
      }
    } finally {
      m.dispose();
    }
  }
  // The cases cover every switch (so the checks above ran on each).
  assert.deepEqual([...seen.qkNorm].sort(), ['per-head', 'whole']);
  assert.ok(seen.softcap > 0 && seen.scale > 0 && seen.rotaryDims > 0, JSON.stringify(seen));
});

test('createLayer with q/k norms, a scale, a soft-cap and a partial rotary; their weights by name', () => {
  const config = { dModel: 16, heads: 4, kvHeads: 2, bias: false, positional: 'rope',
    rope: { pairing: 'rotate-half', rotaryDims: 2 }, scale: 0.3, softcap: 5, qkNorm: 'per-head', qkNormWeight: 'one-plus' };
  const layer = lens.createLayer(config);
  try {
    assert.equal(layer.config.qkNorm, 'per-head');
    assert.equal(layer.config.rope.rotaryDims, 2);
    const start = layer.getWeights();
    assert.deepEqual(Array.from(start.qNormWeight), [0, 0, 0, 0], "Gemma's 1 + w starts at w = 0");
    assert.equal(start.kNormWeight.length, 4);
    const x = Float32Array.from({ length: 5 * 16 }, (_, i) => Math.sin(i * 0.7) * 3);
    const before = layer.forward(x, { n: 5, mask: 'causal', trace: true });
    assert.deepEqual([...new Set(before.steps.map((s) => s.id))].filter((id) => ['q_normed', 'k_normed', 'capped', 'q_rotated'].includes(id)),
      ['q_normed', 'k_normed', 'q_rotated', 'capped']);
    for (const s of before.steps.filter((step) => step.id === 'capped')) {
      for (const v of s.data) assert.ok(Math.abs(v) <= 5, 'capped scores within ±5');
    }
    const untraced = layer.forward(x, { n: 5, mask: 'causal' }).attention;
    assert.throws(() => layer.setWeights({ ...start, qNormWeight: new Float32Array(3) }),
      /q_norm\.weight has 3 values, expected 4 \(one head's width: the norm is per head\)/);
    assert.throws(() => layer.setWeights({ inProjWeight: start.inProjWeight, outProjWeight: start.outProjWeight }),
      /qNormWeight is required/);
    // The layer keeps its weights after a refusal; new norm weights change the attention.
    assert.deepEqual(layer.forward(x, { n: 5, mask: 'causal' }).attention, untraced);
    layer.setWeights({ ...start, qNormWeight: Float32Array.of(1, -0.5, 2, 0.25) });
    assert.ok(worstDifference(layer.forward(x, { n: 5, mask: 'causal' }).attention, untraced) > 1e-3);
    // .safetensors carries them.
    const copy = lens.createLayer(config);
    copy.loadSafetensors(layer.saveSafetensors());
    assert.deepEqual(copy.getWeights().qNormWeight, Float32Array.of(1, -0.5, 2, 0.25));
    copy.dispose();
  } finally {
    layer.dispose();
  }
  const plain = lens.createLayer({ dModel: 8, heads: 2 });
  try {
    assert.equal(plain.getWeights().qNormWeight, undefined);
    assert.throws(() => plain.setWeights({ ...plain.getWeights(), kNormWeight: new Float32Array(4) }),
      /k_norm\.weight was given, but the layer was created without q\/k norms/);
  } finally {
    plain.dispose();
  }
  assert.throws(() => lens.createLayer({ qkNorm: 'both' }), /unknown q\/k norm 'both': expected/);
  assert.throws(() => lens.createLayer({ qkNorm: 'whole', qkNormEps: 0 }), /qkNormEps/);
  assert.throws(() => lens.createLayer({ positional: 'rope', headDim: 8, dModel: 16, heads: 2, rope: { rotaryDims: 3 } }),
    /rotary dims/);
});
