// The shipped trained models (web/models/, made by scripts/data/make-trained-models.sh): each one
// loads by name and behaves as its catalogue entry claims, measured here in wasm on the same
// probes and held-out sets the native tool used (the same math: only float rounding differs);
// lens.trainedModel's errors, its alphabet, and model.attentionLayer reproducing a layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertClose, assertThrowsMessage, loadLens, MODULE_URL, withTrainedModel } from './support.mjs';

const lens = await loadLens();
const shipped = JSON.parse(readFileSync(new URL('../../web/models/models.json', import.meta.url), 'utf8'));
const SCORE_TOLERANCE = 2e-4;  // a head score is a mean of softmax weights
const LOSS_TOLERANCE = 2e-4;   // nats per token

// Mean cross-entropy (float64) and argmax accuracy of a model on a batch, in chunks of 32
// sequences as the core's evaluate().
function evaluate(model, { ids, targets, n, batch }) {
  const vocab = model.config.vocab;
  let loss = 0;
  let correct = 0;
  let count = 0;
  for (let first = 0; first < batch; first += 32) {
    const b = Math.min(32, batch - first);
    const { logits } = model.forward(ids.subarray(first * n, (first + b) * n), { n, batch: b });
    for (let r = 0; r < b * n; ++r) {
      const target = targets[first * n + r];
      if (target < 0) continue;
      const row = logits.subarray(r * vocab, (r + 1) * vocab);
      let best = 0;
      for (let v = 1; v < vocab; ++v) if (row[v] > row[best]) best = v;
      const max = row[best];
      let z = 0;
      for (const v of row) z += Math.exp(v - max);
      loss += Math.log(z) + max - row[target];
      correct += best === target ? 1 : 0;
      ++count;
    }
  }
  return { loss: loss / count, accuracy: correct / count, count };
}

function best(scores, key) {
  let top = null;
  for (const s of scores) if (s[key] !== null && (top === null || s[key] > top.score)) top = { layer: s.layer, head: s.head, score: s[key] };
  return top;
}

// Every way `model` departs from the metrics `info` claims: [] when it behaves as claimed.
function departures(model, info) {
  const out = [];
  const near = (what, measured, claimed, tolerance) => {
    if (!(Math.abs(measured - claimed) <= tolerance)) out.push(`${what}: measured ${measured}, claimed ${claimed}`);
  };
  const m = info.metrics;
  const scores = model.headScores();
  assert.equal(scores.length, m.heads.length);
  for (const [i, s] of scores.entries()) {
    for (const key of ['previousToken', 'induction', 'sameToken', 'firstToken']) {
      const claimed = m.heads[i][key];
      if (claimed === null || s[key] === null) {
        if (claimed !== s[key]) out.push(`layer ${s.layer} head ${s.head} ${key}: ${s[key]} vs ${claimed}`);
      } else {
        near(`layer ${s.layer} head ${s.head} ${key}`, s[key], claimed, SCORE_TOLERANCE);
      }
    }
  }
  for (const [key, score] of [['bestInductionHead', 'induction'], ['bestPreviousTokenHead', 'previousToken']]) {
    const top = best(scores, score);
    if (top.layer !== m[key].layer || top.head !== m[key].head) out.push(`${key}: layer ${top.layer} head ${top.head}, claimed layer ${m[key].layer} head ${m[key].head}`);
    near(key, top.score, m[key].score, SCORE_TOLERANCE);
  }
  const t = info.training;
  const trainer = lens.createTrainer(model, { task: info.task, seed: t.seed, heldOut: t.heldOut });
  const held = trainer.heldOut();
  if (trainer.task.vocabulary !== info.vocabulary) out.push('vocabulary differs from the task\'s');
  trainer.dispose();
  const measured = evaluate(model, held);
  near('heldOutLoss', measured.loss, m.heldOutLoss, LOSS_TOLERANCE);
  near('heldOutAccuracy', measured.accuracy, m.heldOutAccuracy, 3 / measured.count);
  if (m.bestPreviousTokenHeadOnText) {
    const probe = { ids: held.ids.subarray(0, 16 * held.n), n: held.n, batch: 16 };
    const top = best(model.headScores(probe), 'previousToken');
    const claimed = m.bestPreviousTokenHeadOnText;
    if (top.layer !== claimed.layer || top.head !== claimed.head) out.push('bestPreviousTokenHeadOnText: another head');
    near('bestPreviousTokenHeadOnText', top.score, claimed.score, SCORE_TOLERANCE);
  }
  return out;
}

test('lens.trainedModels lists the shipped catalogue, and the module carries it unchanged', () => {
  assert.deepEqual([...lens.trainedModels], shipped.models.map((m) => m.name));
  assert.ok(lens.trainedModels.includes('induction') && lens.trainedModels.includes('english'));
  let total = 0;
  for (const info of shipped.models) {
    const bytes = readFileSync(new URL(`../../web/models/${info.file}`, import.meta.url));
    assert.equal(bytes.length, info.bytes, `${info.file}: size in models.json`);
    total += bytes.length;
  }
  assert.ok(total < 2 * 1024 * 1024, `the shipped models take ${total} bytes, over 2 MB`);
});

for (const info of shipped.models) {
  test(`trained model '${info.name}' loads by name and behaves as models.json claims`, async () => {
    await withTrainedModel(lens, info.name, (model) => {
      assert.deepEqual(model.info, info);
      assert.deepEqual({ ...model.config }, info.config);
      assert.deepEqual(departures(model, info), []);
    });
  });
}

test('the claims check fails for a model that is not the shipped one', async () => {
  const induction = shipped.models.find((m) => m.name === 'induction');
  const english = shipped.models.find((m) => m.name === 'english');
  // Same config, untrained weights: far from every claim.
  const untrained = lens.createModel(induction.config);
  assert.ok(departures(untrained, induction).length > 10);
  untrained.dispose();
  // One weight changed in the shipped file (a corrupted download).
  const bytes = new Uint8Array(readFileSync(new URL('../../web/models/induction.safetensors', import.meta.url)));
  const tampered = await lens.trainedModel('induction', { bytes });
  const params = tampered.parameters();
  params['layers.1.attn.in_proj_weight'].fill(0, 0, 64 * 64);  // layer 2's queries
  tampered.setParameters({ 'layers.1.attn.in_proj_weight': params['layers.1.attn.in_proj_weight'] });
  assert.ok(departures(tampered, induction).length > 0);
  tampered.dispose();
  // Another model's file under this name: the config does not fit.
  const englishBytes = readFileSync(new URL(`../../web/models/${english.file}`, import.meta.url));
  await assert.rejects(lens.trainedModel('induction', { bytes: englishBytes }),
    /could not be loaded: .*(tensor|shape)/);
});

test('lens.trainedModel: unknown names and bad options are clear errors', async () => {
  await assert.rejects(lens.trainedModel('gpt5'), /unknown trained model "gpt5"; the shipped models are: induction, english/);
  await assert.rejects(lens.trainedModel(3), /unknown trained model 3/);
  await assert.rejects(lens.trainedModel('induction', { url: 'x' }), /unknown trainedModel options key 'url'/);
  await assert.rejects(lens.trainedModel('induction', { bytes: 'abc' }), /bytes expects a Uint8Array/);
  await assert.rejects(lens.trainedModel('induction', { bytes: new Uint8Array(10) }), /could not be loaded/);
  // The module keeps working.
  const model = await lens.trainedModel('induction');
  model.dispose();
});

test('a trained model encodes and decodes its alphabet; other characters are named', async () => {
  await withTrainedModel(lens, 'english', (model) => {
    const text = "the devil's dictionary.";
    const ids = model.encode(text);
    assert.ok(ids instanceof Int32Array);
    assert.equal(ids.length, text.length);
    assert.equal(model.decode(ids), text);
    assert.equal(model.vocabulary, model.info.vocabulary);
    assertThrowsMessage(() => model.encode('The'), /character "T" at position 0 is not in the english model's alphabet/);
    assertThrowsMessage(() => model.decode([48]), /ids\[0\] = 48 is not a token of the english model/);
  });
});

test("unknown: 'map' reads what people type: capitals lowercased, look-alikes, marked substitutes", async () => {
  await withTrainedModel(lens, 'english', (model) => {
    // The english model's alphabet, by hand: the ids of the mapped text must be its indices.
    const alphabet = " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-()";
    assert.equal(model.vocabulary, alphabet);
    const byHand = (text) => Int32Array.from(text, (c) => alphabet.indexOf(c));
    const typed = 'The bank will not loan money.';
    const read = model.tokenize(typed, { unknown: 'map' });
    assert.deepEqual(read.ids, byHand('the bank will not loan money.'));
    assert.deepEqual(model.encode(typed, { unknown: 'map' }), read.ids);
    assert.deepEqual(read.tokens, Array.from('the bank will not loan money.'));
    assert.deepEqual(read.mapped, [{ position: 0, typed: 'T', read: 't', how: 'lowercase' }]);
    assert.equal(read.note, "Read in the english model's alphabet: 1 capital as lowercase.");
    // Positions count characters as JavaScript's Array.from does (an emoji is one; a lone
    // surrogate is one U+FFFD).
    const odd = model.tokenize('Café — €5 😀\uD800x', { unknown: 'map' });
    assert.deepEqual(odd.tokens, Array.from('cafe -  5   x'));
    assert.deepEqual(odd.mapped.map((m) => [m.position, m.typed, m.read, m.how]), [
      [0, 'C', 'c', 'lowercase'], [3, 'é', 'e', 'similar'], [5, '—', '-', 'similar'],
      [7, '€', ' ', 'replaced'], [10, '😀', ' ', 'replaced'], [11, '\uFFFD', ' ', 'replaced']]);
    assert.equal(odd.ids.length, Array.from('Café — €5 😀\uD800x').length);
    assert.equal(odd.note, "Read in the english model's alphabet: 1 capital as lowercase; é → e, — → -; " +
      '€ → ␣, 😀 → ␣, \uFFFD → ␣ (not in the alphabet: marked).');
    // The forward of the mapped text is the forward of the text typed in the alphabet.
    const a = model.forward(read.ids, { n: read.ids.length }).logits;
    const b = model.forward(model.encode('the bank will not loan money.'), { n: read.ids.length }).logits;
    assert.deepEqual(a, b);
    // The default stays strict; bad options are named; the model keeps working.
    assert.deepEqual(model.tokenize('abc').mapped, []);
    assertThrowsMessage(() => model.tokenize('The'), /character "T" at position 0 is not in the english model's alphabet/);
    assertThrowsMessage(() => model.encode('The', { unknown: 'ignore' }), /unknown unknown-character policy 'ignore': expected 'error' or 'map'/);
    assertThrowsMessage(() => model.encode('The', { unknown: 1 }), /unknown must be a string, got 1/);
    assertThrowsMessage(() => model.encode('The', { strict: false }), /unknown tokenize options key 'strict'/);
    assertThrowsMessage(() => model.tokenize(42), /text must be a string, got 42/);
    assert.deepEqual(lens.catalog.unknownCharacters, ['error', 'map']);
    assert.equal(model.encode('ok').length, 2);
  });
});

test('model.attentionLayer: a standalone layer on its input and weights reproduces the layer', async () => {
  const configs = [
    ...await Promise.all(lens.trainedModels.map((name) => lens.trainedModel(name))),
    lens.createModel({ vocab: 11, context: 12, dModel: 16, heads: 2, layers: 3, layerNorm: false, positional: 'rope', bias: false, seed: 4 }),
  ];
  for (const model of configs) {
    const ids = model.info ? model.encode(model.info.task === 'english' ? 'a cat sat on the mat.' : 'abcdefabcdef')
      : Int32Array.from([1, 2, 3, 4, 5, 1, 2, 3]);
    const n = ids.length;
    const { attention } = model.forward(ids, { n });
    for (let l = 0; l < model.config.layers; ++l) {
      const { input, config, weights } = model.attentionLayer(l, ids, { n });
      assert.equal(input.length, n * model.config.dModel);
      assert.deepEqual(Object.keys(config).sort(), ['bias', 'dModel', 'heads', 'positional']);
      const layer = lens.createLayer(config);
      layer.setWeights(weights);
      const r = layer.forward(input, { n, mask: 'causal' });
      assertClose(r.attention, attention[l], { atol: 1e-6, what: `layer ${l}` });
      layer.dispose();
    }
    assertThrowsMessage(() => model.attentionLayer(model.config.layers, ids, { n }), /layer must be an integer from 0 to/);
    assertThrowsMessage(() => model.attentionLayer(0, ids, { n, batch: 2 }), /unknown attentionLayer options key 'batch'/);
    model.dispose();
  }
});

test('the single-file module carries the same catalogue', async () => {
  const single = await import(new URL('attention-lens.single.mjs', MODULE_URL).href);
  const other = await single.loadAttentionLens();
  assert.deepEqual([...other.trainedModels], [...lens.trainedModels]);
});
