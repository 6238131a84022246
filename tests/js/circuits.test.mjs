// The Circuits view's DOM-free parts in node: the model session's circuit calls
// (web/shared/model-session/session-circuits.js through session-model.js) on the shipped english
// model and a checkpoint with GPT-2's vocabulary — the induction preset read back token for token,
// answers as one token or refused by name, the analyses equal to the API's own calls, the word presets
// spelt by a tokenizer (presets.js presetRefused: why one cannot run) — and the
// view's matrices (web/shared/circuit-matrices.js): each result laid out as drawn, the attribution's
// parts complete and sorted, the export's JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { attributionParts, lensCell, positionLabels, resultJson, resultMatrix } from '../../web/shared/circuit-matrices.js';
import { FACTUAL, IOI, presetRefused, WORD_PRESETS } from '../../web/views/circuits/presets.js';
import { gpt2SizedCheckpoint, gpt2Tokenizer } from './checkpoint-support.mjs';
import { llamaQ8WithTokenizer } from './gguf-support.mjs';
import { loadLens } from './support.mjs';

const lens = await loadLens();
const file = (contents, name) => new File([contents], name);

test('the induction preset on the english model: repeated random tokens read back, answers one token each; the analyses are the API\'s', async () => {
  const session = new SessionModel(lens, () => {});
  await session.trained({ name: 'english' });
  const m = session.model;
  try {
    const preset = session.circuitInduction({ seed: 1 });
    assert.deepEqual(session.circuitInduction({ seed: 1 }), preset, 'seeded');
    const read = (text) => Array.from(m.tokenize(text, { unknown: 'map' }).ids);
    const clean = read(preset.clean);
    const corrupted = read(preset.corrupted);
    assert.equal(clean.length, 15);
    assert.deepEqual(clean.slice(8), clean.slice(0, 7), 'the first 7 tokens again');
    assert.deepEqual(corrupted.slice(0, 8), clean.slice(0, 8), 'the same first half');
    assert.ok(corrupted.slice(8).every((id) => !clean.slice(0, 8).includes(id)), 'other tokens in the corrupted second half');
    const [a, b] = session.circuitAnswers({ answers: preset.answers });
    assert.deepEqual([a.id, b.id], [read(preset.answers[0])[0], read(preset.answers[1])[0]]);
    assert.equal(a.id, clean[7], 'a: the token that came next the first time');
    assert.deepEqual(session.circuitAnswers({ answers: ['xy', ''] }), [
      { error: '“xy” is 2 tokens for this model (“x” “y”): an answer must be one token' }, { error: 'type an answer token' }]);

    const prompts = session.circuitPrompts({ clean: preset.clean, corrupted: preset.corrupted });
    assert.deepEqual(prompts.clean.ids, clean);
    const next = m.forward(Int32Array.from(clean), { n: clean.length, logits: 'last', next: 1 }).next[0];
    assert.deepEqual([prompts.clean.next.id, prompts.clean.next.probability], [next.id, next.probability]);

    const ids = Int32Array.from(clean);
    const lensResult = session.circuit({ kind: 'lens', text: preset.clean, token: a.id });
    const want = m.logitLens(ids, { topK: 5, token: a.id });
    assert.deepEqual([lensResult.ids, lensResult.probs, lensResult.token.ranks], [want.ids, want.probs, want.token.ranks]);
    assert.deepEqual(lensResult.texts.slice(0, 5), Array.from(want.ids.slice(0, 5), (id) => m.vocabulary[id]));
    assert.deepEqual(session.circuit({ kind: 'rollout', text: preset.clean }).rollout, m.rollout(ids));
    const parts = session.circuit({ kind: 'attribution', text: preset.clean, answers: [a.id, b.id] });
    const d = m.attribute(ids, { answers: [a.id, b.id] });
    assert.deepEqual([parts.heads, parts.mlp, parts.total], [d.heads, d.mlp, d.total]);
    for (const over of ['heads', 'residual', 'layers']) {
      const p = session.circuit({ kind: over, clean: preset.clean, corrupted: preset.corrupted, answers: [a.id, b.id] });
      assert.deepEqual(p.effect, m.patch({ clean: ids, corrupted: Int32Array.from(corrupted), answers: [a.id, b.id], over }).effect, over);
    }
    assert.throws(() => session.circuit({ kind: 'heads', clean: 'abc', corrupted: 'abcd', answers: [a.id, b.id] }),
      /clean has 3 tokens, corrupted has 4/);
    const head = session.circuit({ kind: 'head', text: preset.clean, layer: 1, head: 2 });
    const n = clean.length;
    assert.deepEqual(head.weights, m.forward(ids, { n }).attention[1].slice(2 * n * n, 3 * n * n));
    // The layer for the walkthrough on the clean prompt (not the last typed run).
    assert.deepEqual(session.layer({ layer: 0, text: preset.clean }).ids, clean);
  } finally {
    m.dispose();
  }
});

test('with GPT-2\'s vocabulary: " Mary" and " John" are one token each, a longer name is refused, induction draws word tokens', async () => {
  const { weights, config } = gpt2SizedCheckpoint({ layers: 2, heads: 2, d: 8, vocab: 50257, context: 32 });
  const { vocab, merges } = gpt2Tokenizer();
  const session = new SessionModel(lens, () => {});
  await session.load({ weights: file(weights, 'model.safetensors'), config: file(JSON.stringify(config), 'config.json'),
    vocab: file(JSON.stringify(vocab), 'vocab.json'), merges: file(merges, 'merges.txt') });
  const m = session.model;
  try {
    const [mary, john, long] = session.circuitAnswers({ answers: [' Mary', ' John', ' Maryjohnston'] });
    assert.deepEqual([mary.id, john.id], [vocab['ĠMary'], vocab['ĠJohn']]);
    assert.match(long.error, /^“ Maryjohnston” is \d tokens for this model \(.*\): an answer must be one token$/);
    const preset = session.circuitInduction({ seed: 3 });
    const clean = Array.from(m.tokenize(preset.clean).ids);
    assert.equal(clean.length, 15);
    assert.ok(m.tokenTexts(clean).every((t) => /^ [A-Za-z]{2,10}$/.test(t)), 'space-led words');
    assert.deepEqual(clean.slice(8), clean.slice(0, 7));
  } finally {
    m.dispose();
  }
});

test('the word presets spelt by the tokenizer: GPT-2\'s runs both; the ASCII GGUF\'s cannot, and says what fails', async () => {
  const presets = Object.fromEntries(Object.entries(WORD_PRESETS).map(([name, { clean, corrupted, answers }]) => [name, { clean, corrupted, answers }]));
  const refusals = (session) => {
    const spelled = session.circuitPresetFit({ presets });
    return Object.fromEntries(Object.entries(WORD_PRESETS).map(([name, p]) => [name, presetRefused(p.title, spelled[name])]));
  };
  const { weights, config } = gpt2SizedCheckpoint({ layers: 2, heads: 2, d: 8, vocab: 50257, context: 32 });
  const { vocab, merges } = gpt2Tokenizer();
  const gpt2 = new SessionModel(lens, () => {});
  await gpt2.load({ weights: file(weights, 'model.safetensors'), config: file(JSON.stringify(config), 'config.json'),
    vocab: file(JSON.stringify(vocab), 'vocab.json'), merges: file(merges, 'merges.txt') });
  try {
    assert.deepEqual(refusals(gpt2), { ioi: null, factual: null });
    // The same facts as the prompts and answers read for the view: equal lengths, one token each.
    const spelled = gpt2.circuitPresetFit({ presets }).ioi;
    assert.equal(spelled.clean.n, gpt2.circuitPrompts({ clean: IOI.clean, corrupted: IOI.corrupted }).corrupted.n);
    assert.deepEqual(spelled.answers, gpt2.circuitAnswers({ answers: IOI.answers }));
  } finally {
    gpt2.model.dispose();
  }
  const ascii = new SessionModel(lens, () => {});
  await ascii.load({ weights: file(llamaQ8WithTokenizer(), 'tiny-Q8_0.gguf'), gguf: true });
  try {
    const why = refusals(ascii);
    assert.equal(why.ioi, 'The IOI preset cannot run on this model: this tokenizer spells “ Mary” as 5 tokens (␣ M a r y) and ' +
      '“ John” as 5 (␣ J o h n), and an answer must be one token. It needs a vocabulary like GPT-2\'s.');
    const prompts = ascii.circuitPrompts({ clean: FACTUAL.clean, corrupted: FACTUAL.corrupted });
    assert.ok(why.factual.startsWith(`The factual-recall preset cannot run on this model: its prompts are ${prompts.clean.n} and ` +
      `${prompts.corrupted.n} tokens here, and patching needs the same length; this tokenizer spells “ Paris” as 6 tokens`), why.factual);
    assert.match(ascii.circuitAnswers({ answers: [' Mary'] })[0].error, /^“ Mary” is 5 tokens for this model/, 'what the view would say on running it');
  } finally {
    ascii.model.dispose();
  }
});

test('the drawn matrices: each analysis laid out as the API returned it, labelled; attribution parts complete and sorted; export JSON', () => {
  const config = { layers: 2, heads: 3 };
  const tokens = ['the', ' cat', 'the'];
  assert.deepEqual(positionLabels(tokens), ['the', ' cat', 'the·2']);
  const heads = resultMatrix({ kind: 'heads', effect: Float32Array.of(1, 2, 3, 4, 5, 6), clean: 2, corrupted: 1 }, config);
  assert.deepEqual([heads.rows, heads.cols, heads.rowLabels, heads.colLabels, heads.scale], [2, 3, ['L1', 'L2'], ['H1', 'H2', 'H3'], 'diverging']);
  const residual = resultMatrix({ kind: 'residual', n: 3, tokens, effect: Float32Array.of(1, 2, 3, 4, 5, 6) }, config);
  assert.deepEqual([residual.rows, residual.cols, residual.colLabels], [2, 3, ['the', ' cat', 'the·2']]);
  const layers = resultMatrix({ kind: 'layers', effect: { attention: Float32Array.of(0.1, 0.2), mlp: Float32Array.of(0.3, 0.4) } }, config);
  assert.deepEqual(Array.from(layers.data), Array.from(Float32Array.of(0.1, 0.2, 0.3, 0.4)));
  const attribution = { kind: 'attribution', heads: Float32Array.of(1, -2, 3, 4, 5, -6), attentionBias: Float32Array.of(0.5, -0.25),
    mlp: Float32Array.of(7, -8), embed: 0.125, constant: -9, total: 1 };
  const a = resultMatrix(attribution, config);
  assert.deepEqual(Array.from(a.data), [1, -2, 3, 0.5, 7, 4, 5, -6, -0.25, -8]);
  assert.deepEqual(a.colLabels, ['H1', 'H2', 'H3', 'bias', 'MLP']);
  const parts = attributionParts(attribution, config);
  assert.equal(parts.length, 2 + 2 * (3 + 2));
  assert.deepEqual(parts.slice(0, 3).map((p) => [p.name, p.value]), [['constant (biases)', -9], ['L2 MLP', -8], ['L1 MLP', 7]]);
  const lensResult = { kind: 'lens', rows: 3, n: 2, topK: 2, tokens: ['a', ' '], ids: Int32Array.from({ length: 12 }, (_, i) => i),
    probs: Float32Array.from({ length: 12 }, (_, i) => i / 100), texts: Array.from({ length: 12 }, (_, i) => (i === 2 ? ' ' : `t${i}`)),
    token: { id: 5, probs: Float32Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), ranks: Int32Array.of(0, 1, 2, 3, 4, 5) }, tokenText: 't5' };
  const l = resultMatrix(lensResult, config);
  assert.deepEqual(Array.from(l.data), Array.from(Float32Array.of(0, 0.02, 0.04, 0.06, 0.08, 0.1)));
  assert.deepEqual(l.cellLabels, ['t0', '␣', 't4', 't6', 't8', 't10']);
  assert.deepEqual(l.rowLabels, ['embed', 'after L1', 'after L2']);
  assert.deepEqual(lensCell(lensResult, 1, 1).token, { text: 't5', rank: 3, probability: Float32Array.of(0.4)[0] });
  const rollout = { kind: 'rollout', n: 2, layers: 2, tokens: ['a', 'b'], rollout: Float32Array.of(1, 0, 0.5, 0.5, 1, 0, 0.25, 0.75) };
  assert.deepEqual(Array.from(resultMatrix(rollout, config, 1).data), [1, 0, 0.25, 0.75]);
  assert.deepEqual(Array.from(resultMatrix(rollout, config, 7).data), [1, 0, 0.25, 0.75], 'a layer past the last: the last');
  const json = resultJson(attribution, a, { model: 'm', clean: 'x', corrupted: 'y', answers: [{ text: 'a', id: 1 }, { text: 'b', id: 2 }] });
  assert.deepEqual(json.data, [[1, -2, 3, 0.5, 7], [4, 5, -6, -0.25, -8]]);
  assert.deepEqual([json.total, json.embed, json.constant, json.analysis], [1, 0.125, -9, 'attribution']);
  assert.throws(() => resultMatrix({ kind: '<b>' }, config), /unknown analysis '<b>'/);
});
