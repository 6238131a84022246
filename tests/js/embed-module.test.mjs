// The <attention-lens> element's module (build/wasm-release/attention-lens.embed.mjs, inlined in
// dist/attention-lens-element.js): the same API and wasm built without the trainer, gradients,
// head scores and checkpoint import (ATTN_BINDINGS_FULL_API=0). What it keeps computes bit for
// bit what the full module computes; what it leaves out throws one clear message and the module
// keeps working; the element really inlines this wasm, and the left-out code is really gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  assertBitIdentical, assertThrowsMessage, compareGoldenBuilds, loadLens, EMBED_MODULE_URL,
  MODULE_URL,
} from './support.mjs';

const full = await loadLens();
const embed = await (await import(EMBED_MODULE_URL.href)).loadAttentionLens();
const LEFT_OUT = /is not in this build: the <attention-lens> element's module leaves out training and checkpoints; import attention-lens/;

/** The wasm inlined in a single-file script (Emscripten's data: URL). */
function inlinedWasm(path) {
  const text = readFileSync(path, 'utf8');
  const found = text.match(/data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/);
  assert.ok(found, `${path} inlines a wasm`);
  return Buffer.from(found[1], 'base64');
}

const embedWasm = inlinedWasm(EMBED_MODULE_URL);
const fullWasm = readFileSync(new URL('attention-lens.wasm', MODULE_URL));

test('layers: the golden cases, traced and output-only, bit for bit as the full module', () => {
  for (const name of ['causal_padding_nobias', 'cross_causal_bias', 'wide']) {
    compareGoldenBuilds(full, embed, name, 'embed module', ({ a, b, want, got }) => {
      want.steps.forEach((s, i) => assertBitIdentical(got.steps[i].data, s.data, `${name} step ${s.id}`));
      assert.equal(b.explain({ step: 'weights', head: 0, row: 1, col: 0 }).value,
        a.explain({ step: 'weights', head: 0, row: 1, col: 0 }).value);
    });
  }
  assert.deepEqual(embed.catalog, full.catalog);
  assert.deepEqual(embed.numpyRandn(3, 50), full.numpyRandn(3, 50));
});

test('every shipped trained model: logits, each layer\'s attention and input bit for bit as the full module', async () => {
  assert.deepEqual([...embed.trainedModels], [...full.trainedModels]);
  for (const name of full.trainedModels) {
    const bytes = readFileSync(new URL(`models/${name}.safetensors`, MODULE_URL));
    const [a, b] = [await full.trainedModel(name, { bytes }), await embed.trainedModel(name, { bytes })];
    try {
      const text = b.vocabulary.slice(0, Math.min(12, a.config.context)).repeat(2).slice(0, a.config.context);
      const ids = b.encode(text);
      assert.deepEqual(ids, a.encode(text));
      const [want, got] = [a.forward(ids, { n: ids.length }), b.forward(ids, { n: ids.length })];
      assertBitIdentical(got.logits, want.logits, `${name} logits`);
      assert.equal(got.attention.length, a.config.layers);
      want.attention.forEach((w, l) => assertBitIdentical(got.attention[l], w, `${name} layer ${l} attention`));
      for (let layer = 0; layer < a.config.layers; layer++) {
        const [x, y] = [a.attentionLayer(layer, ids, { n: ids.length }), b.attentionLayer(layer, ids, { n: ids.length })];
        assertBitIdentical(y.input, x.input, `${name} layer ${layer}'s input`);
      }
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('what it leaves out throws one clear message, and the module keeps working', async () => {
  const model = embed.createModel({ vocab: 8, context: 6, dModel: 8, heads: 2, layers: 1 });
  const ids = new Int32Array([1, 2, 3, 4]);
  await assert.rejects(embed.loadCheckpoint({ weights: new Uint8Array(8), config: {} }),
    (error) => /^lens\.loadCheckpoint /.test(error.message) && LEFT_OUT.test(error.message));
  assertThrowsMessage(() => embed.createTrainer(model, { task: 'copy' }), LEFT_OUT);
  assertThrowsMessage(() => model.lossAndGradients(ids, ids, { n: 4 }), LEFT_OUT);
  assertThrowsMessage(() => model.headScores(), LEFT_OUT);
  assertThrowsMessage(() => model.headAblation(), LEFT_OUT);
  assertThrowsMessage(() => model.logitLens(ids), LEFT_OUT);
  assertThrowsMessage(() => model.rollout(ids), LEFT_OUT);
  assertThrowsMessage(() => model.attribute(ids, { answers: [1, 2] }), LEFT_OUT);
  // Still working: the same model's forward, saved and loaded, as the full module's.
  const twin = full.createModel({ vocab: 8, context: 6, dModel: 8, heads: 2, layers: 1 });
  twin.loadSafetensors(model.saveSafetensors());
  assertBitIdentical(model.forward(ids, { n: 4 }).logits, twin.forward(ids, { n: 4 }).logits, 'logits');
  model.dispose();
  twin.dispose();
});

test('the element inlines this module\'s wasm, and the trainer, English text and checkpoint import are not in it', () => {
  const element = inlinedWasm(new URL('../../dist/attention-lens-element.js', import.meta.url));
  assert.ok(element.equals(embedWasm), 'dist/attention-lens-element.js carries attention-lens.embed.mjs\'s wasm');
  // Strings only the left-out code holds, each present in the full module (so this can fail).
  const englishText = Buffer.from('abdication set all tongues wagging in the spanish nation');
  for (const marker of [englishText, Buffer.from('CheckpointHandle\0'), Buffer.from('TrainerHandle\0'), Buffer.from('BpeHandle\0')]) {
    assert.ok(fullWasm.includes(marker), `the full module holds ${JSON.stringify(marker.toString())}`);
    assert.ok(!embedWasm.includes(marker), `the embed module leaves out ${JSON.stringify(marker.toString())}`);
  }
  assert.ok(embedWasm.length < fullWasm.length);
});
