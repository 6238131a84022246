// The Your model view's "Across training" strip (issue 32) in Chromium, against the local stand-in of
// the Hub (scripts/lib/hub-stand-in.mjs; no test reaches the internet) serving a Pythia-70m-shaped
// GPT-NeoX as EleutherAI/pythia-70m at the strip's default checkpoints, each revision with different
// weights (hub-fixture.mjs's pythiaRevisions): every checkpoint's drawn scores equal model.headScores
// computed by the JS API in node on that revision's files, for both scores; the view's own loaded
// model is not disturbed; a second run reads the browser's kept files (no request); the JSON and CSV
// downloads hold the same numbers; Cancel during a checkpoint's load stops every further request
// (counted on the stand-in) and keeps the checkpoints read; Pythia-160m's 12 × 12 heads; 1280 and
// 375 px (no sideways scroll; screenshots training-*.png) with axe's WCAG A/AA rules. Served under the strict CSP with the
// stand-in's origins added to connect-src.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchBrowser, openPage, screenshotDir, serveDist, tableNumbers } from './browser.mjs';
import { PYTHIA_ID, PYTHIA_STEPS, pythiaRepos, pythiaRevisions, randomPythia, startSmallHub } from './hub-fixture.mjs';
import { strictCspAlso } from '../../scripts/lib/csp.mjs';
import { loadLens } from '../js/support.mjs';
import { formatBytes } from '../../web/shared/format.js';

const REVISIONS = pythiaRevisions();
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');
const { layers: LAYERS, heads: HEADS } = { layers: REVISIONS.main.config.num_hidden_layers, heads: REVISIONS.main.config.num_attention_heads };

// Pythia-160m's layout (12 layers × 12 heads, d_model 96) at three revisions.
const BIG_ID = 'EleutherAI/pythia-160m';
const BIG_STEPS = ['step0', 'step1000', 'step143000'];
const BIG = Object.fromEntries(BIG_STEPS.map((revision, i) => [revision, randomPythia({ layers: 12, heads: 12, d: 96, seed: 20 + i, sharpness: 1 + i })]));
BIG.main = BIG.step143000;
let bigExpected;

let hub;
let server;
let chrome;
let expected; // { [revision]: model.headScores() in node on that revision's files }

before(async () => {
  hub = await startSmallHub({ ...pythiaRepos(REVISIONS), ...pythiaRepos(BIG, BIG_ID) });
  [server, chrome] = await Promise.all([serveDist({ csp: strictCspAlso([hub.endpoint, hub.storage]) }), launchBrowser()]);
  // The reference: the public API in node on each revision's own files (not through the page, the Hub or the cache).
  const lens = await loadLens();
  expected = {};
  for (const revision of PYTHIA_STEPS) {
    const { config, tokenizer, weights } = REVISIONS[revision];
    const m = await lens.loadCheckpoint({ weights, config, tokenizer });
    expected[revision] = m.headScores();
    m.dispose();
  }
  bigExpected = {};
  for (const revision of BIG_STEPS) {
    const m = await lens.loadCheckpoint({ weights: BIG[revision].weights, config: BIG[revision].config, tokenizer: BIG[revision].tokenizer });
    bigExpected[revision] = m.headScores();
    m.dispose();
  }
});
after(async () => {
  await chrome?.close();
  server?.stop();
  await hub?.close();
});

const realProblems = (problems) => problems().filter((p) => ![hub.endpoint, hub.storage].some((o) => p.includes(`left the origin: ${o}`)));

/** The page at the Your model view with EleutherAI/pythia-70m (main) loaded from the stand-in. */
async function openPythia(viewport, id = PYTHIA_ID) {
  const opened = await openPage(chrome.browser, server.url, viewport);
  await opened.page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}&hub=${encodeURIComponent(id)}`);
  await opened.page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await opened.page.getAttribute('body', 'data-model-name'), id);
  await opened.page.waitForSelector('#model-training:not([hidden])');
  return opened;
}

/** Presses Run and waits for the run to end; resolves to the state it ended in. */
async function run(page) {
  await page.click('#model-training-run');
  await page.waitForFunction(() => document.body.dataset.trainingRun && document.body.dataset.trainingRun !== 'running', null, { timeout: 60000 });
  return page.getAttribute('body', 'data-training-run');
}

/** The numbers drawn for checkpoint `revision` (its heatmap's screen-reader table), layer by layer. */
const drawn = (page, revision) => tableNumbers(page, `#model-training-strip .model-training-tile[data-revision="${revision}"] figure`);

/** Every drawn checkpoint's `key` scores equal the API's in node to the table's 4 decimals. */
async function assertStripIsApis(page, revisions, key) {
  for (const revision of revisions) {
    const rows = await drawn(page, revision);
    assert.equal(rows.length, LAYERS, `${revision}: ${rows.length} layers drawn`);
    for (const s of expected[revision]) {
      const got = rows[s.layer][s.head];
      assert.ok(Math.abs(got - s[key]) <= 5.1e-5 + 1e-3 * Math.abs(s[key]), `${revision} L${s.layer} H${s.head} ${key}: drawn ${got}, API ${s[key]}`);
    }
  }
}

const phoneFits = (page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth,
  outside: [...document.querySelectorAll('#model-training *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5 &&
    !e.closest('.sr-only')).map((e) => e.id || e.className?.baseVal || e.className) }));

const axe = (page) => page.evaluate(async () => (await window.axe.run(document.querySelector('#model-training'),
  { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }))
  .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));

async function downloaded(page, selector) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const chunks = [];
  for await (const chunk of await file.createReadStream()) chunks.push(chunk);
  return { name: file.suggestedFilename(), text: Buffer.concat(chunks).toString('utf8') };
}

test('the strip reads every default checkpoint in its own session: its numbers are model.headScores of each revision, the view\'s model untouched, a rerun from the cache', async () => {
  // The fixture means something: the revisions' weights differ, and so do their scores.
  assert.notDeepEqual(expected.step0.map((s) => s.induction), expected.step143000.map((s) => s.induction));
  const { page, problems } = await openPythia();
  // The default spread ticked, the entry's 145 other checkpoints offered unticked.
  assert.deepEqual(await page.$$eval('#model-training-checks input', (boxes) => boxes.map((b) => [b.value, b.checked])),
    PYTHIA_STEPS.map((r) => [r, true]));
  assert.equal(await page.locator('#model-training-others input').count(), 154 - PYTHIA_STEPS.length);
  assert.equal(await page.locator('#model-training-others input:checked').count(), 0);
  // The view's own model, to compare after the run.
  const status = await page.textContent('#model-status');
  const finder = await page.$$eval('#model-finder tbody tr', (rows) => rows.map((r) => r.textContent));
  const modelLoads = await page.getAttribute('body', 'data-model-loads');

  // The progress line names the checkpoint and its bytes while it downloads.
  await page.evaluate(() => {
    window.trainingLines = [];
    const line = document.querySelector('#model-training-status');
    new MutationObserver(() => window.trainingLines.push(line.textContent)).observe(line, { childList: true, characterData: true, subtree: true });
  });
  hub.reset();
  assert.equal(await run(page), 'done');
  assert.equal(await page.textContent('#model-training-status'), `${PYTHIA_STEPS.length} checkpoints read.`);
  const lines = await page.evaluate(() => window.trainingLines);
  for (const revision of PYTHIA_STEPS) {
    // The last line of its download: every byte of its files read (config.json, then the weights; tokenizer.json after them).
    const total = JSON.stringify(REVISIONS[revision].config).length + REVISIONS[revision].weights.length;
    assert.ok(lines.some((l) => l.startsWith(`${revision}: `) && l.includes(` of ${formatBytes(total)} · checkpoint `)),
      `${revision}: no line "${revision}: … of ${formatBytes(total)}" in ${JSON.stringify(lines.filter((l) => l.startsWith(revision)))}`);
  }
  // Each revision's files asked once, from its own resolve/<revision>/ (main's only by the view's load, before).
  for (const revision of PYTHIA_STEPS) {
    assert.equal(hub.count('hub', `/${PYTHIA_ID}/resolve/${revision}/config.json`), 1, revision);
    assert.ok(hub.count('storage', `/${PYTHIA_ID}/${revision}/model.safetensors`) >= 1, revision);
  }
  assert.equal(hub.count('hub', `/${PYTHIA_ID}/resolve/main/config.json`), 0);
  // The view's list of the files the browser keeps names the checkpoints read.
  await page.waitForFunction((id) => [...document.querySelectorAll('#model-cache-list .model-cache-item')]
    .some((item) => item.dataset.repo === id && item.textContent.includes('step143000')), PYTHIA_ID);
  const kept = await page.textContent(`#model-cache-list .model-cache-item[data-repo="${PYTHIA_ID}"] .model-cache-line`);
  for (const revision of PYTHIA_STEPS) assert.ok(kept.includes(revision), `${revision} in "${kept}"`);

  // Every checkpoint's drawn induction scores are the API's on that revision's files; then previous-token.
  assert.deepEqual(await page.$$eval('#model-training-strip .model-training-tile', (tiles) => tiles.map((t) => t.dataset.revision)), PYTHIA_STEPS);
  await assertStripIsApis(page, PYTHIA_STEPS, 'induction');
  await page.click('#model-training-previous');
  assert.equal(await page.getAttribute('#model-training-previous', 'aria-pressed'), 'true');
  await assertStripIsApis(page, PYTHIA_STEPS, 'previousToken');
  // The line: the head with the highest previous-token score at step143000, its score at each checkpoint in its label.
  const last = expected.step143000.reduce((a, b) => (b.previousToken > a.previousToken ? b : a));
  assert.equal(await page.textContent('#model-training-line-title'),
    `L${last.layer + 1} H${last.head + 1}'s previous token score across training (the highest at step143000)`);
  const label = await page.getAttribute('#model-training-line svg', 'aria-label');
  for (const revision of PYTHIA_STEPS) {
    const want = expected[revision].find((s) => s.layer === last.layer && s.head === last.head).previousToken;
    const got = Number(new RegExp(`${revision} ([\\d.e-]+)`).exec(label)[1]);
    assert.ok(Math.abs(got - want) <= 5e-4, `${revision}: the line says ${got}, the API ${want}`);
  }
  assert.equal(await page.locator('#model-training-line svg text', { hasText: 'training step (checkpoints evenly spaced)' }).count(), 1);
  assert.equal(await page.locator('#model-training-line svg text', { hasText: '143k' }).count(), 1);

  // The view's own model stayed as it was (the strip loaded its revisions in a session of its own).
  assert.equal(await page.textContent('#model-status'), status);
  assert.deepEqual(await page.$$eval('#model-finder tbody tr', (rows) => rows.map((r) => r.textContent)), finder);
  assert.equal(await page.getAttribute('body', 'data-model-loads'), modelLoads);
  assert.equal(await page.getAttribute('body', 'data-model-name'), PYTHIA_ID);

  // JSON and CSV: every checkpoint's every head, both scores, the API's numbers.
  const json = await downloaded(page, '#model-training-json');
  assert.equal(json.name, 'pythia-70m-across-training.json');
  const parsed = JSON.parse(json.text);
  assert.deepEqual(parsed.checkpoints.map((c) => c.revision), PYTHIA_STEPS);
  for (const c of parsed.checkpoints) {
    assert.equal(c.scores.length, LAYERS * HEADS);
    for (const s of c.scores) {
      const want = expected[c.revision].find((e) => e.layer === s.layer && e.head === s.head);
      assert.ok(Math.abs(s.induction - want.induction) <= 1e-6 && Math.abs(s.previousToken - want.previousToken) <= 1e-6, `${c.revision} ${s.layer}.${s.head}`);
    }
  }
  const csv = await downloaded(page, '#model-training-csv');
  const csvLines = csv.text.trim().split('\n');
  assert.equal(csvLines[0], 'revision,step,layer,head,induction,previous_token');
  assert.equal(csvLines.length, 1 + PYTHIA_STEPS.length * LAYERS * HEADS);
  const [revision, step, layer, head, induction] = csvLines.at(-1).split(',');
  const want = expected[revision].find((s) => s.layer === Number(layer) - 1 && s.head === Number(head) - 1);
  assert.equal(step, '143000');
  assert.ok(Math.abs(Number(induction) - want.induction) <= 1e-6);
  // Figures: every checkpoint's map in one SVG (a tile per checkpoint, labelled by its revision), and the line as SVG.
  const figure = (svg) => page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return { error: doc.querySelector('parsererror')?.textContent ?? '', tiles: doc.querySelectorAll('g[shape-rendering="crispEdges"]').length,
      labels: [...doc.querySelectorAll('g.tiles > text')].map((t) => t.textContent), lines: doc.querySelectorAll('polyline').length,
      classes: doc.querySelectorAll('[class]:not(g)').length, metadata: JSON.parse(doc.querySelector('metadata').textContent) };
  }, svg);
  const maps = await figure((await downloaded(page, '[data-export="across-training-maps-svg"]')).text);
  assert.equal(maps.error, '');
  assert.equal(maps.tiles, PYTHIA_STEPS.length);
  assert.deepEqual(maps.labels, PYTHIA_STEPS);
  assert.equal(maps.metadata.model, PYTHIA_ID);
  const lineSvg = (await downloaded(page, '[data-export="across-training-line-svg"]')).text;
  const line = await figure(lineSvg);
  const shot = await page.context().newPage();
  await shot.setContent(`<img alt="" style="width:1280px" src="data:image/svg+xml;base64,${Buffer.from(lineSvg).toString('base64')}">`);
  await shot.waitForFunction(() => document.querySelector('img').complete);
  await shot.screenshot({ path: join(screenshotDir, 'figure-training-line-svg.png'), fullPage: true });
  await shot.close();
  assert.equal(line.error, '');
  assert.ok(line.lines >= 1, 'the head\'s line');
  assert.equal(line.classes, 0, 'styled by attributes, not by the page\'s classes');

  // A second run reads every file from the browser's kept copy: not one request; the same numbers.
  hub.reset();
  assert.equal(await run(page), 'done');
  assert.deepEqual(hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`), []);
  assert.equal(await page.textContent('#model-training-status'), `${PYTHIA_STEPS.length} checkpoints read (all from the browser's kept files).`);
  await assertStripIsApis(page, PYTHIA_STEPS, 'previousToken');
  await page.click('#model-training-induction');
  await assertStripIsApis(page, ['step0', 'step143000'], 'induction');

  // 1280 px: screenshots; axe's WCAG A/AA rules on the section.
  await page.locator('#model-training').scrollIntoViewIfNeeded();
  await page.locator('#model-training').screenshot({ path: join(screenshotDir, 'training-desktop.png') });
  await page.evaluate(AXE);
  assert.deepEqual(await axe(page), []);
  // A 375 px phone: no sideways scroll, nothing of the section outside the page.
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(400);
  const phone = await phoneFits(page);
  assert.ok(phone.scroll <= phone.inner, `the page is ${phone.scroll} px wide in a ${phone.inner} px viewport`);
  assert.deepEqual(phone.outside, []);
  await page.locator('#model-training').screenshot({ path: join(screenshotDir, 'training-phone.png') });
  assert.deepEqual(await axe(page), []);
  assert.deepEqual(realProblems(problems), []);
  await page.context().close();
});

test('Cancel during a checkpoint\'s load: no further request, the checkpoints read stay drawn, the view\'s model stays', async () => {
  const { page, problems } = await openPythia();
  // step4000's config.json held: the run stays in that checkpoint's load until cancelled.
  hub.reset();
  hub.hold(`/${PYTHIA_ID}/resolve/step4000/config.json`);
  await page.click('#model-training-run');
  await page.waitForFunction(() => document.body.dataset.trainingDone === '3', null, { timeout: 60000 });
  const deadline = Date.now() + 10000;
  while (hub.count('hub', '/resolve/step4000/config.json') === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(hub.count('hub', '/resolve/step4000/config.json'), 1);
  assert.match(await page.textContent('#model-training-status'), /^step4000: asking pythia-70m's files · checkpoint 4 of 9$/);
  const asked = hub.requests.length;
  await page.click('#model-training-cancel');
  await page.waitForFunction(() => document.body.dataset.trainingRun === 'cancelled', null, { timeout: 30000 });
  hub.release();
  await page.waitForTimeout(500);
  // Nothing asked after the cancel: no later checkpoint, not even step4000's weights.
  assert.deepEqual(hub.requests.slice(asked).map((r) => r.path), []);
  for (const revision of PYTHIA_STEPS.slice(4)) assert.equal(hub.count('hub', `/resolve/${revision}/config.json`), 0, revision);
  assert.equal(hub.count('hub', '/resolve/step4000/model.safetensors'), 0);
  assert.equal(await page.textContent('#model-training-status'), 'Cancelled: 3 of 9 checkpoints read.');
  assert.equal(await page.locator('#model-training-error').isHidden(), true);
  // The three read stay drawn, the API's numbers; Run is offered again, Cancel gone.
  assert.deepEqual(await page.$$eval('#model-training-strip .model-training-tile', (tiles) => tiles.map((t) => t.dataset.revision)),
    PYTHIA_STEPS.slice(0, 3));
  await assertStripIsApis(page, PYTHIA_STEPS.slice(0, 3), 'induction');
  assert.equal(await page.isEnabled('#model-training-run'), true);
  assert.equal(await page.locator('#model-training-cancel').isHidden(), true);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'model-training-run', 'the focus Cancel had goes back to Run');
  assert.equal(await page.getAttribute('body', 'data-model-name'), PYTHIA_ID);
  assert.equal(await page.locator('#model-error').isHidden(), true);
  assert.deepEqual(realProblems(problems), []);
  await page.context().close();
});

test('Pythia-160m\'s layout (12 layers × 12 heads): three ticked checkpoints drawn as the API computes, readable at 1280 and 375 px', async () => {
  const { page, problems } = await openPythia({ width: 1280, height: 900 }, BIG_ID);
  // Only step0, step1000 and step143000 ticked (the stand-in serves no other revision of it).
  for (const box of await page.$$('#model-training-checks input')) {
    if (!BIG_STEPS.includes(await box.getAttribute('value'))) await box.uncheck();
  }
  assert.equal(await run(page), 'done');
  assert.deepEqual(await page.$$eval('#model-training-strip .model-training-tile', (tiles) => tiles.map((t) => t.dataset.revision)), BIG_STEPS);
  for (const revision of BIG_STEPS) {
    const rows = await drawn(page, revision);
    assert.equal(rows.length, 12);
    for (const s of bigExpected[revision]) {
      assert.ok(Math.abs(rows[s.layer][s.head] - s.induction) <= 5.1e-5 + 1e-3 * Math.abs(s.induction), `${revision} L${s.layer} H${s.head}`);
    }
  }
  // Each checkpoint's heatmap square, its cells at least 6 px.
  const sizes = await page.$$eval('#model-training-strip canvas', (canvases) => canvases.map((c) => [c.getBoundingClientRect().width, c.getBoundingClientRect().height]));
  for (const [w, h] of sizes) assert.ok(Math.abs(w - h) <= 1 && w >= 72, `${w} × ${h}`);
  await page.locator('#model-training').screenshot({ path: join(screenshotDir, 'training-160m-desktop.png') });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(400);
  const phone = await phoneFits(page);
  assert.ok(phone.scroll <= phone.inner, `the page is ${phone.scroll} px wide in a ${phone.inner} px viewport`);
  assert.deepEqual(phone.outside, []);
  await page.locator('#model-training').screenshot({ path: join(screenshotDir, 'training-160m-phone.png') });
  assert.deepEqual(realProblems(problems), []);
  await page.context().close();
});

test('the strip is offered only for a listed model with training checkpoints', async () => {
  const opened = await openPage(chrome.browser, server.url);
  const { page } = opened;
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'english');
  assert.equal(await page.locator('#model-training').isHidden(), true);
  await page.fill('#model-hub-id', 'org/small');
  await page.click('#model-hub-load');
  await page.waitForSelector('body[data-model-name="org/small"]', { timeout: 30000 });
  assert.equal(await page.locator('#model-training').isHidden(), true);
  await page.context().close();
});
