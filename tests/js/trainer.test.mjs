// lens.createTrainer through the API (README "Models and training"): training lowers the
// held-out loss, runs are reproducible, a diverging learning rate stops with the step named and
// the last good weights kept, tasks and models that do not fit are errors, and lifetimes.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertThrowsMessage, loadLens } from './support.mjs';

const lens = await loadLens();
// The copy task's vocabulary is a-z, '|' and '.': 28 tokens.
const MODEL = { vocab: 28, context: 12, dModel: 32, heads: 4, layers: 2, seed: 3 };
const TRAINING = { task: 'copy', batch: 16, heldOut: 64, seed: 5, lr: 3e-3 };

test('step(k) runs k steps and lowers the held-out loss', () => {
  const model = lens.createModel(MODEL);
  const trainer = lens.createTrainer(model, TRAINING);
  assert.deepEqual(trainer.task, { name: 'copy', vocabulary: 'abcdefghijklmnopqrstuvwxyz|.' });
  assert.equal(trainer.steps, 0);
  const first = trainer.step(1);
  assert.deepEqual(Object.keys(first).sort(), ['accuracy', 'heldOutLoss', 'loss', 'step']);
  assert.equal(first.step, 1);
  const later = trainer.step(60);
  assert.equal(later.step, 61);
  assert.equal(trainer.steps, 61);
  assert.ok(later.heldOutLoss < first.heldOutLoss - 0.3, `${first.heldOutLoss} -> ${later.heldOutLoss}`);
  assert.ok(later.accuracy >= 0 && later.accuracy <= 1);
  trainer.dispose();
  model.dispose();
});

test('step(k, { evaluate: false }) trains the same without evaluating; evaluate() reports the held-out set', () => {
  const evaluatedModel = lens.createModel(MODEL);
  const quietModel = lens.createModel(MODEL);
  const evaluated = lens.createTrainer(evaluatedModel, TRAINING).step(5);
  const trainer = lens.createTrainer(quietModel, TRAINING);
  const quiet = trainer.step(5, { evaluate: false });
  assert.deepEqual(Object.keys(quiet).sort(), ['loss', 'step']);
  assert.equal(quiet.step, 5);
  assert.equal(quiet.loss, evaluated.loss);
  assert.deepEqual(quietModel.parameters(), evaluatedModel.parameters());
  const now = trainer.evaluate();
  assert.deepEqual(now, { step: 5, heldOutLoss: evaluated.heldOutLoss, accuracy: evaluated.accuracy });
  assert.equal(trainer.steps, 5, 'evaluating takes no step');
  assert.deepEqual(Object.keys(trainer.step(1, { evaluate: true })).sort(), ['accuracy', 'heldOutLoss', 'loss', 'step']);
  assertThrowsMessage(() => trainer.step(1, { evaluate: 'no' }), /evaluate must be true or false, got "no"/);
  assertThrowsMessage(() => trainer.step(1, { evaluation: false }), /unknown step options key 'evaluation'; expected one of: evaluate/);
  assertThrowsMessage(() => trainer.step(1, null), /step options must be an object, got null/);
  assert.equal(trainer.steps, 6, 'refused calls take no step');
  evaluatedModel.dispose();
  quietModel.dispose();
});

test('two trainers with the same seeds give identical reports and weights', () => {
  const run = () => {
    const model = lens.createModel(MODEL);
    const trainer = lens.createTrainer(model, { ...TRAINING, warmup: 2, totalSteps: 10, minLr: 1e-4 });
    const reports = [trainer.step(3), trainer.step(4)];
    const params = model.parameters();
    model.dispose();
    return { reports, params };
  };
  const a = run();
  const b = run();
  assert.deepEqual(a.reports, b.reports);
  assert.deepEqual(a.params, b.params);
});

test('a diverging learning rate throws "diverged at step" and keeps finite, usable weights', () => {
  const model = lens.createModel(MODEL);
  const trainer = lens.createTrainer(model, { ...TRAINING, lr: 1e30, clip: 0 });
  assertThrowsMessage(() => trainer.step(20), /diverged at step \d+: (loss|the gradient norm) is (NaN|infinite); lower the learning rate/);
  for (const [name, values] of Object.entries(model.parameters())) {
    assert.ok(values.every(Number.isFinite), `${name} is finite`);
  }
  const f = model.forward(trainer.encode('abc|abc.....'));
  assert.ok(f.logits.every(Number.isFinite));
  const calm = lens.createTrainer(model, TRAINING);
  assert.ok(Number.isFinite(calm.step(2).heldOutLoss), 'the model trains again');
  model.dispose();
});

test('a task that does not fit the model, and settings out of bounds, are errors', () => {
  const small = lens.createModel({ ...MODEL, vocab: 20 });
  assertThrowsMessage(() => lens.createTrainer(small, TRAINING),
    /the copy task has 28 tokens but the model's vocabulary has 20; create the model with vocab >= 28/);
  const short = lens.createModel({ ...MODEL, vocab: 52, context: 3 });
  assertThrowsMessage(() => lens.createTrainer(short, { task: 'induction' }), /context/);
  const model = lens.createModel(MODEL);
  assertThrowsMessage(() => lens.createTrainer(model, { ...TRAINING, task: 'Copy' }), /unknown task 'Copy'/);
  assertThrowsMessage(() => lens.createTrainer(model, { ...TRAINING, batch: 0 }), /batch must be between 1/);
  assertThrowsMessage(() => lens.createTrainer(model, { ...TRAINING, beta1: 1 }), /beta1/);
  assertThrowsMessage(() => lens.createTrainer(model, { ...TRAINING, lr: '1e-3' }), /lr must be a number, got "1e-3"/);
  assertThrowsMessage(() => lens.createTrainer(model, { ...TRAINING, learningRate: 1 }),
    /unknown createTrainer options key 'learningRate'/);
  assertThrowsMessage(() => lens.createTrainer({}, TRAINING), /createTrainer expects a model from lens.createModel/);
  const trainer = lens.createTrainer(model, TRAINING);
  assertThrowsMessage(() => trainer.step(0), /step\(k\) needs k >= 1/);
  assert.equal(trainer.step(1).step, 1, 'usable after the errors');
  for (const m of [small, short, model]) m.dispose();
});

test('encode, decode and the held-out set use the task\'s readable characters', () => {
  const model = lens.createModel(MODEL);
  const trainer = lens.createTrainer(model, TRAINING);
  assert.deepEqual(trainer.encode('ab|ba.'), Int32Array.from([0, 1, 26, 1, 0, 27]));
  assert.equal(trainer.decode([2, 0, 1, 26]), 'cab|');
  assertThrowsMessage(() => trainer.encode('aB'), /B/);
  assertThrowsMessage(() => trainer.decode([28]), /28/);
  const held = trainer.heldOut();
  assert.equal(held.batch, 64);
  assert.equal(held.n, 12);
  assert.equal(held.ids.length, 64 * 12);
  assert.ok(trainer.decode(held.ids.subarray(0, 12)).includes('|'));
  model.dispose();
});

test('lifetime: disposing the model makes its trainers unusable; a trainer can go first', () => {
  const model = lens.createModel(MODEL);
  const a = lens.createTrainer(model, TRAINING);
  const b = lens.createTrainer(model, TRAINING);
  b.dispose();
  assertThrowsMessage(() => b.step(1), /this trainer was disposed/);
  assert.equal(a.step(1).step, 1);
  model.dispose();
  assertThrowsMessage(() => a.step(1), /this trainer's model was disposed/);
  assertThrowsMessage(() => a.encode('a'), /this trainer's model was disposed/);
  assertThrowsMessage(() => a.evaluate(), /this trainer's model was disposed/);
  assertThrowsMessage(() => lens.createTrainer(model, TRAINING), /this model was disposed/);
  a.dispose();
});
