// The page's model session (web/shared/model-session/session-model.js) in node, over the API: a
// checkpoint dropped as files loads (config and tokenizer handed over as their text), the typed
// text's run equals the API's forward and next tokens, and a run with heads knocked out runs two
// forwards — the knocked-out model's (attention, next tokens) and the whole model's (its next
// tokens beside) — whose numbers equal the API's own calls; knocking heads out runs the text again.
// A .gguf file loads with no config (its metadata holds it and the tokenizer): its run equals the
// API's forward on the same bytes, and a config given with it or a broken .gguf is refused.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

import { COMPARE, SessionModel, TOP } from '../../web/shared/model-session/session-model.js';
import { gpt2SizedCheckpoint, gpt2Tokenizer, llamaGolden } from './checkpoint-support.mjs';
import { DATA_DIR, loadLens } from './support.mjs';
import { llamaQ8WithTokenizer } from './gguf-support.mjs';

const lens = await loadLens();

const file = (contents, name) => new File([contents], name);

/** A session, its posted updates, and the loaded model's forward calls counted. */
async function sessionWith(load) {
  const updates = [];
  const session = new SessionModel(lens, (update) => updates.push(update));
  const loaded = await load(session);
  const model = session.model;
  const forwards = [];
  const forward = model.forward.bind(model);
  model.forward = (ids, options) => {
    forwards.push(options);
    return forward(ids, options);
  };
  return { session, updates, loaded, model, forwards };
}

test('files load through the session as their text: config.json and tokenizer files; progress is posted', async () => {
  const { weights, config } = gpt2SizedCheckpoint({ vocab: 50257 });
  const { vocab, merges } = gpt2Tokenizer();
  const { session, updates, loaded, model } = await sessionWith((s) => s.load({ weights: file(weights, 'model.safetensors'),
    config: file(JSON.stringify(config), 'config.json'), vocab: file(JSON.stringify(vocab), 'vocab.json'), merges: file(merges, 'merges.txt') }));
  try {
    assert.equal(loaded.source, 'files');
    assert.equal(loaded.family, 'gpt2');
    assert.equal(loaded.tokenizer, true);
    assert.ok(updates.length > 0 && updates.every((u) => u.progress >= 0 && u.progress <= 1), 'progress posted');
    assert.deepEqual(model.tokenize('Hello world').ids, (await lens.loadCheckpoint({ weights, config, tokenizer: { vocab, merges } })).tokenize('Hello world').ids);
    await assert.rejects(session.load({ weights: file(weights, 'model.safetensors'), config: file('{"n_layer": ', 'config.json') }),
      /config\.json is not valid JSON/);
    assert.equal(session.model, model, 'a refused load keeps the model');
    await assert.rejects(session.load({ weights: file(weights, 'w'), config: file('{}', 'c'), vocab: file('{}', 'v') }),
      /needs both vocab\.json and merges\.txt/);
  } finally {
    model.dispose();
  }
});

test('a keystroke runs one forward; with heads knocked out two, and their numbers are the API\'s', async () => {
  const { weights, config } = llamaGolden('qwen2-f32');
  const tokenizer = { model: { type: 'BPE', vocab: Object.fromEntries(Array.from({ length: 72 }, (_, i) => [i < 26 ? String.fromCharCode(97 + i) : `<${i}>`, i])),
    merges: [] }, pre_tokenizer: null };
  const { session, model, forwards } = await sessionWith((s) => s.load({ weights: file(weights, 'model.safetensors'),
    config: file(JSON.stringify(config), 'config.json'), tokenizer: file(JSON.stringify(tokenizer), 'tokenizer.json') }));
  try {
    const text = 'abcdefghij';
    const ids = model.tokenize(text).ids;
    const plain = session.run({ text });
    assert.equal(forwards.length, 1, 'no heads knocked out: one forward');
    assert.equal(plain.forwards, 1);
    const api = model.forward(ids, { logits: 'last', next: TOP });
    assert.deepEqual(plain.attention, api.attention);
    assert.deepEqual(plain.top.map((t) => [t.id, t.probability]), api.next.map((t) => [t.id, t.probability]));
    assert.equal(plain.compare, null);

    forwards.length = 0;
    const heads = [{ layer: 1, head: 0 }, { layer: 0, head: 3 }];
    const knocked = session.ablate({ heads, text });
    assert.equal(forwards.length, 2, 'heads knocked out: two forwards (the knocked-out model, the whole model beside)');
    assert.equal(knocked.forwards, 2);
    const k = Math.min(COMPARE, config.vocab_size);
    forwards.length = 0;
    const after = model.forward(ids, { logits: 'last', next: k });
    const before = model.forward(ids, { logits: 'last', next: k, ablate: [] });
    assert.deepEqual(knocked.attention, after.attention, 'the knocked-out model\'s attention');
    assert.deepEqual(knocked.top.map((t) => t.id), after.next.slice(0, TOP).map((t) => t.id));
    for (const row of knocked.compare) {
      assert.equal(row.before, before.next.find((t) => t.id === row.id)?.probability ?? null, `token ${row.id} before`);
      assert.equal(row.after, after.next.find((t) => t.id === row.id)?.probability ?? null, `token ${row.id} after`);
    }
    assert.ok(knocked.compare.some((row) => row.before !== row.after), 'knocking heads out moves some token');
    assert.equal(knocked.compareFloor, before.next[before.next.length - 1].probability);

    forwards.length = 0;
    session.run({ text: 'abcdefghijk' });
    assert.equal(forwards.length, 2, 'the next keystroke with heads still knocked out: two forwards again');
    forwards.length = 0;
    const restored = session.ablate({ heads: [], text });
    assert.equal(forwards.length, 1);
    assert.deepEqual(restored.attention, plain.attention, 'restored bit for bit');
  } finally {
    model.dispose();
  }
});

test('a .gguf file loads with no config: its weights\' formats, none dequantized at load (Q8_0 kept as stored), and a run equal to the API\'s forward', async () => {
  const bytes = llamaQ8WithTokenizer();
  const { session, loaded, model, forwards } = await sessionWith((s) => s.load({ weights: file(bytes, 'tiny-Q8_0.gguf'), gguf: true }));
  const api = await lens.loadCheckpoint({ weights: bytes });
  try {
    assert.equal(loaded.source, 'files');
    assert.equal(loaded.container, 'GGUF');
    assert.equal(loaded.fileName, 'tiny-Q8_0.gguf');
    assert.equal(loaded.fileBytes, bytes.length);
    assert.equal(loaded.family, 'llama');
    assert.equal(loaded.tokenizer, true, 'the tokenizer from the metadata');
    assert.deepEqual(loaded.config, { ...api.config });
    assert.deepEqual(loaded.weights, { formats: { ...api.weights.formats }, bytes: api.weights.bytes });
    assert.deepEqual(loaded.weights.formats, { Q8_0: 16, F32: 5 });
    // The core keeps Q8_0 as stored (its parameterBytes lists it): nothing is dequantized at load.
    assert.deepEqual(loaded.dequantized, Object.keys(api.weights.formats).filter((t) => lens.catalog.parameterBytes[t] === undefined));
    assert.deepEqual(loaded.dequantized, []);
    const text = 'When Mary and John went to the store, John gave a drink to';
    const run = session.run({ text });
    assert.equal(forwards.length, 1);
    const ids = api.tokenize(text).ids;
    assert.deepEqual(run.ids, Array.from(ids));
    const want = api.forward(ids, { logits: 'last', next: TOP });
    assert.equal(run.attention.length, api.config.layers);
    run.attention.forEach((layer, l) => assert.deepEqual(Array.from(layer), Array.from(want.attention[l]), `layer ${l}'s attention, bit for bit`));
    assert.deepEqual(run.top.map((t) => [t.id, t.probability]), want.next.map((t) => [t.id, t.probability]));
    assert.ok(run.top.every((t) => typeof t.token === 'string' && !t.token.startsWith('#')), 'the next tokens\' text from the GGUF tokenizer');

    // A config.json with a .gguf: the API refuses it by name; a truncated .gguf: the core's message. The model stays.
    await assert.rejects(session.load({ weights: file(bytes, 'tiny-Q8_0.gguf'), config: file('{}', 'config.json'), gguf: true }),
      /this is a GGUF file, whose metadata holds its config: give loadCheckpoint no config/);
    await assert.rejects(session.load({ weights: file(readFileSync(`${DATA_DIR}malformed-gguf/truncated.gguf`), 'truncated.gguf'), gguf: true }),
      /runs past the end of the data section/);
    await assert.rejects(session.load({ weights: file(bytes, 'tiny.gguf') }), /choose model\.safetensors and config\.json, or one \.gguf file/);
    assert.equal(session.model, model, 'a refused load keeps the model');
    assert.deepEqual(session.run({ text }).attention.map((a) => Array.from(a)), run.attention.map((a) => Array.from(a)));
  } finally {
    model.dispose();
    api.dispose();
  }
});
