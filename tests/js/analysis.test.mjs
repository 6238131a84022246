// The analyses through the public API in node (docs/API.md, "Analysis: what a head does"):
// m.logitLens, m.rollout and m.attribute on the golden checkpoints of GPT-2, Llama (GQA, RMSNorm)
// and GPT-NeoX (parallel residual) within 4× PyTorch float32's own error against the float64 run
// (tests/data/analysis, scripts/data/make-analysis-golden.py: TransformerLens's hooks); the lens'
// last row is the forward's; a knocked-out head changes the results as zeroing its out_proj
// columns would; the refusal of attribute for post-norm families; bad input named, and the model
// keeps working; the result shapes the .d.ts declares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertClose, assertThrowsMessage, DATA_DIR, loadLens, parseSafetensors } from './support.mjs';
import { assertAsAccurate, familyGolden, gpt2Golden, llamaGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const CASES = [['gpt2', 'tiny-f32', gpt2Golden], ['llama', 'llama-f32', llamaGolden], ['families', 'pythia-f32', familyGolden]];

function analysisGolden(name) {
  const { tensors, metadata } = parseSafetensors(readFileSync(`${DATA_DIR}analysis/${name}.expected.safetensors`));
  const ids = Int32Array.from(tensors.ids.data, Number);
  const [a, b] = Array.from(tensors.answers.data, Number);
  return { expected: tensors, ids, a, b, topK: Number(metadata.top_k) };
}

/** The attribution's parts in one list: embed, heads…, attentionBias…, mlp…, constant, total. */
function partsOf(r) {
  return [r.embed, ...r.heads, ...r.attentionBias, ...r.mlp, r.constant, r.total];
}

function goldenParts(expected, label) {
  return ['embed', 'heads', 'attention_bias', 'mlp', 'constant', 'total']
    .flatMap((key) => Array.from(expected[`attribution${label}.${key}`].data));
}

/** The parts but total sum to total within 1e-5 of their magnitudes (float rounding). */
function assertPartsSum(r) {
  const parts = partsOf(r).slice(0, -1);
  const sum = parts.reduce((s, v) => s + v, 0);
  const magnitude = parts.reduce((s, v) => s + Math.abs(v), 0);
  assert.ok(Math.abs(sum - r.total) <= 1e-5 * magnitude, `parts sum ${sum}, total ${r.total}`);
}

/** The forward's logit[a] − logit[b] at the last position. */
function forwardDifference(m, ids, a, b) {
  const { logits } = m.forward(ids, { logits: 'last' });
  return logits[a] - logits[b];
}

for (const [folder, name, golden] of CASES) {
  test(`${folder}/${name}: logitLens, rollout and attribute as accurate as PyTorch's float32`, async () => {
    const { weights, config } = golden(name);
    const { expected, ids, a, b, topK } = analysisGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const layers = m.config.layers;
      const n = ids.length;
      const l = m.logitLens(ids, { topK, token: a });
      assert.equal(l.rows, layers + 1);
      assert.equal(l.n, n);
      assert.equal(l.topK, topK);
      assert.ok(l.ids instanceof Int32Array && l.probs instanceof Float32Array);
      assert.deepEqual(Array.from(l.ids), Array.from(expected['lens.ids'].data, Number));
      assert.equal(l.token.id, a);
      assert.deepEqual(Array.from(l.token.ranks), Array.from(expected['lens.ranks'].data, Number));
      assertAsAccurate(l.probs, expected['lens32.probs'].data, expected['lens64.probs'].data, 'lens probabilities');
      assertAsAccurate(l.token.probs, expected['lens32.token'].data, expected['lens64.token'].data, "the token's probabilities");
      // The last row at the last position is the forward's next-token readout.
      const next = m.forward(ids, { logits: 'last', next: topK }).next;
      const at = (layers * n + n - 1) * topK;
      assert.deepEqual(Array.from(l.ids.subarray(at, at + topK)), next.map((t) => t.id));
      assert.deepEqual(Array.from(l.probs.subarray(at, at + topK)), next.map((t) => Math.fround(t.probability)));

      const r = m.rollout(ids);
      assert.ok(r instanceof Float32Array);
      assert.equal(r.length, layers * n * n);
      assertAsAccurate(r, expected.rollout32.data, expected.rollout64.data, 'rollout');
      for (let row = 0; row < layers * n; ++row) {
        const sum = r.subarray(row * n, row * n + n).reduce((s, v) => s + v, 0);
        assert.ok(Math.abs(sum - 1) < 1e-6, `rollout row ${row} sums to ${sum}`);
      }

      const d = m.attribute(ids, { answers: [a, b] });
      assert.deepEqual(Object.keys(d), ['total', 'embed', 'heads', 'attentionBias', 'mlp', 'constant']);
      assert.equal(d.heads.length, layers * m.config.heads);
      assert.equal(d.mlp.length, layers);
      assertAsAccurate(partsOf(d), goldenParts(expected, '32'), goldenParts(expected, '64'), 'attribution');
      assertPartsSum(d);
      assert.equal(d.total, forwardDifference(m, ids, a, b));
    } finally {
      m.dispose();
    }
  });
}

test('a knocked-out head changes the results as zeroing its out_proj columns would', async () => {
  for (const [folder, name, golden] of CASES) {
    const { weights, config } = golden(name);
    const { ids, a, b } = analysisGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    const reference = await lens.loadCheckpoint({ weights, config });
    try {
      const { heads } = m.config;
      const head = 1;
      const plain = m.attribute(ids, { answers: [a, b] });
      m.ablate([{ layer: 0, head }]);
      const key = 'layers.0.attn.out_proj.weight';
      const [rows, cols] = reference.parameterShapes[key];
      const weight = reference.parameters()[key];
      const width = cols / heads;
      for (let r = 0; r < rows; ++r) weight.fill(0, r * cols + head * width, r * cols + (head + 1) * width);
      reference.setParameters({ [key]: weight });

      const got = m.logitLens(ids, { token: a });
      const want = reference.logitLens(ids, { token: a });
      assert.deepEqual(got.ids, want.ids, `${name}: lens ids`);
      assertClose(got.probs, want.probs, { atol: 1e-7, rtol: 1e-6, what: `${name} lens` });
      assertClose(got.token.probs, want.token.probs, { atol: 1e-7, rtol: 1e-6, what: `${name} token` });
      assertClose(m.rollout(ids), reference.rollout(ids), { atol: 1e-7, rtol: 1e-6, what: `${name} rollout` });
      const ablated = m.attribute(ids, { answers: [a, b] });
      assertClose(partsOf(ablated), partsOf(reference.attribute(ids, { answers: [a, b] })),
        { atol: 1e-6, rtol: 1e-5, what: `${name} attribution` });
      assert.equal(ablated.heads[head], 0);
      assert.notEqual(plain.heads[head], 0);
      assert.ok(Math.abs(ablated.total - plain.total) > 1e-4, `${name}: the knock-out moves the logit difference`);
      m.ablate([]);
      assert.deepEqual(partsOf(m.attribute(ids, { answers: [a, b] })), partsOf(plain));
    } finally {
      m.dispose();
      reference.dispose();
    }
  }
});

test('attribute is refused, saying why, for post-norm and soft-capped families; logitLens and rollout work', async () => {
  for (const [name, why] of [['gemma2-f32', /norms after the sublayers.*final logits are soft-capped/],
    ['olmo2-f32', /norms after the sublayers/]]) {
    const { weights, config, expected } = familyGolden(name);
    const ids = Int32Array.from(expected.ids.data, Number);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      assertThrowsMessage(() => m.attribute(ids, { answers: [1, 2] }), /cannot split this model's logit difference/);
      assertThrowsMessage(() => m.attribute(ids, { answers: [1, 2] }), why);
      const l = m.logitLens(ids, { topK: 3 });
      const next = m.forward(ids, { logits: 'last', next: 3 }).next;
      const at = (m.config.layers * ids.length + ids.length - 1) * 3;
      assert.deepEqual(Array.from(l.ids.subarray(at, at + 3)), next.map((t) => t.id), `${name}: the soft-capped last row`);
      assert.equal(l.token, null);
      assert.equal(m.rollout(ids).length, m.config.layers * ids.length ** 2);
    } finally {
      m.dispose();
    }
  }
});

test('bad input is named and the model keeps working', async () => {
  const { weights, config } = gpt2Golden('tiny-f32'); // vocab 64
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const ids = [1, 2, 3, 4];
    for (const run of [(x) => m.logitLens(x), (x) => m.rollout(x), (x) => m.attribute(x, { answers: [1, 2] })]) {
      assertThrowsMessage(() => run([1, 64, 3]), /token id 64 at index 1 is out of range: the vocabulary has ids 0 to 63/);
      assertThrowsMessage(() => run([]), /at least one token id/);
      assertThrowsMessage(() => run('abc'), /ids must be an Int32Array or an array of integers/);
      run(ids);
    }
    assertThrowsMessage(() => m.logitLens(ids, { topK: 0 }), /topK must be between 1 and 64 \(the vocabulary's size\), got 0/);
    assertThrowsMessage(() => m.logitLens(ids, { topK: 65 }), /got 65/);
    assertThrowsMessage(() => m.logitLens(ids, { topK: 2.5 }), /topK must be an integer/);
    assertThrowsMessage(() => m.logitLens(ids, { token: 64 }), /token 64 is not in the vocabulary: it has ids 0 to 63/);
    assertThrowsMessage(() => m.logitLens(ids, { k: 3 }), /unknown logitLens options key 'k'/);
    assertThrowsMessage(() => m.attribute(ids, { answers: [1, 99] }), /answer 99 is not in the vocabulary: it has ids 0 to 63/);
    assertThrowsMessage(() => m.attribute(ids, { answers: [1] }), /answers must be \[a, b\]: two token ids, got an array of length 1/);
    assertThrowsMessage(() => m.attribute(ids), /answers must be \[a, b\]/);
    assertThrowsMessage(() => m.attribute(ids, { answers: [1, 'x'] }), /answers\[1\] must be an integer token id/);
    assert.equal(m.logitLens(ids).topK, 5); // the core's default
    assertPartsSum(m.attribute(ids, { answers: [5, 9] }));
  } finally {
    m.dispose();
  }
  assertThrowsMessage(() => m.rollout([1]), /disposed/);
});

test('a created model: the analyses through the API, and the shapes the .d.ts declares', () => {
  const m = lens.createModel({ vocab: 40, layers: 2, heads: 4, dModel: 32, mlp: true, seed: 3 });
  try {
    const ids = [3, 17, 9, 3, 17, 21];
    const l = m.logitLens(ids, { topK: 2, token: 9 });
    assert.deepEqual(Object.keys(l), ['rows', 'n', 'topK', 'ids', 'probs', 'token']);
    assert.deepEqual(Object.keys(l.token), ['id', 'probs', 'ranks']);
    assert.equal(l.ids.length, 3 * 6 * 2);
    assert.ok(l.token.ranks instanceof Int32Array && l.token.probs instanceof Float32Array);
    assertPartsSum(m.attribute(Int32Array.from(ids), { answers: new Int32Array([9, 21]) }));
    const dts = readFileSync(new URL('../../web/api/attention-lens-model.d.ts', import.meta.url), 'utf8');
    const declared = (name) => {
      const start = dts.indexOf(`export interface ${name} {`);
      assert.ok(start >= 0, `the .d.ts declares ${name}`);
      const body = dts.slice(start, dts.indexOf('\n}', start)).replace(/\/\*[\s\S]*?\*\//g, '');
      return [...body.matchAll(/^ {2}(?:readonly )?([A-Za-z]\w*)\??:/gm)].map((match) => match[1]);
    };
    assert.deepEqual(declared('LogitLens'), Object.keys(l));
    assert.deepEqual(declared('LogitAttribution'), Object.keys(m.attribute(ids, { answers: [1, 2] })));
    assert.deepEqual(declared('LogitLensOptions'), ['topK', 'token']);
    for (const method of ['logitLens', 'rollout', 'attribute']) {
      assert.match(dts, new RegExp(`^ {2}${method}\\(ids: TokenIds`, 'm'), `TransformerModel declares ${method}`);
    }
  } finally {
    m.dispose();
  }
});
