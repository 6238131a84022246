// The Your model view's "Across training" strip in node: its DOM-free data (web/views/model/training-data.js:
// the default checkpoints, training order, the progress line, the best head, the export's rows and
// JSON), and its data path — a model session (session-model.js) loading a Pythia revision by Hub id
// from the local stand-in (scripts/lib/hub-stand-in.mjs), posting the download's bytes, its scores
// equal to model.headScores on that revision's own files.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { PYTHIA_REVISIONS } from '../../web/shared/hub-models.js';
import { bestHead, defaultRevisions, progressLine, scoreMatrix, stepOf, TRAINING_DEFAULT, trainingJson, trainingOrder,
  trainingRows } from '../../web/views/model/training-data.js';
import { csvText } from '../../web/shared/exporting.js';
import { PYTHIA_ID, pythiaRepos, pythiaRevisions } from '../e2e/hub-fixture.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';
import { loadLens } from './support.mjs';

const lens = await loadLens();
const REVISIONS = pythiaRevisions({ layers: 2, heads: 4, d: 32 });
let hub;

before(async () => {
  hub = await startStandIn(pythiaRepos(REVISIONS));
});
after(async () => {
  await hub?.close();
});

test('the default checkpoints: the spread Pythia lists, in training order; a list lacking some offers the rest', () => {
  assert.deepEqual(defaultRevisions(PYTHIA_REVISIONS), TRAINING_DEFAULT);
  for (const r of TRAINING_DEFAULT) assert.ok(PYTHIA_REVISIONS.includes(r), `${r} is one of Pythia's published revisions`);
  assert.deepEqual(defaultRevisions(['step0', 'step4000', 'step5000', 'step143000']), ['step0', 'step4000', 'step143000']);
  assert.deepEqual(trainingOrder(['step143000', 'step16', 'main', 'step0', 'step2000', 'step16']), ['step0', 'step16', 'step2000', 'step143000', 'main']);
  assert.equal(stepOf('step33000'), 33000);
  assert.equal(stepOf('main'), null);
});

test('the progress line: the checkpoint and its bytes while it downloads, then the weights read', () => {
  assert.equal(progressLine('step4000', { phase: 'download', fraction: 0.23, received: 37e6, total: 160.4e6 }), 'step4000: 37 MB of 160 MB');
  assert.equal(progressLine('step0', { phase: 'download', fraction: 0.5, received: 630_000, total: 1_257_384 }), 'step0: 630 kB of 1.26 MB');
  assert.equal(progressLine('step0', { phase: 'prepare', fraction: 0.416 }), 'step0: reading the weights (42%)');
  assert.equal(progressLine('step1', { phase: 'download', received: 9.96e6, total: 9.96e6 }), 'step1: 9.96 MB of 9.96 MB');
});

const score = (layer, head, induction, previousToken = 0) => ({ layer, head, induction, previousToken });

test('the best head: the highest at the latest checkpoint (ties: lower layer, then head), followed back; unmeasured scores skipped', () => {
  const results = [
    { revision: 'step0', scores: [score(0, 0, 0.1), score(0, 1, 0.2), score(1, 0, null), score(1, 1, 0.05)] },
    { revision: 'step1000', scores: [score(0, 0, 0.3), score(0, 1, 0.1), score(1, 0, 0.9), score(1, 1, 0.9)] },
  ];
  assert.deepEqual(bestHead(results, 'induction'), { layer: 1, head: 0, values: [null, 0.9] });
  assert.deepEqual(bestHead(results.slice(0, 1), 'induction'), { layer: 0, head: 1, values: [0.2] });
  assert.equal(bestHead([], 'induction'), null);
  assert.equal(bestHead([{ revision: 'step0', scores: [score(0, 0, null)] }], 'induction'), null);
  const m = scoreMatrix(results[0].scores, 'induction', { layers: 2, heads: 2 });
  assert.deepEqual([m.rows, m.cols], [2, 2]);
  assert.deepEqual(Array.from(m.data).map((v) => (Number.isNaN(v) ? 'NaN' : Number(v.toFixed(6)))), [0.1, 0.2, 'NaN', 0.05]);
});

test('the export: a row per checkpoint and head (1-based), an unmeasured score empty; JSON with 0-based heads as the API', () => {
  const results = [{ revision: 'step2000', scores: [score(0, 1, 0.25, 0.5), score(1, 0, null, 0.125)] }];
  assert.equal(csvText(trainingRows(results)),
    'revision,step,layer,head,induction,previous_token\nstep2000,2000,1,2,0.25,0.5\nstep2000,2000,2,1,,0.125\n');
  const json = JSON.parse(trainingJson({ id: PYTHIA_ID, probeLength: 50, results }));
  assert.equal(json.model, PYTHIA_ID);
  assert.match(json.probe, /^25 seeded random tokens repeated once/);
  assert.deepEqual(json.checkpoints, [{ revision: 'step2000', step: 2000,
    scores: [{ layer: 0, head: 1, induction: 0.25, previousToken: 0.5 }, { layer: 1, head: 0, induction: null, previousToken: 0.125 }] }]);
});

test('a session loads a revision by id, posting the bytes it downloads; its scores are model.headScores on that revision\'s files', async () => {
  const updates = [];
  const session = new SessionModel(lens, (update) => updates.push(update));
  const read = [];
  for (const revision of ['step0', 'step66000']) {
    updates.length = 0;
    hub.reset();
    const loaded = await session.hub({ hub: PYTHIA_ID, endpoint: hub.endpoint, revision });
    assert.equal(loaded.family, 'gpt_neox');
    assert.equal(loaded.revision, revision);
    assert.equal(hub.count('hub', `/${PYTHIA_ID}/resolve/${revision}/config.json`), 1);
    const downloads = updates.filter((u) => u.phase === 'download');
    assert.ok(downloads.length > 0, 'the download posted');
    for (const u of downloads) assert.ok(Number.isInteger(u.received) && u.received <= u.total, JSON.stringify(u));
    assert.ok(downloads.at(-1).total >= REVISIONS[revision].weights.length, `${downloads.at(-1).total} bytes`);
    assert.ok(updates.filter((u) => u.phase === 'prepare').every((u) => u.received === undefined), 'preparing says no bytes');
    const { scores, probeLength } = session.scores();
    read.push(scores);
    const { config, tokenizer, weights } = REVISIONS[revision];
    const own = await lens.loadCheckpoint({ weights, config, tokenizer });
    try {
      assert.equal(probeLength, own.probe().n);
      assert.deepEqual(scores, own.headScores());
    } finally {
      own.dispose();
    }
  }
  // The two revisions' weights differ, and so do their scores.
  assert.notDeepEqual(read[0].map((s) => s.induction), read[1].map((s) => s.induction));
  session.model.dispose();
});
