// The "Your model" view's DOM-free helpers (web/views/model/model-data.js): the top next tokens
// against a float64 softmax of a real checkpoint's logits, the head finder's seeded probe (and
// that the core's head scores measure induction on it), the head table's order, GPT-2's
// byte-level vocabulary entries as text, and which file a dropped file is.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { fileRole, idTexts, inductionProbe, percent, sortHeads, topTokens, vocabEntryText } from '../../web/views/model/model-data.js';
import { gpt2Golden, gpt2Tokenizer } from './checkpoint-support.mjs';
import { loadLens } from './support.mjs';

const lens = await loadLens();

test('topTokens: the k highest logits, softmax probabilities as float64, ties by id', () => {
  const { weights, config, expected } = gpt2Golden('tiny-f32');
  return lens.loadCheckpoint({ weights, config }).then((gpt) => {
    try {
      const ids = Int32Array.from(expected.ids.data);
      const n = ids.length;
      const { logits } = gpt.forward(ids, { n });
      const v = config.vocab_size;
      const row = logits.subarray((n - 1) * v, n * v);
      const top = topTokens(row, 10);
      assert.equal(top.length, 10);
      const max = Math.max(...row);
      const sum = Array.from(row).reduce((s, x) => s + Math.exp(x - max), 0);
      const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a]);
      assert.deepEqual(top.map((t) => t.id), order.slice(0, 10));
      for (const t of top) assert.ok(Math.abs(t.probability - Math.exp(row[t.id] - max) / sum) < 1e-12);
      for (let i = 1; i < top.length; ++i) assert.ok(top[i].probability <= top[i - 1].probability);
      assert.equal(top[0].token, `#${top[0].id}`);
      const all = topTokens(row, v);
      assert.ok(Math.abs(all.reduce((s, t) => s + t.probability, 0) - 1) < 1e-9);
    } finally {
      gpt.dispose();
    }
  });
});

test('topTokens: ties keep id order; huge logits do not overflow', () => {
  const top = topTokens(Float32Array.of(1000, 1000, -5), 3, (id) => `t${id}`);
  assert.deepEqual(top.map((t) => [t.id, t.token]), [[0, 't0'], [1, 't1'], [2, 't2']]);
  assert.ok(Math.abs(top[0].probability - 0.5) < 1e-12);
});

test('inductionProbe: seeded random tokens then their repeat, within vocab and context', () => {
  const probe = inductionProbe(50257, 1024);
  assert.equal(probe.length, 50);
  assert.deepEqual(Array.from(probe.subarray(25)), Array.from(probe.subarray(0, 25)));
  assert.deepEqual(Array.from(inductionProbe(50257, 1024)), Array.from(probe), 'deterministic');
  assert.notDeepEqual(Array.from(inductionProbe(50257, 1024, { seed: 2 })), Array.from(probe));
  assert.ok(probe.every((id) => id >= 0 && id < 50257));
  assert.ok(new Set(probe).size > 20, 'random, not constant');
  const short = inductionProbe(64, 16);
  assert.equal(short.length, 16);
  assert.ok(short.every((id) => id >= 0 && id < 64));
});

test('the core measures induction and previous-token scores on the probe; sortHeads orders them', async () => {
  const { weights, config } = gpt2Golden('bare-f32');
  const gpt = await lens.loadCheckpoint({ weights, config });
  try {
    const ids = inductionProbe(config.vocab_size, config.n_positions);
    const scores = gpt.headScores({ ids, n: ids.length });
    assert.equal(scores.length, config.n_layer * config.n_head);
    for (const s of scores) {
      assert.ok(s.induction >= 0 && s.induction <= 1);
      assert.ok(s.previousToken >= 0 && s.previousToken <= 1);
    }
    const sorted = sortHeads(scores, 'induction');
    for (let i = 1; i < sorted.length; ++i) assert.ok(sorted[i].induction <= sorted[i - 1].induction);
    assert.equal(sortHeads(scores, 'previousToken')[0].previousToken, Math.max(...scores.map((s) => s.previousToken)));
  } finally {
    gpt.dispose();
  }
  const withNull = sortHeads([{ layer: 0, head: 0, induction: null }, { layer: 0, head: 1, induction: 0.1 }], 'induction');
  assert.deepEqual(withNull.map((s) => s.head), [1, 0]);
});

test('GPT-2 vocab entries as text: Ġ is a space, bytes of a character join', () => {
  const { vocab } = gpt2Tokenizer();
  const texts = idTexts(vocab);
  assert.equal(texts.length, 50257);
  assert.equal(texts[995], ' world');
  assert.equal(texts[15496], 'Hello');
  assert.equal(texts[198], '\n');
  assert.equal(vocabEntryText('Ã©'), 'é');
  assert.equal(vocabEntryText('Ã'), '<0xC3>', 'half a character shows its byte');
  assert.equal(texts[127], '<0xC3>');
  assert.equal(idTexts({ a: 0 }, [{ id: 1, content: '<|endoftext|>' }])[1], '<|endoftext|>');
});

test('fileRole names each checkpoint file; anything else is refused', () => {
  assert.deepEqual(['model.safetensors', 'config.json', 'tokenizer.json', 'vocab.json', 'merges.txt', 'model.bin', 'x.onnx']
    .map(fileRole), ['weights', 'config', 'tokenizer', 'vocab', 'merges', null, null]);
});

test('percent: one decimal, two significant digits for small probabilities', () => {
  assert.deepEqual([0.123, 1, 0.001, 0.0000199, 1.234e-9, 0].map(percent), ['12.3%', '100.0%', '0.1%', '0.002%', '1.2e-7%', '0.0%']);
});

test('tab=model is a tab of the URL', async () => {
  const { DEFAULTS, hashToState, makeSchema, stateToHash } = await import('../../web/shared/state.js');
  const schema = makeSchema(lens.catalog);
  assert.equal(stateToHash({ ...DEFAULTS, tab: 'model' }, schema), '#tab=model');
  assert.deepEqual(hashToState('#tab=model', schema).ignored, []);
  assert.equal(hashToState('#tab=model', schema).state.tab, 'model');
});
