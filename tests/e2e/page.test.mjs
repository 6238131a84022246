// The page in Chromium, driven as a reader would: type, step through every stage, hover cells,
// switch masks / heads / encodings, load weights, share a link. What the page draws is checked
// against the JS API (dist/attention-lens.mjs) computing the same state in the same browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, hoverCell, openPage, screenshotDir, withRandomWeights } from './browser.mjs';
import { numpyPath, readSafetensors } from '../js/support.mjs';

const live = browserFixture();

async function open(hash = '', viewport) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
  await page.goto(live.server.url + withRandomWeights(hash));
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return { page, problems };
}

/** Waits until the page has drawn a result for `tokens` queries (and the stage has a heatmap). */
async function settled(page) {
  await page.waitForFunction(() => document.querySelector('#matrices canvas') !== null);
  await page.waitForTimeout(50);
  // Screen-reader tables are built when the browser is idle.
  await page.waitForFunction(() => [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready'));
}

/** The numbers of every heatmap in the walkthrough, read from its screen-reader table. */
function drawnMatrices(page) {
  return page.evaluate(() => [...document.querySelectorAll('#matrices .matrix-slot')].map((slot) => {
    const canvas = slot.querySelector('canvas');
    const rows = [...slot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')]
      .map((td) => (td.textContent === '−∞' ? -Infinity : Number(td.textContent))));
    return { step: slot.dataset.step, head: Number(slot.dataset.head), rows: Number(canvas.dataset.rows),
      cols: Number(canvas.dataset.cols), values: rows };
  }));
}

/** The same state computed with the public API in the page: attention [heads, n, n] and steps. */
function apiForward(page, { text, dModel = 64, heads = 4, seed = 42, positional = 'sinusoidal', mask = 'none' }) {
  return page.evaluate(async (args) => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: args.dModel, heads: args.heads, seed: args.seed, positional: args.positional });
    const { tokens, ids } = lens.tokenize(args.text, { mode: 'word' });
    const r = layer.forward(layer.embed(ids), { n: tokens.length, mask: args.mask, trace: true });
    layer.dispose();
    return { tokens, attention: Array.from(r.attention),
      steps: r.steps.map((s) => ({ id: s.id, head: s.head, shape: s.shape, data: Array.from(s.data, (v) => (Number.isFinite(v) ? v : null)) })) };
  }, { text, dModel, heads, seed, positional, mask });
}

function assertMatrixClose(drawn, want, what) {
  const flat = drawn.values.flat();
  assert.equal(flat.length, want.length, `${what}: ${flat.length} values drawn, ${want.length} computed`);
  for (let i = 0; i < want.length; ++i) {
    if (want[i] === null) {
      assert.equal(flat[i], -Infinity, `${what}[${i}] should be masked`);
    } else {
      const tol = 1e-4 + 1e-3 * Math.abs(want[i]);
      assert.ok(Math.abs(flat[i] - want[i]) <= tol, `${what}[${i}]: drawn ${flat[i]}, API ${want[i]}`);
    }
  }
}

test('a bare link opens on the english trained model and says so; model=random in the link is random weights', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(live.server.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await settled(page);
  assert.equal(await page.inputValue('#model'), 'english');
  assert.equal(await page.locator('#walkthrough').getAttribute('data-model'), 'english');
  assert.match(await page.textContent('#model-badge'), /^Trained model: English characters .* · layer 1 of 2 · causal, characters$/);
  assert.equal(await page.inputValue('#text'), 'the bank will not loan money');
  assert.equal(await page.locator('#tokens .chip').count(), 'the bank will not loan money'.length, 'one token per character');
  assert.equal(new URL(page.url()).hash, '', 'the page\'s defaults make no hash');
  // Random weights: model=random in the link, which opens on them again.
  await page.selectOption('#model', '');
  await page.waitForFunction(() => document.querySelector('#walkthrough').dataset.model === '' && location.hash.includes('model=random'));
  assert.match(await page.textContent('#model-badge'), /^Random weights \(seed 42\)$/);
  const link = page.url();
  const second = await openPage(live.chrome.browser, live.server.url);
  await second.page.goto(link);
  await second.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await settled(second.page);
  assert.equal(await second.page.inputValue('#model'), '');
  assert.deepEqual(await second.page.locator('#tokens .chip').allTextContents(), ['the', 'bank', 'will', 'not', 'loan', 'money']);
  assert.deepEqual(second.problems(), []);
  await second.page.context().close();
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('typing a sentence shows its tokens as chips and an n×n weights heatmap equal to the API', async () => {
  const { page, problems } = await open();
  await settled(page);
  assert.deepEqual(await page.locator('#tokens .chip').allTextContents(), ['The', 'bank', 'will', 'not', 'loan', 'money']);
  await page.fill('#text', 'The boat reached the bank.');
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length === 6 &&
    document.querySelector('#tokens .chip:nth-child(2)').textContent === 'boat');
  await settled(page);
  const [weights] = await drawnMatrices(page);
  assert.equal(weights.step, 'weights');
  assert.equal(weights.rows, 6);
  assert.equal(weights.cols, 6);
  const api = await apiForward(page, { text: 'The boat reached the bank.' });
  assertMatrixClose(weights, api.attention.slice(0, 36), 'weights head 1');
  for (const row of weights.values) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3, 'rows sum to 1');
  await page.screenshot({ path: join(screenshotDir, 'page-typed-desktop.png'), fullPage: true });
  assert.deepEqual(problems(), []);
});

test('stepping through every stage shows each traced step, equal to the API', async () => {
  const { page, problems } = await open('#stage=embedding');
  await settled(page);
  const api = await apiForward(page, { text: 'The bank will not loan money' });
  const stages = await page.locator('#stage-list button').evaluateAll((bs) => bs.map((b) => b.dataset.stage));
  assert.deepEqual(stages, ['embedding', 'positional', 'qkv', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'output']);
  const seen = [];
  for (let i = 0; i < stages.length; ++i) {
    await page.waitForFunction((id) => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === id, stages[i]);
    await settled(page);
    const title = await page.locator('#stage-title').textContent();
    assert.ok(title.length > 3, `stage ${stages[i]} has a title`);
    assert.ok(await page.locator('#equation .katex').count() >= 1, `stage ${stages[i]} typesets its equation`);
    for (const drawn of await drawnMatrices(page)) {
      const step = api.steps.find((s) => s.id === drawn.step && (s.head === -1 || s.head === 0));
      assert.ok(step, `the API traced ${drawn.step}`);
      assert.deepEqual([drawn.rows, drawn.cols], step.shape, `${drawn.step} shape`);
      assertMatrixClose(drawn, step.data, `${drawn.step}`);
      seen.push(drawn.step);
    }
    // Alternate the button and the keyboard to go on.
    if (i % 2 === 0) await page.click('#next');
    else {
      await page.locator('#stage-title').click();
      await page.keyboard.press('ArrowRight');
    }
  }
  assert.deepEqual(seen, ['embedding', 'positional', 'input', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights',
    'context', 'concat', 'output']);
  assert.deepEqual(problems(), []);
});

test('the numbers shown for a cell equal the API\'s, term by term', async () => {
  const { page, problems } = await open('#stage=scores&head=1');
  await settled(page);
  const api = await apiForward(page, { text: 'The bank will not loan money' });
  await hoverCell(page, 0, 2, 4);
  await page.waitForSelector('[data-testid="cell-value"]');
  const shown = Number(await page.locator('[data-testid="cell-value"]').getAttribute('data-value'));
  const scores = api.steps.find((s) => s.id === 'scores' && s.head === 1);
  assert.ok(Math.abs(shown - scores.data[2 * 6 + 4]) < 1e-6, `shown ${shown}, API ${scores.data[2 * 6 + 4]}`);
  // The terms are q_2[t] · k_4[t] over d_k = 16 dimensions of head 2.
  const terms = await page.locator('#inspector table.terms tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  assert.equal(terms.length, 16);
  const q = api.steps.find((s) => s.id === 'q' && s.head === 1).data;
  const k = api.steps.find((s) => s.id === 'k' && s.head === 1).data;
  terms.forEach(([t, left, right], i) => {
    assert.equal(t, i);
    assert.ok(Math.abs(left - q[2 * 16 + t]) < 1e-5, `q term ${t}`);
    assert.ok(Math.abs(right - k[4 * 16 + t]) < 1e-5, `k term ${t}`);
  });
  // Keyboard: focus the heatmap and move right; the inspector follows the focused cell.
  await page.mouse.move(1, 1);
  await page.locator('#matrices canvas').first().focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => /i = 0\).*j = 1\)/.test(document.querySelector('.inspector-where')?.textContent ?? ''));
  assert.deepEqual(problems(), []);
});

test('switching masks, heads and encodings changes what is drawn', async () => {
  const { page, problems } = await open();
  await settled(page);
  await page.selectOption('#mask', 'causal');
  await page.waitForFunction(() => location.hash.includes('mask=causal'));
  await settled(page);
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('#matrices tbody tr:first-child td')];
    return cells.length === 6 && Number(cells[5].textContent) === 0;
  });
  const [causal] = await drawnMatrices(page);
  causal.values.forEach((row, i) => row.forEach((v, j) => { if (j > i) assert.equal(v, 0, `(${i}, ${j}) is masked`); }));
  const api = await apiForward(page, { text: 'The bank will not loan money', mask: 'causal' });
  assertMatrixClose(causal, api.attention.slice(0, 36), 'causal weights');

  await page.selectOption('#heads', '8');
  await page.waitForFunction(() => document.querySelectorAll('#heads-view .head-tile').length === 8);
  assert.equal(await page.locator('#head-picker button').count(), 8);

  await page.selectOption('#positional', 'rope');
  await page.waitForSelector('#stage-list [data-stage="rope"]');
  assert.equal(await page.locator('#stage-list [data-stage="positional"]').count(), 0);
  await page.selectOption('#positional', 'alibi');
  await page.waitForSelector('#stage-list [data-stage="alibi"]');

  await page.selectOption('#mask', 'sliding-window');
  await page.fill('#window', '2');
  await page.waitForFunction(() => location.hash.includes('window=2'));
  await settled(page);
  await page.waitForFunction(() => Number(document.querySelector('#matrices tbody tr:nth-child(4) td:nth-child(2)')?.textContent) === 0);
  const [windowed] = await drawnMatrices(page);
  windowed.values.forEach((row, i) => row.forEach((v, j) => {
    if (j > i || i - j >= 2) assert.equal(v, 0, `(${i}, ${j}) is outside the window`);
    else assert.ok(v > 0, `(${i}, ${j}) is inside the window`);
  }));

  // Click cells to mask them.
  await page.selectOption('#mask', 'none');
  await page.check('#cellmask');
  await settled(page);
  const canvas = page.locator('#matrices canvas').first();
  const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell }));
  await canvas.click({ position: { x: g.left + 3.5 * g.cell, y: g.top + 1.5 * g.cell } });
  await page.waitForFunction(() => location.hash.includes('cells=1.3'));
  await page.waitForFunction(() => Number(document.querySelector('#matrices tbody tr:nth-child(2) td:nth-child(5)')?.textContent) === 0);
  assert.deepEqual(problems(), []);
});

test('the line view and the small multiples draw every head; clicking one focuses it', async () => {
  const { page, problems } = await open('#heads=2');
  await settled(page);
  assert.equal(await page.locator('#heads-view .head-tile').count(), 2);
  await page.click('#heads-view .head-tile:nth-child(2) .head-button');
  await page.waitForFunction(() => location.hash.includes('head=1'));
  assert.equal(await page.locator('#matrices .matrix-slot').getAttribute('data-head'), '1');
  await page.click('#view-lines');
  await page.waitForSelector('#heads-view svg line', { state: 'attached' });
  assert.ok(await page.locator('#heads-view svg line').count() >= 6, 'at least one line per query');
  assert.deepEqual(problems(), []);
});

test('a .safetensors file loads (and a broken one gives an error and keeps the last good state)', async () => {
  const { page, problems } = await open();
  await settled(page);
  // A file made with the API: the same shape, seed 7's weights.
  const { bytes, attention } = await page.evaluate(async () => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: 64, heads: 4, seed: 7, positional: 'sinusoidal' });
    const saved = layer.saveSafetensors();
    const { tokens, ids } = lens.tokenize('The bank will not loan money');
    const r = layer.forward(layer.embed(ids), { n: tokens.length });
    layer.dispose();
    return { bytes: Array.from(saved), attention: Array.from(r.attention) };
  });
  // Embeddings come from the page's seed (42), the weights from the file (seed 7): compare the
  // drawn weights against the API with that mix.
  const want = await page.evaluate(async (fileBytes) => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: 64, heads: 4, seed: 42, positional: 'sinusoidal' });
    layer.loadSafetensors(Uint8Array.from(fileBytes));
    const { tokens, ids } = lens.tokenize('The bank will not loan money');
    const r = layer.forward(layer.embed(ids), { n: tokens.length });
    layer.dispose();
    return Array.from(r.attention);
  }, bytes);
  assert.notDeepEqual(want, attention, 'embedding seeds differ');
  await page.setInputFiles('#weights-file', { name: 'seed7.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
  await page.waitForFunction(() => document.querySelector('#weights-status').textContent.includes('seed7.safetensors'));
  await settled(page);
  const [weights] = await drawnMatrices(page);
  assertMatrixClose(weights, want.slice(0, 36), 'weights from the file');

  await page.setInputFiles('#weights-file', { name: 'broken.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from([1, 2, 3]) });
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.locator('#error').textContent(), /broken\.safetensors/);
  const [still] = await drawnMatrices(page);
  assert.deepEqual(still.values, weights.values, 'the last good result stays on screen');
  assert.deepEqual(problems(), []);
});

/** Hovers cell (row, col) of the first heatmap and reads the value the inspector shows. */
async function inspectedValue(page, row, col) {
  await hoverCell(page, 0, row, col);
  await page.waitForFunction(([i, j]) => new RegExp(`i = ${i}\\).*j = ${j}\\)`)
    .test(document.querySelector('.inspector-where')?.textContent ?? ''), [row, col]);
  return Number(await page.locator('[data-testid="cell-value"]').getAttribute('data-value'));
}

test('small inputs compute on the main thread, larger ones in the worker: both equal the API, and loaded weights follow', async () => {
  const { page, problems } = await open('#stage=weights');
  await settled(page);
  const status = () => page.locator('#status').textContent();
  assert.match(await status(), /6 tokens .* on the main thread/);
  const long = Array.from({ length: 400 }, (_, i) => `t${i}`).join(' '); // 84 M flops at d_model 64: the worker's
  // The API's weights for head 1 with the seeded weights, or with seed 7's from a file.
  const want = (text, file) => page.evaluate(async ({ text, file }) => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: 64, heads: 4, seed: 42, positional: 'sinusoidal' });
    if (file) {
      const other = lens.createLayer({ dModel: 64, heads: 4, seed: 7, positional: 'sinusoidal' });
      layer.loadSafetensors(other.saveSafetensors());
      other.dispose();
    }
    const { tokens, ids } = lens.tokenize(text);
    const r = layer.forward(layer.embed(ids), { n: tokens.length });
    layer.dispose();
    return { n: tokens.length, head1: Array.from(r.attention.subarray(0, tokens.length * tokens.length)) };
  }, { text, file });
  const checkCells = async (expected, cells, what) => {
    for (const [i, j] of cells) {
      const shown = await inspectedValue(page, i, j);
      const api = expected.head1[i * expected.n + j];
      assert.ok(Math.abs(shown - api) <= 1e-6 + 1e-4 * api, `${what} (${i}, ${j}): shown ${shown}, API ${api}`);
    }
  };
  const showLong = async () => {
    await page.fill('#text', long);
    await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '400');
    assert.match(await status(), /400 tokens .* in the worker/);
    // Two pixels per cell, so a pointer lands on the cell it aims at (one-pixel cells round).
    if (Number(await page.locator('#matrices canvas').first().getAttribute('data-cell')) < 2) await page.click('[aria-label="Zoom in"]');
  };
  const showShort = async () => {
    await page.fill('#text', 'The boat reached the bank.');
    await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '6');
    assert.match(await status(), /on the main thread/);
  };

  // Seeded weights: the worker's numbers (and its inspector) equal the API's.
  await showLong();
  await checkCells(await want(long, false), [[2, 1], [150, 17], [60, 120]], 'worker, seeded');
  // A file loaded while the input is small (on the main thread) is used by the worker too.
  const fileBytes = await page.evaluate(async () => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const layer = (await loadAttentionLens()).createLayer({ dModel: 64, heads: 4, seed: 7, positional: 'sinusoidal' });
    const bytes = Array.from(layer.saveSafetensors());
    layer.dispose();
    return bytes;
  });
  await showShort();
  await page.setInputFiles('#weights-file', { name: 'seed7.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(fileBytes) });
  await page.waitForFunction(() => document.querySelector('#weights-status').textContent.includes('seed7.safetensors'));
  await settled(page);
  const shortFile = await want('The boat reached the bank.', true);
  assertMatrixClose((await drawnMatrices(page))[0], shortFile.head1, 'main thread, file');
  await showLong();
  assert.match(await page.locator('#weights-status').textContent(), /seed7\.safetensors/);
  await checkCells(await want(long, true), [[2, 1], [150, 17]], 'worker, file');
  // Back to the seeded weights while the worker computes: the main thread follows.
  await page.click('#weights-clear');
  await page.waitForFunction(() => document.querySelector('#weights-status').textContent.includes('Seeded'));
  await checkCells(await want(long, false), [[2, 1]], 'worker, seeded again');
  await showShort();
  await settled(page);
  assertMatrixClose((await drawnMatrices(page))[0], (await want('The boat reached the bank.', false)).head1, 'main thread, seeded again');
  assert.deepEqual(problems(), []);
});

test('a shared URL restores the same state', async () => {
  const { page, problems } = await open();
  await settled(page);
  await page.fill('#text', 'The cat sat on the mat');
  await page.selectOption('#heads', '2');
  await page.selectOption('#mask', 'causal');
  await page.selectOption('#positional', 'learned');
  await page.click('#stage-list [data-stage="scores"]');
  await page.click('#head-picker button:nth-of-type(2)');
  await page.waitForFunction(() => location.hash.includes('head=1') && location.hash.includes('stage=scores'));
  await settled(page);
  const url = page.url();
  const before = await drawnMatrices(page);
  const second = await open(url.slice(live.server.url.length));
  await settled(second.page);
  assert.equal(await second.page.inputValue('#text'), 'The cat sat on the mat');
  assert.equal(await second.page.inputValue('#heads'), '2');
  assert.equal(await second.page.inputValue('#mask'), 'causal');
  assert.equal(await second.page.inputValue('#positional'), 'learned');
  assert.equal(await second.page.locator('#stage-list [aria-current="step"]').getAttribute('data-stage'), 'scores');
  assert.deepEqual(await drawnMatrices(second.page), before);
  assert.deepEqual(problems(), []);
  assert.deepEqual(second.problems(), []);
});

test('a hostile link is shown as text, runs nothing, and invalid fields are reported', async () => {
  const hostile = '<img src=x onerror="window.__pwned=1">';
  const hash = `#text=${encodeURIComponent(hostile)}&heads=banana&evil=1&stage=${encodeURIComponent('javascript:alert(1)')}`;
  const { page, problems } = await open(hash);
  await settled(page);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('img').count(), 0);
  const chips = await page.locator('#tokens .chip').allTextContents();
  assert.ok(chips.join('').includes('<imgsrc=xonerror='), `tokens shown as text: ${chips}`);
  assert.match(await page.locator('#notice').textContent(), /heads.*evil.*stage|Ignored/);
  assert.deepEqual(problems(), []);
});

test('tutorial preset 004 prints the same attention weights as the tutorial\'s NumPy code', async () => {
  const { metadata } = readSafetensors(numpyPath('seed004_single_head'));
  const { page, problems } = await open('#preset=seed004-single');
  await page.waitForFunction(() => document.querySelector('#printout').textContent.includes('Attention weights'));
  const printed = await page.locator('#printout').textContent();
  assert.equal(printed, `Input shape: (4, 8)\nOutput shape: (4, 8)\nAttention weights:\n ${metadata.printed_weights}`);
  const { page: p1, problems: problems1 } = await open('#preset=seed001-causal');
  await p1.waitForFunction(() => document.querySelector('#printout').textContent.length > 0);
  assert.equal(await p1.locator('#printout').textContent(), readSafetensors(numpyPath('seed001_causal')).metadata.printed);
  assert.deepEqual(problems(), []);
  assert.deepEqual(problems1(), []);
});

test('bad settings show a readable error and the last good state stays', async () => {
  const { page, problems } = await open();
  await settled(page);
  const before = await drawnMatrices(page);
  await page.selectOption('#dModel', '8');
  await page.selectOption('#heads', '16');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.locator('#error').textContent(), /heads must divide dModel/);
  await page.selectOption('#heads', '4');
  await page.waitForSelector('#error', { state: 'hidden' });
  await settled(page); // the screen-reader tables (read below) are built when the browser is idle
  const after8 = await drawnMatrices(page);
  assert.notDeepEqual(after8, before);
  await page.fill('#text', '   ');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.locator('#error').textContent(), /no tokens/);
  assert.deepEqual(await drawnMatrices(page), after8, 'the last good heatmap stays');
  assert.deepEqual(problems(), []);
});

test('the page fits a 375-px phone and a dark theme', async () => {
  const { page, problems } = await open('', { width: 375, height: 800 });
  await settled(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  await page.screenshot({ path: join(screenshotDir, 'page-phone.png'), fullPage: true });
  // A long input too: wide heatmaps scroll inside their frame, long counts wrap.
  await page.fill('#text', Array.from({ length: 400 }, (_, i) => `w${i}`).join(' '));
  await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '400');
  const longOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(longOverflow <= 0, `with 400 tokens the page is ${longOverflow}px wider than the screen`);
  await page.click('#theme'); // auto -> light
  await page.click('#theme'); // light -> dark
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(17, 19, 24)');
  assert.deepEqual(problems(), []);
});

test('cross-attention, padding and scaling off draw the shapes and numbers they should', async () => {
  const { page, problems } = await open('#stage=weights');
  await settled(page);
  await page.check('#cross');
  await page.fill('#source', 'The boat reached the bank');
  await page.waitForFunction(() => document.querySelectorAll('#source-tokens .chip').length === 5);
  await settled(page);
  let [weights] = await drawnMatrices(page);
  assert.deepEqual([weights.rows, weights.cols], [6, 5], 'queries from the text, keys from the source');

  await page.selectOption('#mask', 'padding');
  await page.fill('#padTo', '8');
  await page.waitForFunction(() => document.querySelectorAll('#source-tokens .chip.pad').length === 3);
  await settled(page);
  [weights] = await drawnMatrices(page);
  assert.deepEqual([weights.rows, weights.cols], [6, 8]);
  for (const row of weights.values) {
    assert.deepEqual(row.slice(5), [0, 0, 0], 'padded keys get no weight');
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3);
  }

  await page.uncheck('#cross');
  await page.selectOption('#mask', 'none');
  await page.uncheck('#scale');
  await page.click('#stage-list [data-stage="scaled"]');
  await page.waitForFunction(() => location.hash.includes('scale=0') && location.hash.includes('stage=scaled'));
  await settled(page);
  assert.match(await page.locator('#equation').textContent(), /scaling off/);
  const api = await page.evaluate(async () => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: 64, heads: 4, seed: 42, positional: 'sinusoidal' });
    const { tokens, ids } = lens.tokenize('The bank will not loan money');
    const r = layer.forward(layer.embed(ids), { n: tokens.length, scale: false, trace: true });
    layer.dispose();
    return Array.from(r.steps.find((s) => s.id === 'scores' && s.head === 0).data);
  });
  [weights] = await drawnMatrices(page);
  assertMatrixClose(weights, api, 'unscaled scores = QKᵀ');
  assert.deepEqual(problems(), []);
});

test('PNG, JSON and CSV downloads and the Embed dialog', async () => {
  const { page, problems } = await open('#mask=causal');
  await settled(page);
  const saved = async (selector) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    const stream = await download.createReadStream();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    return { name: download.suggestedFilename(), bytes: Buffer.concat(chunks) };
  };
  const png = await saved('[data-export="weights-png"]');
  assert.equal(png.name, 'weights-head1@2x.png'); // the PNG scale's default, 2×
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const json = JSON.parse((await saved('[data-export="weights-json"]')).bytes.toString('utf8'));
  assert.equal(json.id, 'weights');
  assert.deepEqual(json.shape, [6, 6]);
  assert.deepEqual(json.cols.labels, ['The', 'bank', 'will', 'not', 'loan', 'money']);
  const [drawn] = await drawnMatrices(page);
  assertMatrixClose(drawn, json.data.flat(), 'JSON export');
  const csv = (await saved('[data-export="weights-csv"]')).bytes.toString('utf8').trim().split('\n');
  assert.equal(csv.length, 7);
  assert.equal(csv[0], 'query \\ key,The,bank,will,not,loan,money');
  assert.equal(Number(csv[1].split(',')[2]), 0, 'causal: the first query sees only itself');

  await page.click('#embed');
  const snippet = await page.inputValue('#embed-element');
  assert.match(snippet, /<attention-lens [^>]*text="The bank will not loan money"[^>]*mask="causal"/);
  assert.match(await page.inputValue('#embed-iframe'), /<iframe src="http:\/\/127\.0\.0\.1:\d+\/#mask=causal&amp;model=random"/); // the page link keeps random weights
  await page.click('#embed-close');
  assert.deepEqual(problems(), []);
});

test('2048 tokens: the weights of every head are drawn at full resolution, zoomable', async () => {
  const text = Array.from({ length: 2048 }, (_, i) => `w${i % 50}`).join(' ');
  const { page, problems } = await open(`#text=${encodeURIComponent(text)}&heads=4&mask=causal`);
  await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '2048', null, { timeout: 60000 });
  // 2048² cells is the most a one-head trace holds: every stage is still there.
  assert.ok(await page.locator('#stage-list [data-stage="scores"]').count() === 1);
  await page.click('#stage-list [data-stage="weights"]');
  await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '2048');
  assert.equal(await page.locator('#heads-view .head-tile').count(), 4);
  const canvas = page.locator('#matrices canvas').first();
  const cell = async () => Number(await canvas.getAttribute('data-cell'));
  const fitted = await cell();
  assert.ok(fitted >= 1, 'at least one pixel per cell');
  await page.click('[aria-label="Zoom in"]');
  assert.equal(await cell(), fitted * 2);
  await page.click('[aria-label="Fit the width"]');
  assert.equal(await cell(), fitted);
  assert.equal(await page.locator('#tokens .more-tokens').textContent(), '… 2024 more'); // collapsed chips
  // Every head is drawn from the core's max-pooled preview; the line view says it stops at 256 tokens.
  assert.match(await page.locator('#heads-view canvas').first().getAttribute('aria-label'),
    /2048 query rows by 2048 key columns, drawn max-pooled to 256 × 256/);
  await page.click('#view-lines');
  await page.waitForFunction(() => /line view draws inputs of up to 256 tokens/.test(document.querySelector('#heads-view').textContent));
  await page.click('#view-grid');
  await page.waitForSelector('#heads-view canvas');
  // Typing still works at this size.
  await page.focus('#text');
  await page.keyboard.press('End');
  await page.keyboard.type(' z');
  await page.waitForFunction(() => document.querySelector('#matrices canvas')?.dataset.rows === '2049', null, { timeout: 60000 });
  assert.match(await page.locator('#notice').textContent(), /too large to trace every step/);
  assert.deepEqual(problems(), []);
});

test('the Weights menu switches to a shipped trained model: its layer\'s heads, equal to model.forward()', async () => {
  const { page, problems } = await open();
  await settled(page);
  assert.match(await page.textContent('#model-badge'), /Random weights \(seed 42\)/);
  await page.selectOption('#model', 'induction');
  await page.waitForSelector('#walkthrough[data-model="induction"]');
  await settled(page);
  assert.equal(await page.inputValue('#text'), 'qwertyuiopqwertyuiop');
  assert.match(await page.textContent('#model-badge'), /Trained model: Induction heads \(2 layers\) · layer 1 of 2/);
  assert.equal(await page.isVisible('#layer'), true);
  await page.selectOption('#layer', { value: '1' }); // layer 2 (its label)
  await page.waitForFunction(() => /layer 2 of 2/.test(document.querySelector('#model-badge').textContent));
  // The same state from a link: layer 2 (0-based 1), head 4 (0-based 3).
  const text = 'qwertyuiopqwertyuiop';
  const { page: linked } = await open(`#model=induction&layer=1&head=3&text=${text}`);
  await settled(linked);
  const [weights] = await drawnMatrices(linked);
  assert.equal(weights.head, 3);
  const want = await linked.evaluate(async (t) => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    const model = await lens.trainedModel('induction');
    const ids = model.encode(t);
    const a = model.forward(ids, { n: ids.length }).attention[1];
    const n = ids.length;
    return Array.from(a.subarray(3 * n * n, 4 * n * n));
  }, text);
  assertMatrixClose(weights, want, 'induction layer 2 head 4');
  for (let i = 10; i < 20; ++i) assert.ok(weights.values[i][i - 9] > 0.5, `query ${i} attends to the token after its earlier copy`);
  await linked.screenshot({ path: join(screenshotDir, 'page-trained-induction-desktop.png'), fullPage: true });
  // Back to random weights.
  await linked.selectOption('#model', { value: '' });
  await linked.waitForSelector('#walkthrough[data-model=""]');
  assert.match(await linked.textContent('#model-badge'), /Random weights/);
  assert.deepEqual(problems(), []);
});
