// The public JS API's behaviour, continued from api.test.mjs: weights in and out, the tokenizer
// and embeddings, the builds (single file, wasmBinary), and tracing one head. Expected values
// come from invariants computed here in plain JS (or from golden data), never from a second call
// down the same code path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import {
  assertBitIdentical, assertMatchesGolden, compareGoldenBuilds, goldenForwardOptions, goldenLayer,
  lcgFloats, loadGoldenCase, loadLens, MODULE_URL, parseSafetensors, SINGLE_FILE_URL,
} from './support.mjs';
import { withLayer } from './api-support.mjs';

/** FNV-1a over the ASCII-case-folded UTF-8 bytes, mod 65536 (the documented token id). */
function fnv1aId(token) {
  let hash = 2166136261;
  for (const byte of new TextEncoder().encode(token)) {
    const folded = byte >= 0x41 && byte <= 0x5a ? byte + 32 : byte;
    hash = Math.imul(hash ^ folded, 16777619) >>> 0;
  }
  return hash % 65536;
}

/** The embedding row seed: murmur3's finalizer over seed and id (cpp/attention/ops/embedding.cpp). */
function embeddingRowSeed(seed, id) {
  let h = (seed ^ Math.imul(id, 0x9e3779b1) ^ 0xe3b0c442) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

// ---- weights in and out -----------------------------------------------------------------------

test('seeded initialisation is deterministic, seed-dependent and within PyTorch-style bounds',
  async () => {
    const lens = await loadLens();
    const make = (seed) => lens.createLayer({ dModel: 16, heads: 4, seed });
    const [a, a2, b] = [make(1), make(1), make(2)];
    try {
      const wa = a.getWeights();
      assert.deepEqual(a2.getWeights(), wa);
      assert.notDeepEqual(b.getWeights().inProjWeight, wa.inProjWeight);
      const bounds = { inProjWeight: Math.sqrt(6 / (16 + 48)), outProjWeight: 1 / 4,
        inProjBias: 1 / 4, outProjBias: 1 / 4 };
      const lengths = { inProjWeight: 48 * 16, outProjWeight: 16 * 16, inProjBias: 48, outProjBias: 16 };
      for (const [name, bound] of Object.entries(bounds)) {
        assert.equal(wa[name].length, lengths[name], `${name} length`);
        assert.ok(wa[name].every((v) => Math.abs(v) <= bound + 1e-7), `${name} within ±${bound}`);
        assert.ok(wa[name].some((v) => v !== 0), `${name} not all zero`);
      }
    } finally {
      [a, a2, b].forEach((l) => l.dispose());
    }
  });

test('saveSafetensors writes PyTorch state_dict names and the current weights', async () => {
  await withLayer({ dModel: 12, heads: 3, seed: 17 }, (layer) => {
    const { tensors, metadata } = parseSafetensors(layer.saveSafetensors());
    const w = layer.getWeights();
    assert.deepEqual(Object.keys(tensors).sort(),
      ['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight']);
    assert.deepEqual(tensors.in_proj_weight.shape, [36, 12]);
    assert.deepEqual(tensors.in_proj_bias.shape, [36]);
    assert.deepEqual(tensors['out_proj.weight'].shape, [12, 12]);
    assert.deepEqual(tensors['out_proj.bias'].shape, [12]);
    for (const t of Object.values(tensors)) assert.equal(t.dtype, 'F32');
    assertBitIdentical(tensors.in_proj_weight.data, w.inProjWeight, 'in_proj_weight');
    assertBitIdentical(tensors.in_proj_bias.data, w.inProjBias, 'in_proj_bias');
    assertBitIdentical(tensors['out_proj.weight'].data, w.outProjWeight, 'out_proj.weight');
    assertBitIdentical(tensors['out_proj.bias'].data, w.outProjBias, 'out_proj.bias');
    assert.equal(metadata.format, 'pt');
  });
  await withLayer({ dModel: 8, heads: 2, bias: false, seed: 18 }, (layer) => {
    const { tensors } = parseSafetensors(layer.saveSafetensors());
    assert.deepEqual(Object.keys(tensors).sort(), ['in_proj_weight', 'out_proj.weight']);
  });
});

test('weights round-trip (getWeights/setWeights, saveSafetensors/loadSafetensors) into a layer with another seed',
  async () => {
    const lens = await loadLens();
    for (const bias of [true, false]) {
      const config = { dModel: 16, heads: 4, bias };
      const source = lens.createLayer({ ...config, seed: 1 });
      const viaFile = lens.createLayer({ ...config, seed: 2 });
      const viaObject = lens.createLayer({ ...config, seed: 3 });
      try {
        const x = lcgFloats(6 * 16, 21);
        const options = { n: 6, mask: 'causal' };
        const want = source.forward(x, options);
        assert.notDeepEqual(viaFile.forward(x, options).output, want.output, 'seeds differ at first');
        viaFile.loadSafetensors(source.saveSafetensors());
        viaObject.setWeights(source.getWeights());
        for (const [layer, how] of [[viaFile, 'safetensors'], [viaObject, 'setWeights']]) {
          const got = layer.forward(x, options);
          assertBitIdentical(got.output, want.output, `bias ${bias}, ${how}: output`);
          assertBitIdentical(got.attention, want.attention, `bias ${bias}, ${how}: attention`);
        }
      } finally {
        [source, viaFile, viaObject].forEach((l) => l.dispose());
      }
    }
  });

test('setWeights accepts plain arrays of numbers', async () => {
  const lens = await loadLens();
  const c = loadGoldenCase('self_bias');
  const layer = lens.createLayer({ dModel: c.dModel, heads: c.heads, bias: c.bias });
  try {
    const w = Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, Array.from(v)]));
    layer.setWeights(w);
    assertMatchesGolden(layer.forward(Array.from(c.x), goldenForwardOptions(c)), c, 'arrays');
  } finally {
    layer.dispose();
  }
});

// ---- tokenizer and embeddings -----------------------------------------------------------------

test('tokenize splits words and punctuation and gives FNV-1a ids', async () => {
  const lens = await loadLens();
  const { tokens, ids } = lens.tokenize('The bank will not loan money.');
  assert.deepEqual(tokens, ['The', 'bank', 'will', 'not', 'loan', 'money', '.']);
  assert.ok(ids instanceof Uint32Array);
  assert.deepEqual([...ids], tokens.map(fnv1aId));
  assert.equal(new Set(ids).size, ids.length, 'distinct words, distinct ids');
  const chars = lens.tokenize('ab c', { mode: 'char' });
  assert.deepEqual(chars.tokens, ['a', 'b', ' ', 'c']);
  assert.deepEqual([...chars.ids], chars.tokens.map(fnv1aId));
  assert.deepEqual(lens.tokenize('').tokens, []);
});

test('the same word in a different case gets the same id', async () => {
  const lens = await loadLens();
  const { tokens, ids } = lens.tokenize('Bank bank BANK bAnK');
  assert.deepEqual(tokens, ['Bank', 'bank', 'BANK', 'bAnK']);
  assert.ok(ids.every((id) => id === ids[0]), `ids ${[...ids]}`);
  assert.equal(lens.tokenize('The').ids[0], lens.tokenize('the').ids[0]);
  assert.notEqual(lens.tokenize('bank').ids[0], lens.tokenize('banks').ids[0]);
});

test('embed(ids) returns [n·dModel] rows, deterministic per seed and per id', async () => {
  const lens = await loadLens();
  const { ids } = lens.tokenize('the cat saw the dog');
  const dModel = 16;
  const a = lens.createLayer({ dModel, heads: 4, seed: 5 });
  const a2 = lens.createLayer({ dModel, heads: 4, seed: 5 });
  const b = lens.createLayer({ dModel, heads: 4, seed: 6 });
  try {
    const e = a.embed(ids);
    assert.ok(e instanceof Float32Array);
    assert.equal(e.length, ids.length * dModel);
    assertBitIdentical(a2.embed(ids), e, 'same seed');
    assertBitIdentical(a.embed(Array.from(ids)), e, 'same ids as a plain array');
    assert.notDeepEqual(b.embed(ids), e, 'another seed gives another table');
    const row = (m, t) => m.subarray(t * dModel, (t + 1) * dModel);
    assertBitIdentical(row(e, 3), row(e, 0), '"the" twice gives the same row');
    assert.notDeepEqual(row(e, 1), row(e, 0));
    // Each row is randn(dModel) of a NumPy RandomState seeded from (seed, id).
    for (let t = 0; t < ids.length; ++t) {
      const want = Float32Array.from(lens.numpyRandn(embeddingRowSeed(5, ids[t]), dModel));
      assertBitIdentical(row(e, t), want, `row ${t}`);
    }
    assert.equal(a.embed([]).length, 0);
  } finally {
    [a, a2, b].forEach((l) => l.dispose());
  }
});

// ---- builds -----------------------------------------------------------------------------------

test('lens.simd is "wasm" (the SIMD build)', async () => {
  const lens = await loadLens();
  assert.equal(lens.simd, 'wasm');
});

test('the single-file build loads with no .wasm beside it and matches the normal build bit for bit',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-single-'));
    try {
      const copy = join(dir, 'attention-lens.single.mjs');
      copyFileSync(SINGLE_FILE_URL, copy);
      assert.deepEqual(readdirSync(dir), ['attention-lens.single.mjs']);
      const { loadAttentionLens } = await import(pathToFileURL(copy).href);
      const single = await loadAttentionLens();
      const normal = await loadLens();
      assert.equal(single.simd, 'wasm');
      for (const name of ['causal_padding_nobias', 'cross_causal_bias', 'wide']) {
        compareGoldenBuilds(normal, single, name, 'single file', ({ a: l1, b: l2, c, want: r1, got: r2 }) => {
          assert.equal(r2.steps.length, r1.steps.length);
          r1.steps.forEach((s, i) => assertBitIdentical(r2.steps[i].data, s.data, `${name} step ${s.id}`));
          const o1 = l1.forward(c.x, goldenForwardOptions(c, { weights: false }));
          const o2 = l2.forward(c.x, goldenForwardOptions(c, { weights: false }));
          assertBitIdentical(o2.output, o1.output, `${name} output-only path`);
        });
      }
      assert.deepEqual(single.numpyRandn(7, 100), normal.numpyRandn(7, 100));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test('loadAttentionLens accepts wasmBinary and gives an independent module', async () => {
  const { loadAttentionLens } = await import(MODULE_URL.href);
  const wasmBinary = readFileSync(new URL('../../dist/attention-lens.wasm', import.meta.url));
  const second = await loadAttentionLens({ wasmBinary });
  const first = await loadLens();
  assert.notEqual(second, first);
  const c = loadGoldenCase('single_head');
  const layer = goldenLayer(second, c);
  try {
    assertMatchesGolden(layer.forward(c.x, goldenForwardOptions(c)), c, 'single_head (wasmBinary)');
  } finally {
    layer.dispose();
  }
});

test('traceHead traces one head: its steps equal a full trace\'s, other heads have none', async () => {
  const lens = await loadLens();
  const layer = lens.createLayer({ dModel: 16, heads: 4, positional: 'rope', seed: 5 });
  try {
    const x = layer.embed(Uint32Array.from([3, 1, 4, 1, 5]));
    const full = layer.forward(x, { n: 5, mask: 'causal', trace: true });
    const one = layer.forward(x, { n: 5, mask: 'causal', trace: true, traceHead: 1 });
    assert.deepEqual(one.attention, full.attention);
    assert.ok(one.steps.every((s) => s.head === -1 || s.head === 1));
    const headSteps = full.steps.filter((s) => s.head === -1 || s.head === 1);
    assert.deepEqual(one.steps.map((s) => `${s.id}/${s.head}`), headSteps.map((s) => `${s.id}/${s.head}`));
    one.steps.forEach((s, i) => assert.deepEqual(s.data, headSteps[i].data, `${s.id} head ${s.head}`));
    // explain works for the traced head and says so for the others
    assert.equal(layer.explain({ step: 'scores', head: 1, row: 2, col: 1 }).value, one.steps.find((s) => s.id === 'scores').data[2 * 5 + 1]);
    assert.throws(() => layer.explain({ step: 'scores', head: 0, row: 2, col: 1 }), /head/);
    assert.throws(() => layer.forward(x, { n: 5, trace: true, traceHead: 4 }),
      /traceHead must be -1 \(every head\) or a head from 0 to 3, got 4/);
    assert.throws(() => layer.forward(x, { n: 5, trace: true, traceHead: 'one' }), /traceHead must be an integer/);
  } finally {
    layer.dispose();
  }
});
