// The page's shared, DOM-free modules: the store, the catalog and the view model the page and the
// <attention-lens> element both use.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { catalogOf, pageMasks, queryKeySteps, stepEquation, stepInfo } from '../../web/shared/catalog.js';
import { createEngine } from '../../web/shared/engine.js';
import { STAGES, stageById, stageFor } from '../../web/shared/stages.js';
import { DEFAULTS, makeSchema } from '../../web/shared/state.js';
import { createStore } from '../../web/shared/store.js';
import { availableStages, cellWords, pickStage, settingsSummary, stageNeeds, stepsOfStage, walkthroughSteps,
  weightsOnlySteps } from '../../web/shared/view-model.js';
import { loadLens } from './support.mjs';

const lens = await loadLens();
const catalog = catalogOf(lens);

test('the store merges patches, tells its listeners what changed, and stays quiet when nothing did', () => {
  const store = createStore({ a: 1, b: { c: 2 } });
  const seen = [];
  const stop = store.subscribe((now, before) => seen.push([before.a, now.a]));
  store.set({ a: 2 });
  store.set({ a: 2, b: store.get().b }); // the same values: no change
  store.update(({ a }) => ({ a: a + 1 }));
  stop();
  store.set({ a: 10 });
  assert.deepEqual(seen, [[1, 2], [2, 3]]);
  assert.equal(store.get().a, 10);
  assert.ok(Object.isFrozen(store.get()));
  assert.throws(() => { store.get().a = 0; }, TypeError); // modules are strict
});

test('the catalog names every step the stages show and the choices the schema accepts', () => {
  for (const stage of STAGES) for (const id of stage.steps) assert.ok(stepInfo(catalog, id), `${stage.id}: ${id}`);
  assert.deepEqual([...queryKeySteps(catalog)], ['scores', 'scaled', 'capped', 'alibi', 'masked', 'weights']);
  assert.deepEqual(pageMasks(catalog), ['none', 'causal', 'padding', 'sliding-window', 'prefix-lm']);
  const schema = makeSchema(catalog);
  for (const name of catalog.positional) assert.equal(schema.positional.parse(name), name);
  for (const name of catalog.tokenizers) assert.equal(schema.tokenizer.parse(name), name);
  assert.equal(schema.mask.parse('padding'), 'padding');
  assert.equal(schema.mask.parse('future'), undefined);
  // The generic equation of a head is what the core writes for that head of a plain forward.
  const layer = lens.createLayer({ dModel: 6, heads: 3, seed: 1 });
  const traced = layer.forward(new Float32Array(12).fill(0.5), { n: 2, trace: true }).steps;
  layer.dispose();
  const third = traced.find((s) => s.id === 'weights' && s.head === 2);
  assert.equal(stepEquation(stepInfo(catalog, 'weights'), 2), third.equation);
});

test('view model: stages, a stage\'s steps for one head, and the weights-only steps of an untraced result', () => {
  const engine = createEngine(lens, { traceAllHeads: true });
  const state = { ...DEFAULTS, positional: 'rope', heads: 2, text: 'a b c' };
  const traced = engine.compute(state);
  const steps = walkthroughSteps(traced, catalog);
  assert.equal(steps, traced.steps);
  const stages = availableStages(steps).map((s) => s.id);
  assert.ok(stages.includes('rope') && !stages.includes('positional') && !stages.includes('alibi'), stages.join());
  const qkv = stepsOfStage(stageById('qkv'), steps, 1);
  assert.deepEqual(qkv.map((s) => `${s.id}/${s.head}`), ['q/1', 'k/1', 'v/1']);
  assert.equal(pickStage(availableStages(steps), 'alibi').id, 'weights');

  const untraced = { ...traced, steps: [] };
  const weights = walkthroughSteps(untraced, catalog);
  assert.deepEqual(weights, weightsOnlySteps(untraced, catalog));
  assert.deepEqual(weights.map((s) => [s.id, s.head, s.title, s.shape.join('x')]),
    [['weights', 0, 'Attention weights, head 1', '3x3'], ['weights', 1, 'Attention weights, head 2', '3x3']]);
  assert.deepEqual(Array.from(weights[1].data), Array.from(traced.attention.subarray(9, 18)));
  assert.deepEqual(availableStages(weights).map((s) => s.id), ['weights']);
});

test('view model: what a missing stage needs, the settings line and the words for a cell', () => {
  const say = (key, value) => (key === 'cross' ? 'a source attribute' : `${key}=${value.map((v) => `"${v}"`).join(' or ')}`);
  assert.equal(stageNeeds(catalog, stageById('positional'), say), 'positional="sinusoidal" or "learned"');
  assert.equal(stageNeeds(catalog, stageById('rope'), say), 'positional="rope"');
  assert.equal(stageNeeds(catalog, stageById('source'), say), 'a source attribute');
  assert.equal(stageNeeds(catalog, stageById('scores'), say), '');
  const result = { n: 6, kvN: 6, cross: false, config: { positional: 'sinusoidal' } };
  assert.equal(settingsSummary({ mask: 'sliding-window', window: 3, scale: false }, result),
    '6\u00a0tokens · sliding\u00a0window\u00a0of\u00a03 · sinusoidal\u00a0positions · no\u00a0√d_k\u00a0scaling');
  const matrix = { rowAxis: 'query', colAxis: 'dimension', rowLabels: ['bank'], colLabels: ['0', '1'] };
  assert.equal(cellWords(matrix, 0, 1), 'query “bank” → dimension 1');
});

test('stageFor: a model\'s layer starts from its own normed input; rotate-half RoPE, shared K/V heads and a window are said', () => {
  const embedding = stageById('embedding');
  assert.equal(stageFor(embedding), embedding, 'the seeded layer: as written');
  const rms = stageFor(embedding, { model: { norm: 'rms-norm' } });
  assert.equal(rms.label, 'Input');
  assert.match(rms.text, /RMSNorm \(x · rsqrt\(mean\(x²\) \+ ε\) ⊙ w/);
  assert.match(stageFor(embedding, { model: { norm: 'layer-norm' } }).text, /LayerNorm/);
  assert.doesNotMatch(stageFor(embedding, { model: { norm: null } }).text, /Norm/);
  assert.match(stageFor(stageById('rope'), { config: { rope: { pairing: 'rotate-half', base: 100000 } } }).text,
    /dimension i of each query and key head turns with dimension i \+ d_k\/2.*θ base 100000/);
  assert.equal(stageFor(stageById('rope'), { config: { rope: { pairing: 'interleaved', base: 10000 } } }), stageById('rope'));
  assert.match(stageFor(stageById('qkv'), { config: { heads: 9, kvHeads: 3 } }).text, /9 query heads share 3 key\/value heads, 3 query heads reading each/);
  assert.equal(stageFor(stageById('qkv'), { config: { heads: 4, kvHeads: 4 } }), stageById('qkv'));
  assert.match(stageFor(stageById('masked'), { model: { window: 5 } }).text, /query i sees only keys i − 5 < j ≤ i/);
});

test('the new families\' steps have stages: q/k norms after V and before RoPE, the soft-cap after scaling', () => {
  const order = STAGES.map((s) => s.id);
  assert.deepEqual(stageById('qk-norm').steps, ['q_normed', 'k_normed']);
  assert.deepEqual(stageById('capped').steps, ['capped']);
  assert.ok(order.indexOf('qkv') < order.indexOf('qk-norm') && order.indexOf('qk-norm') < order.indexOf('rope'));
  assert.ok(order.indexOf('scaled') < order.indexOf('capped') && order.indexOf('capped') < order.indexOf('masked'));
  // Every step the core can trace is shown by a stage (the catalog's list, in the catalog's order).
  const shown = STAGES.flatMap((s) => s.steps);
  for (const step of catalog.steps) assert.ok(shown.includes(step.id), `a stage shows '${step.id}'`);
  const steps = ['q', 'k', 'v', 'q_normed', 'k_normed', 'scores', 'scaled', 'capped', 'masked', 'weights']
    .map((id) => ({ id, head: 0 }));
  assert.deepEqual(availableStages(steps).map((s) => s.id), ['qkv', 'qk-norm', 'scores', 'scaled', 'capped', 'masked', 'weights']);
  assert.match(stageFor(stageById('qk-norm'), { config: { qkNorm: 'per-head', qkNormWeight: 'one-plus' } }).text,
    /head by head.*\(1 \+ w\)/);
  assert.match(stageFor(stageById('qk-norm'), { config: { qkNorm: 'whole', qkNormWeight: 'plain' } }).text,
    /whole projection.*learned weight w/);
  assert.match(stageFor(stageById('capped'), { config: { softcap: 50 } }).text, /c = 50/);
  assert.match(stageFor(stageById('scaled'), { config: { scale: 0.0625, headDim: 256 } }).text, /0\.06250 rather than 1\/√d_k/);
  assert.match(stageFor(stageById('rope'), { config: { headDim: 16, rope: { pairing: 'rotate-half', base: 10000, rotaryDims: 4 } } }).text,
    /i \+ r\/2.*Only the first r = 4 of the head's 16 dimensions turn/);
  // A stage no setting of the seeded layer can show says what it needs in the core's words.
  const say = (key, value) => `${key}=${value}`;
  assert.match(stageNeeds(catalog, stageById('qk-norm'), say), /q\/k norms/);
  assert.match(stageNeeds(catalog, stageById('capped'), say), /soft-cap/);
});
