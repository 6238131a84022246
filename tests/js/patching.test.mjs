// m.patch through the public API in node (docs/API.md, "Analysis: what a head does"): activation
// patching over heads, residual and layers on the golden checkpoints of GPT-2, Llama (GQA,
// RMSNorm) and GPT-NeoX (parallel residual) within 4× PyTorch float32's own error against the
// float64 run (tests/data/analysis, scripts/data/make-analysis-golden.py: one site at a time with
// TransformerLens-named forward hooks); the metrics are the forward's logit differences; a
// knocked-out head is knocked out in both runs; bad input named, and the model keeps working; the
// shapes the .d.ts declares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertThrowsMessage, DATA_DIR, loadLens, parseSafetensors } from './support.mjs';
import { assertAsAccurate, familyGolden, gpt2Golden, llamaGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const CASES = [['gpt2', 'tiny-f32', gpt2Golden], ['llama', 'llama-f32', llamaGolden], ['families', 'pythia-f32', familyGolden]];

function patchingGolden(name) {
  const { tensors } = parseSafetensors(readFileSync(`${DATA_DIR}analysis/${name}.expected.safetensors`));
  return {
    expected: tensors,
    clean: Int32Array.from(tensors.ids.data, Number),
    corrupted: Int32Array.from(tensors.corrupted.data, Number),
    answers: Array.from(tensors.answers.data, Number),
  };
}

/** The forward's logit[a] − logit[b] at the last position, within float32 rounding of ours. */
function assertForwardMetric(m, ids, [a, b], metric, what) {
  const { logits } = m.forward(ids, { logits: 'last' });
  const forward = logits[a] - logits[b];
  assert.ok(Math.abs(metric - forward) <= 1e-5 * (1 + Math.abs(forward)), `${what}: ${metric} vs the forward's ${forward}`);
}

for (const [folder, name, golden] of CASES) {
  test(`${folder}/${name}: patch over heads, residual and layers as accurate as PyTorch's float32`, async () => {
    const { weights, config } = golden(name);
    const { expected, clean, corrupted, answers } = patchingGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const { layers, heads } = m.config;
      const h = m.patch({ clean, corrupted, answers, over: 'heads' });
      assert.deepEqual(Object.keys(h), ['clean', 'corrupted', 'effect']);
      assertAsAccurate([h.clean, h.corrupted], expected['patch32.metrics'].data, expected['patch64.metrics'].data, 'metrics');
      assertForwardMetric(m, clean, answers, h.clean, 'clean');
      assertForwardMetric(m, corrupted, answers, h.corrupted, 'corrupted');
      assert.ok(h.effect instanceof Float32Array);
      assert.equal(h.effect.length, layers * heads);
      assertAsAccurate(h.effect, expected['patch32.heads'].data, expected['patch64.heads'].data, 'heads');

      const r = m.patch({ clean: Array.from(clean), corrupted: Array.from(corrupted), answers, over: 'residual' });
      assert.equal(r.effect.length, layers * clean.length);
      assertAsAccurate(r.effect, expected['patch32.residual'].data, expected['patch64.residual'].data, 'residual');

      const l = m.patch({ clean, corrupted, answers: Int32Array.from(answers), over: 'layers' });
      assert.deepEqual(Object.keys(l.effect), ['attention', 'mlp']);
      assertAsAccurate(l.effect.attention, expected['patch32.attention'].data, expected['patch64.attention'].data, 'attention');
      assertAsAccurate(l.effect.mlp, expected['patch32.mlp'].data, expected['patch64.mlp'].data, 'mlp');
    } finally {
      m.dispose();
    }
  });
}

test('a knocked-out head is knocked out in both runs: its effect is 0, the metrics are the ablated forward\'s', async () => {
  const { weights, config } = llamaGolden('llama-f32');
  const { clean, corrupted, answers } = patchingGolden('llama-f32');
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const { heads } = m.config;
    const plain = m.patch({ clean, corrupted, answers, over: 'heads' });
    assert.notEqual(plain.effect[heads + 1], 0);
    m.ablate([{ layer: 1, head: 1 }]);
    const ablated = m.patch({ clean, corrupted, answers, over: 'heads' });
    assert.equal(ablated.effect[heads + 1], 0);
    assertForwardMetric(m, clean, answers, ablated.clean, 'clean, knocked out');
    assert.notEqual(ablated.clean, plain.clean);
    m.ablate([]);
    assert.deepEqual(m.patch({ clean, corrupted, answers, over: 'heads' }), plain);
  } finally {
    m.dispose();
  }
});

test('patch on a post-norm family (Gemma 3): the metrics are the forward\'s', async () => {
  const { weights, config, expected } = familyGolden('gemma3-f32');
  const clean = Int32Array.from(expected.ids.data, Number);
  const answers = [clean[1], clean[3]];
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const corrupted = clean.slice();
    corrupted[2] = (corrupted[2] + 5) % m.config.vocab;
    const p = m.patch({ clean, corrupted, answers, over: 'residual' });
    assertForwardMetric(m, clean, answers, p.clean, 'clean');
    assertForwardMetric(m, corrupted, answers, p.corrupted, 'corrupted');
    // Before position 2 the prompts agree: nothing to restore there, in any block.
    for (let l = 0; l < m.config.layers; ++l) {
      assert.equal(p.effect[l * clean.length], 0);
      assert.equal(p.effect[l * clean.length + 1], 0);
    }
  } finally {
    m.dispose();
  }
});

test('patch: bad input is named and the model keeps working; the shapes the .d.ts declares', async () => {
  const { weights, config } = gpt2Golden('tiny-f32'); // vocab 64, 2 layers of 2 heads
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const clean = [1, 2, 3, 4, 5];
    const corrupted = [1, 9, 3, 4, 5];
    const answers = [7, 8];
    const over = 'heads';
    assertThrowsMessage(() => m.patch({ clean, corrupted: [1, 2, 3], answers, over }),
      /same length.*clean has 5 tokens, corrupted has 3/);
    assertThrowsMessage(() => m.patch({ clean, corrupted, answers, over: 'neurons' }),
      /unknown patching sites 'neurons': use 'heads', 'residual' or 'layers'/);
    assertThrowsMessage(() => m.patch({ clean, corrupted, answers }), /over must be a string naming the sites to patch, got undefined/);
    assertThrowsMessage(() => m.patch({ clean, corrupted, answers: [7], over }), /patch's answers must be \[a, b\]: two token ids, got an array of length 1/);
    assertThrowsMessage(() => m.patch({ clean, corrupted, answers: [7, 64], over }), /answer 64 is not in the vocabulary: it has ids 0 to 63/);
    assertThrowsMessage(() => m.patch({ clean, corrupted: [1, 64, 3, 4, 5], answers, over }), /token id 64 at index 1 is out of range/);
    assertThrowsMessage(() => m.patch({ clean, corrupted: clean, answers, over }), /same logit difference.*nothing to restore/);
    assertThrowsMessage(() => m.patch({ clean: 'abc', corrupted, answers, over }), /clean must be an Int32Array or an array of integers/);
    assertThrowsMessage(() => m.patch({ clean, corrupted, answers, over, sites: 1 }), /unknown patch options key 'sites'/);
    const p = m.patch({ clean, corrupted, answers, over });
    assert.equal(p.effect.length, 2 * 2);
    const dts = readFileSync(new URL('../../web/api/attention-lens-model.d.ts', import.meta.url), 'utf8');
    const declared = (name) => {
      const start = dts.indexOf(`export interface ${name}`);
      assert.ok(start >= 0, `the .d.ts declares ${name}`);
      const body = dts.slice(start, dts.indexOf('\n}', start)).replace(/\/\*[\s\S]*?\*\//g, '');
      return [...body.matchAll(/^ {2}(?:readonly )?([A-Za-z]\w*)\??:/gm)].map((match) => match[1]);
    };
    assert.deepEqual(declared('Patching'), Object.keys(p));
    assert.deepEqual(declared('PatchOptions'), ['clean', 'corrupted', 'answers', 'over']);
    assert.match(dts, /^ {2}patch\(options: PatchOptions/m, 'TransformerModel declares patch');
  } finally {
    m.dispose();
  }
  assertThrowsMessage(() => m.patch({ clean: [1], corrupted: [2], answers: [1, 2], over: 'heads' }), /disposed/);
});
