// lens.catalog: the core's step catalog, option names, defaults and limits, read once. The ids
// must be exactly those traces produce under each condition, and the name lists exactly what
// createLayer, forward and tokenize accept.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertThrowsMessage, loadLens } from './support.mjs';

const lens = await loadLens();
const { catalog } = lens;

const quoted = (names) => names.map((n) => `'${n}'`).join(', ').replace(/, ([^,]*)$/, ' or $1');
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function deepFrozen(value, path = 'catalog') {
  if (value === null || typeof value !== 'object') return;
  assert.ok(Object.isFrozen(value), `${path} is frozen`);
  for (const [key, inner] of Object.entries(value)) deepFrozen(inner, `${path}.${key}`);
}

test('the catalog is one deep-frozen object with the agreed fields', () => {
  assert.equal(lens.catalog, catalog, 'read once');
  deepFrozen(catalog);
  assert.deepEqual(Object.keys(catalog).sort(),
    ['defaults', 'families', 'fields', 'gelu', 'limits', 'masks', 'parameterBytes', 'positional', 'steps', 'tasks', 'tokenizers',
      'unknownCharacters']);
  assert.deepEqual(catalog.steps.map((s) => s.id), ['embedding', 'positional', 'input', 'source',
    'q', 'k', 'v', 'q_normed', 'k_normed', 'q_rotated', 'k_rotated', 'scores', 'scaled', 'capped',
    'alibi', 'masked', 'weights', 'context', 'concat', 'output']);
  for (const step of catalog.steps) {
    assert.deepEqual(Object.keys(step).sort(),
      ['appearsWith', 'cols', 'equation', 'id', 'needs', 'perHead', 'rows', 'title']);
    assert.equal(step.appearsWith === null, step.needs === null, `${step.id}: needs iff a condition`);
    if (!step.perHead) assert.ok(!step.equation.includes('%'), `${step.id}: % only marks a head`);
  }
  assert.deepEqual(catalog.positional, ['none', 'sinusoidal', 'learned', 'rope', 'alibi']);
  assert.deepEqual(catalog.masks, ['none', 'causal', 'sliding-window', 'prefix-lm']);
  assert.deepEqual(catalog.tokenizers, ['word', 'char']);
  assert.deepEqual(catalog.tasks, ['induction', 'copy', 'reverse', 'sort', 'english']);
  assert.deepEqual(catalog.gelu, ['erf', 'tanh']);
  assert.deepEqual(catalog.unknownCharacters, ['error', 'map']);
  assert.deepEqual(Object.keys(catalog.defaults).sort(), ['forward', 'layer', 'model', 'trainer']);
  assert.equal(catalog.defaults.model.dModel, 64);
  assert.equal(catalog.defaults.trainer.task, 'induction');
  assert.equal(catalog.limits.maxModelLayers, 4);
  assert.equal(catalog.limits.maxSequence, 65536);
  assert.equal(catalog.limits.maxScoreValues, 2 ** 26);
});

const appears = (step, positional, cross) => step.appearsWith === null
  || (step.appearsWith.cross === true && cross)
  || (step.appearsWith.positional ?? []).includes(positional);

test('catalog ids are exactly the ids traces produce for each condition, with the same axes', () => {
  for (const positional of catalog.positional) {
    for (const cross of [false, true]) {
      const layer = lens.createLayer({ dModel: 8, heads: 2, positional });
      const x = Float32Array.from({ length: 3 * 8 }, (_, i) => Math.sin(i));
      const kv = cross ? Float32Array.from({ length: 4 * 8 }, (_, i) => Math.cos(i)) : undefined;
      const { steps } = layer.forward(x, { n: 3, kv, trace: true });
      const ids = [...new Set(steps.map((s) => s.id))];
      const expected = catalog.steps.filter((s) => appears(s, positional, cross)).map((s) => s.id);
      assert.deepEqual(ids, expected, `positional ${positional}, cross ${cross}`);
      for (const s of steps) {
        const entry = catalog.steps.find((c) => c.id === s.id);
        assert.equal(s.head >= 0, entry.perHead, s.id);
        assert.equal(s.rows, entry.rows, s.id);
        assert.equal(s.cols, entry.cols, s.id);
        if (entry.perHead) assert.equal(s.title, `${entry.title}, head ${s.head + 1}`);
      }
      layer.dispose();
    }
  }
});

test('a step missing from a trace is explained with the catalog\'s condition', () => {
  const layer = lens.createLayer({ dModel: 8, heads: 2 });
  layer.forward(new Float32Array(16), { n: 2, trace: true });
  for (const step of catalog.steps.filter((s) => s.needs !== null)) {
    assertThrowsMessage(() => layer.explain({ step: step.id, head: 0, row: 0, col: 0 }),
      new RegExp(`^step '${step.id}' is not in the last trace \\(it appears with ${escape(step.needs)}\\)`));
  }
  layer.dispose();
});

test('positional: every listed name is accepted, any other refused naming exactly the list', () => {
  for (const positional of catalog.positional) {
    const layer = lens.createLayer({ dModel: 8, heads: 2, positional });
    assert.equal(layer.config.positional, positional);
    layer.dispose();
  }
  assertThrowsMessage(() => lens.createLayer({ positional: 'fourier' }),
    new RegExp(`^${escape(`unknown positional encoding 'fourier': expected ${quoted(catalog.positional)}`)}$`));
});

test('masks: every listed name is accepted by forward, any other refused naming exactly the list', () => {
  const layer = lens.createLayer({ dModel: 8, heads: 2 });
  const x = new Float32Array(3 * 8);
  for (const mask of catalog.masks) {
    assert.ok(layer.forward(x, { n: 3, mask, window: 2, prefix: 1 }).output instanceof Float32Array, mask);
  }
  assertThrowsMessage(() => layer.forward(x, { n: 3, mask: 'diagonal' }),
    new RegExp(`^${escape(`unknown mask 'diagonal': expected ${quoted(catalog.masks)}`)}$`));
  layer.dispose();
});

test('tokenizers: every listed mode is accepted, any other refused naming exactly the list', () => {
  for (const mode of catalog.tokenizers) assert.ok(lens.tokenize('a b', { mode }).tokens.length >= 2);
  assertThrowsMessage(() => lens.tokenize('x', { mode: 'bpe' }),
    new RegExp(`^${escape(`unknown tokenizer 'bpe': expected ${quoted(catalog.tokenizers)}`)}$`));
});

test('the defaults are the ones createLayer and forward use for omitted options', () => {
  const d = catalog.defaults;
  const layer = lens.createLayer();
  const { headDim, kvHeads, outBias, ...rest } = layer.config;
  const { headDim: defaultHeadDim, kvHeads: defaultKvHeads, outBias: defaultOutBias, ...expected } = d.layer;
  assert.deepEqual(rest, expected);
  assert.equal(defaultHeadDim, 0, 'headDim 0: dModel / heads');
  assert.equal(headDim, d.layer.dModel / d.layer.heads);
  assert.equal(defaultKvHeads, 0, 'kvHeads 0: heads');
  assert.equal(kvHeads, d.layer.heads);
  assert.equal(defaultOutBias, null, 'outBias null: as bias');
  assert.equal(outBias, d.layer.bias);
  const x = Float32Array.from({ length: 4 * d.layer.dModel }, (_, i) => Math.sin(i));
  const implicit = layer.forward(x, {});
  const explicit = layer.forward(x, { ...d.forward });
  assert.deepEqual(implicit.output, explicit.output);
  assert.equal('attention' in implicit, d.forward.weights);
  assert.equal('steps' in implicit, d.forward.trace);
  layer.dispose();
});
