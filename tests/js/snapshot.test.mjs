// Snapshots (web/api/snapshot.js): the Your model view's run of a GPT-2-small-shaped model (12
// layers × 12 heads, 32 tokens, random weights written here) and the Circuits view's analyses
// written by the model session (SessionModel, as the page's worker runs it) and read back: the
// attention within the stated 8-bit bound of the API's float32 weights, every other number exact,
// the size under 150 KB; and every kind of hostile snapshot refused with a message naming what is
// wrong. Prints the measured size and error (node --test tests/js/snapshot.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { makeCircuitsSnapshot, makeModelSnapshot, QUANTISATION_BOUND, quantiseRows, readSnapshot, scriptSafeJson, sha256Hex,
  snapshotProvenance, SnapshotError, SNAPSHOT_LIMITS, toBase64 } from '../../web/api/snapshot.js';
import { assertThrowsMessage, loadLens, writeSafetensors } from './support.mjs';
import { gpt2Config, gpt2Tensors, gpt2Tokenizer } from './checkpoint-support.mjs';

const lens = await loadLens();

const SIZES = { layers: 12, heads: 12, d: 96, vocab: 512, context: 32 };
const TEXT = 'When Mary and John went to the store, John gave a drink to her because she was thirsty after the long walk home.';

/** A GPT-2-small-shaped checkpoint (12 × 12 heads) with random weights; q/k scaled up so heads attend sharply, as trained ones do. */
function gpt2Shaped() {
  const tensors = gpt2Tensors(SIZES);
  for (let l = 0; l < SIZES.layers; ++l) tensors[`h.${l}.attn.c_attn.weight`].data = tensors[`h.${l}.attn.c_attn.weight`].data.map((v) => v * 40);
  const { vocab, merges } = gpt2Tokenizer();
  const file = (value) => ({ text: async () => (typeof value === 'string' ? value : JSON.stringify(value)) });
  const weights = writeSafetensors(tensors);
  return { weights, config: file(gpt2Config(SIZES)),
    vocab: file(Object.fromEntries(Object.entries(vocab).filter(([, id]) => id < SIZES.vocab))),
    merges: file(merges.split('\n').slice(0, 1 + SIZES.vocab - 256).join('\n')) };
}

const files = gpt2Shaped();
const updates = [];
const session = new SessionModel(lens, (update) => updates.push(update));
const loaded = await session.load(files);
const model = { ...loaded, fileName: 'model.safetensors' };

const maxAbsDiff = (a, b) => {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
};

async function provenanceOf(settings = {}) {
  return snapshotProvenance(model, { files: [{ name: 'model.safetensors', bytes: files.weights.length, sha256: await sha256Hex(files.weights) }],
    text: TEXT, settings, version: '0.1.0', date: new Date('2026-01-02T03:04:05Z') });
}

test('every head of a GPT-2-small-shaped model at 32 tokens: within ±1/510 of the API, under 150 KB', async () => {
  const run = session.run({ text: TEXT });
  assert.equal(run.n, 32);
  assert.equal(run.attention.length, 12);
  const snapshot = makeModelSnapshot({ run, config: loaded.config, provenance: await provenanceOf({ layer: 3, head: 5 }), view: { layer: 3, head: 5 } });
  const json = scriptSafeJson(snapshot);
  const read = readSnapshot(json);
  let worst = 0;
  for (let l = 0; l < 12; ++l) worst = Math.max(worst, maxAbsDiff(read.attention.get(l), run.attention[l]));
  console.log(`# snapshot of 12 × 12 heads at 32 tokens: ${json.length} bytes (${(json.length / 1024).toFixed(1)} KiB); ` +
    `max |error| ${worst.toExponential(3)} (bound read from its scales ${read.bound.toExponential(3)}, format bound ${QUANTISATION_BOUND.toExponential(3)})`);
  assert.ok(json.length <= 150 * 1024, `${json.length} bytes`);
  assert.ok(worst <= read.bound * (1 + 1e-6) + 1e-7, `${worst} > ${read.bound}`);
  assert.ok(read.bound <= QUANTISATION_BOUND * (1 + 1e-6));
  assert.ok(worst > 0, 'quantisation changes some weight (the test can fail)');
  // Masked (upper-triangle) cells stay exactly zero; tokens, ids and next tokens are the run's.
  assert.equal(read.attention.get(0)[1], 0);
  assert.deepEqual(read.tokens, run.tokens);
  assert.deepEqual(read.ids, run.ids);
  assert.deepEqual(read.next.map((t) => [t.id, t.token, t.probability]), run.top.map((t) => [t.id, t.token, t.probability]));
  assert.deepEqual(read.view, { layer: 3, head: 5 });
  assert.equal(read.provenance.model.files[0].sha256.length, 64);
  assert.equal(read.provenance.version, '0.1.0');
  assert.equal(read.provenance.settings.head, 5);
});

test('m.snapshot: the API writes the same kind of snapshot from a loaded checkpoint (text or ids, chosen layers, provenance), and names bad options', async () => {
  const m = await lens.loadCheckpoint({ weights: files.weights, config: await files.config.text(),
    tokenizer: { vocab: await files.vocab.text(), merges: await files.merges.text() } });
  const { ids, tokens } = m.tokenize(TEXT.slice(0, 60));
  const forward = m.forward(ids, { n: ids.length, logits: 'last', next: 5 });
  const shot = m.snapshot({ text: TEXT.slice(0, 60), layers: [2, 7], layer: 7, head: 4, top: 5,
    source: { source: 'hub', id: 'org/gpt2-shaped', revision: 'abc123' }, settings: { note: 'two layers' } });
  const read = readSnapshot(JSON.stringify(shot));
  assert.deepEqual(read.tokens, tokens);
  assert.deepEqual(read.ids, Array.from(ids));
  assert.deepEqual([...read.attention.keys()], [2, 7]);
  for (const l of [2, 7]) assert.ok(maxAbsDiff(read.attention.get(l), forward.attention[l]) <= read.bound * (1 + 1e-6) + 1e-7, `layer ${l}`);
  assert.deepEqual(read.next.map((t) => [t.id, t.probability]), forward.next.map((t) => [t.id, t.probability]));
  assert.deepEqual(read.view, { layer: 7, head: 4 });
  assert.deepEqual([read.provenance.model.source, read.provenance.model.id, read.provenance.model.revision], ['hub', 'org/gpt2-shaped', 'abc123']);
  assert.equal(read.provenance.family, 'gpt2');
  assert.equal(read.provenance.text, TEXT.slice(0, 60));
  assert.equal(read.provenance.settings.note, 'two layers');
  assert.equal(read.provenance.version, JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../../package.json', import.meta.url), 'utf8')).version);
  // by ids, every layer by default
  const byIds = readSnapshot(m.snapshot({ ids }));
  assert.equal(byIds.attention.size, 12);
  assert.deepEqual(byIds.tokens, m.tokenTexts(ids));
  assertThrowsMessage(() => m.snapshot({}), /snapshot needs ids \(or text/);
  assertThrowsMessage(() => m.snapshot({ ids, text: 'a' }), /ids or text, not both/);
  assertThrowsMessage(() => m.snapshot({ ids, layers: [12] }), /layers\[0\]/);
  assertThrowsMessage(() => m.snapshot({ ids, layers: [1], layer: 2 }), /layer 2 is not one of its layers \(1\)/);
  assertThrowsMessage(() => m.snapshot({ ids, source: { source: 'ftp' } }), /source must be \{ source: 'hub' \| 'files' \| 'shipped'/);
  assertThrowsMessage(() => m.snapshot({ ids, colour: 'red' }), /unknown snapshot options key 'colour'|colour/);
  // still working after the refusals
  assert.equal(readSnapshot(m.snapshot({ ids: ids.subarray(0, 3) })).tokens.length, 3);
  m.dispose();
});

test('knocked-out heads and a generation round-trip: before → after exact, generated rows within the bound', async () => {
  const run = session.ablate({ heads: [{ layer: 0, head: 1 }, { layer: 9, head: 3 }], text: TEXT });
  updates.length = 0;
  session.generate({ text: TEXT.slice(0, 40), prefix: [], maxTokens: 4, temperature: 0, topK: 0, topP: 1, seed: 1, gen: 7 });
  const steps = updates.filter((u) => u.gen === 7).map((u) => u.step);
  assert.equal(steps.length, 4);
  const short = session.run({ text: TEXT.slice(0, 40) });
  const snapshot = makeModelSnapshot({ run: { ...short, compare: run.compare, compareFloor: run.compareFloor, ablated: run.ablated },
    config: loaded.config, provenance: await provenanceOf(), generation: { steps } });
  const read = readSnapshot(JSON.stringify(snapshot));
  assert.deepEqual(read.knockedOut, [{ layer: 0, head: 1 }, { layer: 9, head: 3 }]);
  assert.deepEqual(read.compare.tokens.map((t) => [t.id, t.before, t.after]), run.compare.map((t) => [t.id, t.before, t.after]));
  assert.equal(read.generation.length, 4);
  read.generation.forEach((s, k) => {
    assert.equal(s.id, steps[k].id);
    assert.equal(s.probability, steps[k].probability);
    for (let l = 0; l < 12; ++l) assert.ok(maxAbsDiff(s.attention[l], steps[k].attention[l]) <= read.bound + 1e-7);
  });
  session.ablate({ heads: [], text: TEXT });
});

test('a patching result and every other analysis round-trip: numbers exact, rollout within the bound', async () => {
  const { clean, corrupted } = session.circuitPrompts({ clean: 'the cat sat on the mat', corrupted: 'the cat sat on the hat' });
  assert.equal(clean.n, corrupted.n);
  const answers = session.circuitAnswers({ answers: [' a', ' t'] });
  assert.ok(answers.every((a) => !a.error), JSON.stringify(answers));
  const context = { clean: clean.text, corrupted: corrupted.text, answers, layer: 4 };
  for (const kind of ['heads', 'residual', 'layers', 'attribution', 'lens', 'rollout']) {
    const result = session.circuit({ kind, text: clean.text, clean: clean.text, corrupted: corrupted.text, answers: answers.map((a) => a.id), token: answers[0].id });
    const json = scriptSafeJson(makeCircuitsSnapshot({ result, config: loaded.config, context, provenance: await provenanceOf() }));
    const read = readSnapshot(json);
    assert.equal(read.analysis, kind);
    assert.deepEqual(read.answers, answers.map(({ id, text }) => ({ text, id })));
    const r = read.result;
    console.log(`# circuits snapshot '${kind}': ${json.length} bytes`);
    if (kind === 'heads' || kind === 'residual') {
      assert.deepEqual([r.clean, r.corrupted], [result.clean, result.corrupted]);
      assert.deepEqual(Array.from(r.effect), Array.from(result.effect));
    } else if (kind === 'layers') {
      assert.deepEqual(Array.from(r.effect.attention), Array.from(result.effect.attention));
      assert.deepEqual(Array.from(r.effect.mlp), Array.from(result.effect.mlp));
    } else if (kind === 'attribution') {
      for (const key of ['total', 'embed', 'constant']) assert.equal(r[key], result[key]);
      for (const key of ['heads', 'attentionBias', 'mlp']) assert.deepEqual(Array.from(r[key]), Array.from(result[key]));
    } else if (kind === 'lens') {
      assert.deepEqual(Array.from(r.ids), Array.from(result.ids));
      assert.deepEqual(Array.from(r.probs), Array.from(result.probs));
      assert.deepEqual(r.texts, result.texts);
      assert.deepEqual(Array.from(r.token.ranks), Array.from(result.token.ranks));
      assert.equal(r.tokenText, result.tokenText);
    } else {
      assert.ok(maxAbsDiff(r.rollout, result.rollout) <= read.bound + 1e-7);
      assert.equal(read.view.layer, 4);
    }
  }
});

test('the script-safe JSON holds no <, > or & and reads back the same tokens', () => {
  const hostile = ['</script><script>alert(1)</script>', '<!--', '& \u2028 \u2029 >'];
  const row = Float32Array.from([1]);
  const doc = { format: 'attention-lens-snapshot', version: 1, kind: 'model', model: { layers: 1, heads: 1 }, tokens: hostile.slice(0, 1),
    attention: { layers: [0], causal: true, ...quantiseRows([row]) }, next: hostile.map((text, id) => ({ id, text, probability: 0.1 })) };
  const json = scriptSafeJson(doc);
  assert.doesNotMatch(json, /[<>&\u2028\u2029]/);
  const read = readSnapshot(json);
  assert.deepEqual(read.tokens, hostile.slice(0, 1));
  assert.deepEqual(read.next.map((t) => t.token), hostile);
});

// ---- hostile snapshots ----------------------------------------------------------------------

/** A small valid snapshot (2 layers × 2 heads, 3 tokens) to break one thing at a time. */
function small() {
  const matrices = [];
  for (let m = 0; m < 4; ++m) matrices.push(Float32Array.from([1, 0.5, 0.5, 0.2, 0.3, 0.5]).subarray(0, 6));
  const rows = [];
  for (let m = 0; m < 4; ++m) rows.push(Float32Array.from([1]), Float32Array.from([0.5, 0.5]), Float32Array.from([0.2, 0.3, 0.5]));
  return { format: 'attention-lens-snapshot', version: 1, kind: 'model', model: { layers: 2, heads: 2 }, tokens: ['a', 'b', 'c'],
    attention: { layers: [0, 1], causal: true, ...quantiseRows(rows) }, next: [{ id: 3, text: 'd', probability: 0.5 }], provenance: {} };
}

const refused = (doc, pattern, what) => assert.throws(() => readSnapshot(typeof doc === 'string' ? doc : JSON.stringify(doc)),
  (error) => error instanceof SnapshotError && pattern.test(error.message), what);

test('the small snapshot reads', () => {
  const read = readSnapshot(JSON.stringify(small()));
  // Layer 2, head 2: the rows as stored (within 1/510), zero above the diagonal.
  assert.deepEqual(Array.from(read.attention.get(1).subarray(9, 18)).map((v) => +v.toFixed(2)), [1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
});

test('hostile snapshots are refused with a message naming the first thing wrong', () => {
  const with_ = (edit) => {
    const doc = small();
    edit(doc);
    return doc;
  };
  refused('{"format":"attention-lens-snapshot","version":1,"kind":"mo', /not valid JSON \(is the file complete\?\)/, 'truncated');
  refused(JSON.stringify(small()).slice(0, 200), /not valid JSON/, 'truncated mid-base64');
  refused('[]', /a JSON object/, 'an array');
  refused(with_((d) => { d.format = 'something-else'; }), /not an Attention Lens snapshot/, 'format');
  refused(with_((d) => { d.version = 2; }), /version 2; this element reads version 1/, 'newer version');
  refused(with_((d) => { d.version = '1'; }), /version is "1"/, 'version as text');
  refused(with_((d) => { d.kind = '<img>'; }), /kind is "<img>"/, 'kind');
  refused(with_((d) => { d.model.heads = 1e9; }), /model.heads is 1000000000/, '10⁹ heads');
  refused(with_((d) => { d.model.layers = 2.5; }), /model.layers is 2.5/, 'fractional layers');
  refused(with_((d) => { d.model.kvHeads = 3; }), /model.kvHeads is 3/, 'kvHeads > heads');
  refused(with_((d) => { d.tokens = Array.from({ length: 600 }, () => 'x'); }), /tokens has 600 entries; at most 512/, 'too many tokens');
  refused(with_((d) => { d.tokens = []; }), /tokens is empty/, 'no tokens');
  refused(with_((d) => { d.tokens[1] = 7; }), /tokens\[1\] must be a string/, 'a number as a token');
  refused(with_((d) => { d.tokens[1] = 'x'.repeat(1000); }), /tokens\[1\] is 1000 characters/, 'a long token');
  refused(with_((d) => { d.tokens.push('d'); }), /attention.scales is \d+ base64 characters; its counts need/, 'a token more than the weights');
  refused(with_((d) => { d.attention.values = d.attention.values.slice(0, -4); }), /attention.values is \d+ base64 characters/, 'short values');
  refused(with_((d) => { d.attention.values = `!${d.attention.values.slice(1)}`; }), /attention.values is not valid base64/, 'bad base64');
  refused(with_((d) => { d.attention.scales = toBase64(Float32Array.from([NaN, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])); }), /attention.scales\[0\] is NaN/, 'NaN scale');
  refused(with_((d) => { d.attention.scales = toBase64(new Float32Array(12)); }), /attention.scales\[0\] is 0: every scale must be a finite number > 0/, 'zero scale');
  refused(with_((d) => { d.attention.scales = toBase64(new Float32Array(12).fill(1)); }), /at most 1\/255/, 'a scale past 1/255');
  refused(with_((d) => { d.attention.layers = [1, 0]; }), /increasing order/, 'layers out of order');
  refused(with_((d) => { d.attention.layers = [0, 5]; }), /attention.layers\[1\] is 5/, 'a layer the model lacks');
  refused(with_((d) => { delete d.attention.causal; }), /attention.causal must be true or false/, 'no layout');
  refused(with_((d) => { d.model = { layers: 128, heads: 128 }; d.attention.layers = Array.from({ length: 128 }, (_, l) => l); d.tokens = Array(300).fill('x'); }),
    /attention claims 128 layers × 128 heads × 300² = \d+ weights; at most 8388608/, 'a claim past the limit');
  refused(with_((d) => { d.next[0].probability = 1.5; }), /next\[0\].probability is 1.5/, 'probability > 1');
  refused(with_((d) => { d.next[0].probability = null; }), /next\[0\].probability is null: it must be a finite number/, 'NaN written as null');
  refused(with_((d) => { d.provenance = { model: { source: 'files', files: [{ name: 'x', bytes: 1, sha256: 'nope' }] } }; }), /sha256 is not 64 hex digits/, 'hash');
  refused(JSON.stringify(small()).padEnd(SNAPSHOT_LIMITS.chars + 1, ' '), /at most 16777216 are read/, 'too long a text');
  // Circuits: the effect's length follows the model's shape; NaN is refused.
  const heads = { format: 'attention-lens-snapshot', version: 1, kind: 'circuits', analysis: 'heads', model: { layers: 2, heads: 2 },
    prompts: { clean: 'a b', corrupted: 'a c' }, answers: [{ text: 'x', id: 1 }, { text: 'y', id: 2 }], result: { clean: 1, corrupted: 0,
      effect: toBase64(Float32Array.from([0.1, 0.2, 0.3, 0.4])) } };
  assert.deepEqual(Array.from(readSnapshot(JSON.stringify(heads)).result.effect).map((v) => +v.toFixed(3)), [0.1, 0.2, 0.3, 0.4]);
  refused({ ...heads, result: { ...heads.result, effect: toBase64(Float32Array.from([0.1, NaN, 0.3, 0.4])) } }, /result.effect\[1\] is NaN/, 'NaN effect');
  refused({ ...heads, result: { ...heads.result, effect: toBase64(Float32Array.from([0.1, 0.3, 0.4])) } }, /result.effect is 16 base64 characters; its counts need 24/, 'short effect');
  refused({ ...heads, analysis: 'magic' }, /analysis is "magic"/, 'unknown analysis');
});
