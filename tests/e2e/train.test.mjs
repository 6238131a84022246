// The page's Train view in Chromium, driven as a reader would: start training a small model and
// see the loss fall and a score curve move; pause, scrub the timeline, ablate a head; download a
// checkpoint and load it back (its probe attention checked against the JS API in the same
// browser); a wrong checkpoint and a diverging learning rate show their errors as text and the
// page keeps working; the walkthrough tab is still there. (The induction head forming in the
// standard config is timed by scripts/measure/measure-train.mjs, not here.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { browserFixture, tableNumbers, hoverCell, openPage, screenshotDir } from './browser.mjs';

const live = browserFixture();

// A small run (copy task, 2 layers × 2 heads, d_model 16, context 12): fast, and its probe heads
// have screen-reader tables (context <= 32) to read the drawn numbers from.
const CONFIG = { task: 'copy', layers: 2, trainHeads: '2', trainDModel: '16', context: 12, lr: 0.01, batch: 16, trainSeed: 3 };
const HASH = `#tab=train&${new URLSearchParams(Object.entries(CONFIG).map(([k, v]) => [k, String(v)]))}`;

async function open(hash = HASH) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(live.server.url + hash);
  await page.waitForSelector('body[data-train-ready="true"]', { timeout: 30000 });
  return { page, problems };
}

const nextFrame = (page) => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
const step = (page) => page.evaluate(() => Number(document.body.dataset.trainStep));
const numbers = (page) => page.evaluate(() => ({ ...document.querySelector('#train-status').dataset }));
const curveScores = (page) => page.evaluate(() => [...document.querySelectorAll('.train-curve')].map((f) => JSON.parse(f.dataset.scores || '[]')));

/** The numbers drawn in a probe head's heatmap (its screen-reader table), row by row. */
const tileNumbers = (page, layer, head) =>
  tableNumbers(page, `.train-tile[data-layer="${layer}"][data-head="${head}"] figure`);

/**
 * In the page: the JS API on a checkpoint of this suite's config (CONFIG): head `head` of layer
 * `layer` on the probe (its first 12 characters), and the probe's characters.
 */
async function apiProbeHead({ buffer, probe, layer, head }) {
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const model = lens.createModel({ vocab: 28, context: 12, dModel: 16, heads: 2, layers: 2, positional: 'learned',
    layerNorm: true, mlp: false, tied: false, bias: true });
  model.loadSafetensors(new Uint8Array(buffer));
  const trainer = lens.createTrainer(model, { task: 'copy', heldOut: 1 });
  const ids = trainer.encode(probe).slice(0, 12);
  const { attention } = model.forward(ids, { n: ids.length });
  const n = ids.length;
  const weights = Array.from(attention[layer].subarray(head * n * n, (head + 1) * n * n));
  const chars = Array.from(trainer.decode(ids));
  model.dispose();
  return { n, head: weights, chars };
}

async function pause(page) {
  await page.click('#train-run');
  await page.waitForSelector('body[data-train-status="paused"]');
  // The chunk in flight (up to 300 ms of steps) still lands: wait until the step stays put.
  for (let before = -1, now = await step(page); now !== before; before = now, now = await step(page)) await page.waitForTimeout(800);
}

test('training a small model: the loss falls, a score curve moves; pause, scrub the timeline, ablate a head', async () => {
  const { page, problems } = await open();
  assert.equal(await page.locator('#train-view').isVisible(), true);
  assert.equal(await page.locator('#walkthrough-view').isVisible(), false);
  assert.equal(await page.inputValue('#train-task'), 'copy');
  assert.equal(await page.inputValue('#train-heads'), '2');
  assert.equal(await step(page), 0);
  const scores0 = await curveScores(page);
  assert.equal(scores0.length, 4, 'one score plot per head');

  await page.click('#train-step'); // one step
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 1);
  const first = await numbers(page);
  await page.click('#train-run');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) >= 300, null, { timeout: 40000 });
  // Typing in the probe while it trains redraws the heads on the new probe.
  await page.fill('#train-probe', 'abc|abc.');
  await page.waitForFunction(() => document.querySelector('.train-tile canvas')?.dataset.rows === '8');
  await pause(page);
  const later = await numbers(page);
  assert.ok(Number(later.heldOutLoss) < Number(first.heldOutLoss) - 0.3, `held-out loss ${first.heldOutLoss} → ${later.heldOutLoss}`);
  assert.ok(Number(later.loss) < Number(first.loss), `training loss ${first.loss} → ${later.loss}`);
  const moved = (await curveScores(page)).flatMap((s, i) => s.map((v, j) => Math.abs((v ?? 0) - (scores0[i][j] ?? 0))));
  assert.ok(Math.max(...moved) > 0.05, `a score curve moved (largest change ${Math.max(...moved)})`);
  const paused = await step(page);
  await page.waitForTimeout(500);
  assert.equal(await step(page), paused, 'paused: no more steps');
  assert.match(page.url(), /probe=abc%7Cabc\./, 'the probe is in the URL');
  await page.screenshot({ path: join(screenshotDir, 'train-paused-desktop.png'), fullPage: true });

  // The timeline: the first snapshot is another step with other weights than the live one.
  const liveWeights = await tileNumbers(page, 1, 0);
  await page.locator('#train-timeline').evaluate((slider) => {
    slider.value = '0';
    slider.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction(() => /^step \d+ \(snapshot 1 of \d+\)$/.test(document.querySelector('#train-timeline-label').textContent));
  const early = await tileNumbers(page, 1, 0);
  assert.notDeepEqual(early, liveWeights, 'the snapshot shows earlier weights');
  for (const row of early) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 2e-3, 'attention rows sum to 1');

  // Ablation: the loss without a head, and un-ablating it.
  await page.click('.train-tile[data-layer="1"][data-head="0"] button[aria-pressed]');
  await page.waitForSelector('.train-tile[data-layer="1"][data-head="0"].ablated');
  assert.match(await page.textContent('#train-ablation'), /Held-out loss at step \d+: [\d.]+ with every head, [\d.]+ without layer 2 head 1 \([+-][\d.e-]+\)\./);
  await page.click('.train-tile[data-layer="1"][data-head="0"] button[aria-pressed]');
  await page.waitForFunction(() => !document.querySelector('.train-tile.ablated'));
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('a checkpoint downloads, loads back with the same attention as the JS API, and a wrong one is refused as text', async () => {
  const { page, problems } = await open();
  await page.click('#train-run');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) >= 60, null, { timeout: 40000 });
  await pause(page);
  const trainedStep = await step(page);
  const trained = await tileNumbers(page, 0, 1);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#train-save')]);
  assert.match(download.suggestedFilename(), /^attention-lens-copy-2x2-d16-ctx12-lr0\.01-b16-seed3-step\d+\.safetensors$/);
  const file = join(screenshotDir, 'train-checkpoint.safetensors');
  await download.saveAs(file);
  const bytes = readFileSync(file);

  // A fresh model (Reset), then the checkpoint: the trained attention is back.
  await page.click('#train-reset');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 0);
  assert.notDeepEqual(await tileNumbers(page, 0, 1), trained);
  await page.setInputFiles('#train-load', { name: 'checkpoint.safetensors', mimeType: 'application/octet-stream', buffer: bytes });
  await page.waitForFunction(() => /^Loaded checkpoint\.safetensors\.$/.test(document.querySelector('#train-file-status').textContent));
  await nextFrame(page); // the view draws on the next animation frame
  const loaded = await tileNumbers(page, 0, 1);
  assert.deepEqual(loaded, trained, `the loaded weights draw as they did at step ${trainedStep}`);

  // The same checkpoint through the public API in this browser: the same numbers (to the 3 to 4
  // digits the table shows).
  const probe = await page.inputValue('#train-probe');
  const api = await page.evaluate(apiProbeHead, { buffer: [...bytes], probe, layer: 0, head: 1 });
  assert.equal(loaded.length, api.n);
  loaded.flat().forEach((v, i) => assert.ok(Math.abs(v - api.head[i]) <= 1e-3 + 1e-3 * Math.abs(api.head[i]), `cell ${i}: drawn ${v}, API ${api.head[i]}`));

  // A checkpoint of another config: the API's message, as text (the file name too).
  const other = await page.evaluate(async () => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const model = lens.createModel({ vocab: 28, context: 12, dModel: 32, heads: 2, layers: 2, positional: 'learned' });
    const saved = [...model.saveSafetensors()];
    model.dispose();
    return saved;
  });
  const evilName = '<img src=x onerror="window.__pwned=1">.safetensors';
  await page.setInputFiles('#train-load', { name: evilName, mimeType: 'application/octet-stream', buffer: Buffer.from(other) });
  await page.waitForFunction(() => document.querySelector('#train-file-status').textContent.startsWith('Could not load'));
  const status = await page.textContent('#train-file-status');
  assert.ok(status.includes(evilName), status);
  assert.match(status, /weight|shape|size|tensor/i, status);
  assert.equal(await page.locator('#train-file-status img').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(await tileNumbers(page, 0, 1), loaded, 'the weights stay');
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('a diverging learning rate shows its error; Reset and a sane rate train again; the walkthrough tab still works', async () => {
  const { page, problems } = await open(`${HASH.replace('lr=0.01', 'lr=1000000')}`);
  assert.equal(await page.inputValue('#train-lr'), '1000000');
  await page.click('#train-run');
  await page.waitForSelector('#train-error:not([hidden])', { timeout: 30000 });
  assert.match(await page.textContent('#train-error'), /^diverged at step \d+: loss is (NaN|inf)/i);
  await nextFrame(page); // the status is drawn on the next animation frame, the error at once
  assert.equal(await page.evaluate(() => document.body.dataset.trainStatus), 'diverged');
  await page.screenshot({ path: join(screenshotDir, 'train-diverged-desktop.png'), fullPage: true });

  await page.fill('#train-lr', '0.01');
  await page.press('#train-lr', 'Enter');
  await page.locator('#train-lr').evaluate((input) => input.dispatchEvent(new Event('change', { bubbles: true })));
  await page.waitForSelector('#train-error', { state: 'hidden' });
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 0);
  await page.click('#train-reset');
  await page.click('#train-step');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 1);
  assert.ok(Number.isFinite(Number((await numbers(page)).loss)));

  // "Open in walkthrough" on layer 2 head 2: the walkthrough shows that layer on the probe, its
  // drawn weights equal to the JS API's forward of the same checkpoint in this browser.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#train-save')]);
  const file = join(screenshotDir, 'train-open-checkpoint.safetensors');
  await download.saveAs(file);
  const bytes = readFileSync(file);
  const probe = await page.inputValue('#train-probe');
  await page.click('.train-tile[data-layer="1"][data-head="1"] button:not([aria-pressed])');
  await page.waitForSelector('#walkthrough-view:not([hidden])');
  await page.waitForFunction(() => document.querySelector('#walkthrough').dataset.model === 'opened-layer');
  await page.waitForFunction(() => [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready') &&
    document.querySelector('#matrices figure') !== null);
  assert.match(await page.textContent('#model-badge'), /^Trained in the Train view: copy, step 1, layer 2 of 2 · causal, characters · not in the link$/);
  assert.equal(await page.inputValue('#model'), 'opened-layer');
  assert.equal(await page.locator('#text').isDisabled(), true);
  const api = await page.evaluate(apiProbeHead, { buffer: [...bytes], probe, layer: 1, head: 1 }); // layer 2, head 2
  assert.deepEqual(await page.locator('#tokens .chip').allTextContents(), api.chars, 'the probe\'s characters are the tokens');
  const drawn = await page.evaluate(() => {
    const slot = document.querySelector('#matrices .matrix-slot');
    return { step: slot.dataset.step, head: Number(slot.dataset.head),
      values: [...slot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))) };
  });
  assert.deepEqual([drawn.step, drawn.head, drawn.values.length], ['weights', 1, api.n]);
  // The table prints 4 significant digits; the inspector below has the full value.
  drawn.values.flat().forEach((v, i) => assert.ok(Math.abs(v - api.head[i]) <= 1e-4 + 1e-3 * Math.abs(api.head[i]), `cell ${i}: drawn ${v}, API ${api.head[i]}`));
  const [row, col] = [api.n - 1, 2];
  await hoverCell(page, 0, row, col);
  await page.waitForSelector('[data-testid="cell-value"]');
  const shown = Number(await page.locator('[data-testid="cell-value"]').getAttribute('data-value'));
  assert.ok(Math.abs(shown - api.head[row * api.n + col]) <= 1e-5, `inspector ${shown}, API ${api.head[row * api.n + col]}`);
  await page.screenshot({ path: join(screenshotDir, 'walkthrough-from-train-desktop.png'), fullPage: true });
  // Another choice of weights leaves it.
  await page.selectOption('#model', '');
  await page.waitForFunction(() => document.querySelector('#walkthrough').dataset.model === '');
  assert.equal(await page.locator('#model option[value="opened-layer"]').count(), 0);

  // The walkthrough tab: its view, as before.
  await page.click('#tab-walkthrough');
  await page.waitForSelector('#walkthrough-view:not([hidden])');
  assert.equal(await page.locator('#train-view').isVisible(), false);
  await page.waitForFunction(() => document.querySelector('#matrices canvas') !== null);
  // Random weights on the page's default text (the english model's, lowercase), word tokens.
  assert.deepEqual(await page.locator('#tokens .chip').allTextContents(), ['the', 'bank', 'will', 'not', 'loan', 'money']);
  await page.waitForFunction(() => !location.hash.includes('tab=') && location.hash.includes('model=random'), null, { timeout: 5000 }); // the default tab: not in the URL
  assert.deepEqual(problems(), []);
  await page.context().close();
});
