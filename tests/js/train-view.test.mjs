// The Train view's DOM-free modules (web/views/train/): the run config from the page's settings
// and its URL form, the checkpoint's file name, the bounded snapshots, and every task's example
// probe encoded by that task's trainer (so the view never opens on a probe error), and the
// sentence for an induction run that found another circuit, on two real runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkpointName, EXAMPLE_PROBES, probeOf, runChanged, runConfig } from '../../web/views/train/config.js';
import { addSnapshot, indexOfStep } from '../../web/views/train/snapshots.js';
import { circuitNote, INDUCTION_HEAD_SCORE, SOLVED_ACCURACY } from '../../web/views/train/circuit-note.js';
import { DEFAULTS, hashToState, makeSchema, stateToHash } from '../../web/shared/state.js';
import { loadLens } from './support.mjs';

const lens = await loadLens();
const schema = makeSchema(lens.catalog);

test('the train settings round-trip through the URL; invalid ones are ignored and named', () => {
  const settings = { ...DEFAULTS, tab: 'train', task: 'copy', layers: 1, trainHeads: '2', trainDModel: '16', context: 12,
    lr: 3e-3, batch: 16, trainSeed: 7, probe: 'ab|ab.' };
  const hash = stateToHash(settings, schema);
  assert.equal(hash, '#tab=train&task=copy&layers=1&trainHeads=2&trainDModel=16&context=12&lr=0.003&batch=16&trainSeed=7&probe=ab%7Cab.');
  assert.deepEqual(hashToState(hash, schema), { state: { ...settings, cells: [] }, ignored: [] });
  assert.equal(schema.lr.parse('1e-3'), 0.001);
  assert.equal(schema.lr.parse('1000000'), 1e6);
  for (const bad of ['0', '-1', 'abc', '1e9', 'Infinity', '1e-3x']) assert.equal(schema.lr.parse(bad), undefined, bad);
  const { state, ignored } = hashToState('#task=poetry&layers=9&trainHeads=3&context=4', schema);
  assert.deepEqual(ignored, ['task', 'layers', 'trainHeads', 'context']);
  assert.equal(state.task, DEFAULTS.task);
  assert.equal(stateToHash(DEFAULTS, schema), '', 'the defaults make no hash');
});

test('runConfig: the worker\'s config; the probe falls back to the task\'s example; what restarts a run', () => {
  const config = runConfig({ ...DEFAULTS, task: 'sort', probe: '' });
  assert.deepEqual(config, { task: 'sort', layers: 2, heads: 4, dModel: 64, context: 64, lr: 0.001, batch: 32, seed: 1,
    probe: EXAMPLE_PROBES.sort });
  assert.equal(probeOf({ ...DEFAULTS, probe: 'xyz' }), 'xyz');
  assert.equal(runChanged({ ...DEFAULTS, probe: 'a' }, DEFAULTS), false);
  assert.equal(runChanged({ ...DEFAULTS, lr: 0.01 }, DEFAULTS), true);
  assert.equal(checkpointName(config, 250), 'attention-lens-sort-2x4-d64-ctx64-lr0.001-b32-seed1-step250.safetensors');
});

test('every task\'s example probe is in that task\'s vocabulary', () => {
  assert.deepEqual(Object.keys(EXAMPLE_PROBES).sort(), [...lens.catalog.tasks].sort());
  for (const task of lens.catalog.tasks) {
    const model = lens.createModel({ vocab: 512, context: 64, dModel: 4, heads: 1, layers: 1 });
    const trainer = lens.createTrainer(model, { task, heldOut: 1 });
    assert.equal(trainer.decode(trainer.encode(EXAMPLE_PROBES[task])), EXAMPLE_PROBES[task], task);
    model.dispose();
  }
});

test('snapshots stay bounded: the older half is thinned, the newest kept, one per step', () => {
  let frames = [];
  for (let step = 1; step <= 100; ++step) frames = addSnapshot(frames, { step }, 10);
  const before = frames;
  frames = addSnapshot(frames, { step: 100, again: true }, 10);
  assert.notEqual(frames, before, 'a new array (the store is never mutated)');
  assert.ok(frames.length <= 10, `${frames.length} kept`);
  const steps = frames.map((f) => f.step);
  assert.deepEqual([...steps].sort((a, b) => a - b), steps, 'in step order');
  assert.equal(steps.at(-1), 100);
  assert.equal(frames.at(-1).again, true, 'a newer frame of the same step replaces it');
  assert.ok(steps[0] < 60, `old steps are still represented (${steps})`);
  assert.equal(frames[indexOfStep(frames, steps[2] + 0.5)].step, steps[2]);
});

test('circuitNote: only an induction run that is solved while every head stays under the mark', () => {
  const heads = (...induction) => induction.map((value, i) => ({ layer: Math.floor(i / 2), head: i % 2, induction: value }));
  const note = circuitNote('induction', { accuracy: 0.97 }, heads(0.02, 0.11, 0.3, 0.05));
  assert.match(note, /^Held-out accuracy is 0\.97, but no head's induction score is above 0\.3 \(the highest: layer 2 head 1, 0\.30\): this run solved the task another way/);
  assert.match(note, /Try another seed/);
  assert.equal(circuitNote('induction', { accuracy: 0.97 }, heads(0.02, 0.31)), null, 'an induction head');
  assert.equal(circuitNote('induction', { accuracy: SOLVED_ACCURACY - 0.01 }, heads(0.01)), null, 'not solved yet');
  assert.equal(circuitNote('copy', { accuracy: 1 }, heads(0.01)), null, 'another task');
  assert.equal(circuitNote('induction', null, heads(0.01)), null, 'no report yet');
  assert.equal(circuitNote('induction', { accuracy: 1 }, []), null, 'no scores');
  assert.equal(circuitNote('induction', { accuracy: 1 }, heads(NaN)), null, 'a score that is not a number says nothing');
  assert.equal(INDUCTION_HEAD_SCORE, 0.3);
});

// The two runs of the README's Train section (the page's default size and seeds 3/3): with a
// 64-token vocabulary the task is solved without an induction head; with 52 one forms.
test('circuitNote on real runs: vocab 64 solves induction another way, vocab 52 grows an induction head', () => {
  const run = (vocab, steps) => {
    const model = lens.createModel({ vocab, context: 64, dModel: 64, heads: 4, layers: 2, positional: 'learned',
      layerNorm: true, mlp: false, tied: false, bias: true, seed: 3 });
    const trainer = lens.createTrainer(model, { task: 'induction', lr: 1e-3, batch: 32, seed: 3, weightDecay: 0.01, clip: 1 });
    trainer.step(steps, { evaluate: false });
    const report = trainer.evaluate();
    const scores = model.headScores();
    model.dispose();
    return { report, scores, best: Math.max(...scores.map((s) => s.induction)) };
  };
  const other = run(64, 1000);
  assert.ok(other.report.accuracy > 0.95, `vocab 64: accuracy ${other.report.accuracy}`);
  assert.ok(other.best < 0.1, `vocab 64: best induction score ${other.best}`);
  assert.match(circuitNote('induction', other.report, other.scores), /solved the task another way/);
  const induction = run(52, 300);
  assert.ok(induction.report.accuracy > 0.95, `vocab 52: accuracy ${induction.report.accuracy}`);
  assert.ok(induction.best > 0.6, `vocab 52: best induction score ${induction.best}`);
  assert.equal(circuitNote('induction', induction.report, induction.scores), null);
});
