// Figure exports in Chromium (shared/exporting.js's buttons, shared/svg-figure.js's SVG): a
// walkthrough heatmap's SVG, rendered by the browser as an image, matches the page's canvas drawing
// of it; its labels are the tokens; PNG at 2× has twice the pixels of 1× on each side; Copy figure
// puts the SVG's markup on the clipboard; a Circuits map (the logit lens, a token per cell) exports
// SVG whose cells' tokens are the drawn ones; the Your model view's head grid exports one SVG of every
// head and the Train view's loss plot one of its lines and key. A screenshot of an exported SVG at 1280 px wide is
// written to build/screenshots/figure-svg.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, openPage, screenshotDir, withRandomWeights } from './browser.mjs';
import { circuitsState, circuitsTable } from './circuits-fixture.mjs';

const live = browserFixture();

async function open(hash) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(live.server.url + hash);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return { page, problems };
}

/** Clicks `selector` and returns the download it starts: { name, bytes }. */
async function saved(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const chunks = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk);
  return { name: download.suggestedFilename(), bytes: Buffer.concat(chunks) };
}

/** A PNG's [width, height] from its IHDR chunk. */
const pngSize = (bytes) => [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];

/**
 * In the page: the SVG (markup) drawn as an image to a canvas at 1 px per SVG px, its matrix area
 * (the figure's 12 px margin, 24 px title) compared with the heatmap's canvas `canvasSelector`,
 * pixel by pixel: { width, height, far (pixels differing by more than 48 in a channel: text and
 * anti-aliased edges), cells: the largest difference at a point 5 px inside each cell's top-left corner }.
 */
function compareWithCanvas({ svg, canvasSelector }) {
  return (async () => {
    const canvas = document.querySelector(canvasSelector);
    const { left, top, cell, rows, cols } = Object.fromEntries(Object.entries(canvas.dataset).map(([k, v]) => [k, Number(v)]));
    const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
    const image = new Image();
    image.src = url;
    await image.decode();
    const drawn = document.createElement('canvas');
    drawn.width = image.naturalWidth;
    drawn.height = image.naturalHeight;
    const ctx = drawn.getContext('2d');
    ctx.drawImage(image, 0, 0);
    const { width, height } = canvas;
    const ours = ctx.getImageData(12, 36, width, height).data;
    const theirs = canvas.getContext('2d').getImageData(0, 0, width, height).data;
    const difference = (i) => Math.max(Math.abs(ours[i] - theirs[i]), Math.abs(ours[i + 1] - theirs[i + 1]), Math.abs(ours[i + 2] - theirs[i + 2]));
    let far = 0;
    for (let i = 0; i < ours.length; i += 4) if (difference(i) > 48) ++far;
    let cells = 0;
    for (let r = 0; r < rows; ++r) {
      for (let c = 0; c < cols; ++c) cells = Math.max(cells, difference(4 * ((top + r * cell + 5) * width + left + c * cell + 5)));
    }
    return { ratio: devicePixelRatio, width, height, svgSize: [image.naturalWidth, image.naturalHeight], far, cells };
  })();
}

/** In the page: the SVG parsed (DOMParser): whether it parsed, its label texts, metadata and cell texts. */
function readSvg(svg) {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const texts = (selector) => [...doc.querySelectorAll(selector)].map((t) => t.textContent);
  return { error: doc.querySelector('parsererror')?.textContent ?? '', root: doc.documentElement.localName,
    labels: texts('g.labels > text'), cellTexts: texts('g.matrix > g[text-anchor="middle"] > text'), scripts: doc.querySelectorAll('script').length,
    metadata: JSON.parse(doc.querySelector('metadata')?.textContent ?? 'null') };
}

test('a walkthrough heatmap exports SVG that matches its canvas, PNG at 1× / 2× / 3×, and Copy figure', async () => {
  const text = '<b>bold</b> a&b "q" שלום 🦊 money';
  const { page, problems } = await open(withRandomWeights(`#text=${encodeURIComponent(text)}&mask=causal&stage=masked&cells=3.1`));
  await page.waitForFunction(() => document.querySelector('#matrices figure')?.dataset.table === 'ready');
  const svg = await saved(page, '[data-export="masked-svg"]');
  assert.equal(svg.name, 'masked-head1.svg');
  const markup = svg.bytes.toString('utf8');
  const read = await page.evaluate(readSvg, markup);
  assert.equal(read.error, '', 'the SVG parses');
  assert.equal(read.root, 'svg');
  assert.equal(read.scripts, 0, 'token text never becomes an element');
  // The word tokenizer splits punctuation off: the tokens are the ones the page drew (its table's column heads).
  const drawnTokens = await page.evaluate(() => [...document.querySelectorAll('#matrices figure thead th')].slice(1).map((th) => th.textContent));
  for (const hostile of ['<', '&', '"', 'שלום', '🦊']) assert.ok(drawnTokens.includes(hostile), hostile);
  assert.deepEqual(read.labels, [...drawnTokens, ...drawnTokens], 'row then column labels: the tokens');
  assert.equal(read.metadata.view, 'walkthrough');
  assert.equal(read.metadata.text, text);
  assert.equal(read.metadata.settings.mask, 'causal');
  assert.match(read.metadata.version, /^\d+\.\d+\.\d+/, 'package.json\'s version');

  // The SVG drawn by Chromium against the canvas: every cell's colour within 2 (the same colour;
  // one or two counts of rounding in the SVG rasteriser), and at most 2 % of the pixels (0.75 % measured) more than
  // 48 apart — text (labels, numbers in cells) is anti-aliased by two different text renderers,
  // and the hatching's and outlines' edges are anti-aliased a little differently.
  const compared = await page.evaluate(compareWithCanvas, { svg: markup, canvasSelector: '#matrices .matrix-slot canvas' });
  console.log(`SVG vs canvas: ${compared.width}×${compared.height} px, ${compared.far} px (${(100 * compared.far / (compared.width * compared.height)).toFixed(2)} %) ` +
    `more than 48 apart, cells within ${compared.cells}`);
  assert.equal(compared.ratio, 1);
  assert.ok(compared.cells <= 2, `cell colours differ by ${compared.cells}`);
  assert.ok(compared.far <= 0.02 * compared.width * compared.height, `${compared.far} pixels differ`);

  // PNG: the chosen scale, twice the pixels per side at 2× as at 1×, three times at 3×.
  const sizes = {};
  for (const scale of ['1', '2', '3']) {
    await page.selectOption('[data-export="masked-png-scale"]', scale);
    const png = await saved(page, '[data-export="masked-png"]');
    assert.deepEqual([...png.bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    sizes[scale] = pngSize(png.bytes);
  }
  assert.deepEqual(sizes['1'], compared.svgSize, '1×: one pixel per SVG pixel');
  assert.deepEqual(sizes['2'], sizes['1'].map((v) => 2 * v));
  assert.deepEqual(sizes['3'], sizes['1'].map((v) => 3 * v));

  // Copy figure: the SVG on the clipboard (its text; as image/svg+xml too where Chromium takes it).
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: live.server.url });
  await page.click('[data-export="masked-copy"]');
  await page.waitForFunction(() => /Copied/.test(document.querySelector('#exports .export-status')?.textContent ?? ''));
  console.log(`Copy figure: ${await page.textContent('#exports .export-status')}`);
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(copied, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.deepEqual((await page.evaluate(readSvg, copied)).labels, read.labels);
  // Where the clipboard takes no SVG image: the markup as text; where the browser refuses: said beside the buttons.
  const status = () => page.textContent('#exports .export-status');
  await page.evaluate(() => {
    ClipboardItem.supports = () => false;
    return navigator.clipboard.writeText('');
  });
  await page.click('[data-export="masked-copy"]');
  await page.waitForFunction(() => /as SVG text/.test(document.querySelector('#exports .export-status').textContent));
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^<svg /);
  await page.evaluate(() => {
    navigator.clipboard.writeText = () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError'));
  });
  await page.click('[data-export="masked-copy"]');
  await page.waitForFunction(() => /failed/.test(document.querySelector('#exports .export-status').textContent));
  assert.equal(await status(), 'Copy failed: Write permission denied. Use the SVG download instead.');
  assert.deepEqual(problems(), []);
});

test('an exported SVG at 1280 px wide (screenshot)', async () => {
  const { page } = await open(withRandomWeights('#mask=causal&stage=masked&cells=3.1,4.2'));
  await page.waitForFunction(() => document.querySelector('#matrices figure')?.dataset.table === 'ready');
  const svg = (await saved(page, '[data-export="masked-svg"]')).bytes.toString('base64');
  const view = await live.chrome.browser.newPage({ viewport: { width: 1280, height: 800 } });
  await view.setContent(`<body style="margin:0"><img alt="exported figure" style="width:1280px;display:block" src="data:image/svg+xml;base64,${svg}"></body>`);
  await view.waitForFunction(() => document.querySelector('img').complete && document.querySelector('img').naturalWidth > 0);
  await view.screenshot({ path: join(screenshotDir, 'figure-svg.png'), fullPage: true });
  await view.close();
});

test('a Circuits map (the logit lens) exports SVG with the drawn token in each cell', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=circuits&circuitShow=lens`);
  await page.waitForFunction(() => Number(document.body.dataset.circuitsReads ?? 0) > 0, null, { timeout: 40000 });
  const before = await page.evaluate(circuitsState);
  await page.click('#circuits-preset-induction');
  await page.waitForFunction((drawn) => Number(document.body.dataset.circuitsDrawn ?? 0) > drawn || document.body.dataset.circuitsError,
    before.drawn, { timeout: 40000 });
  const drawnBefore = await page.evaluate(circuitsState);
  await page.check('input[name="circuits-show"][value="lens"]');
  await page.waitForFunction((drawn) => Number(document.body.dataset.circuitsDrawn ?? 0) > drawn && document.body.dataset.circuitsShown === 'lens',
    drawnBefore.drawn, { timeout: 40000 });
  const table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  const svg = await saved(page, '[data-export="circuits-lens-svg"]');
  assert.equal(svg.name, 'circuits-lens.svg');
  const read = await page.evaluate(readSvg, svg.bytes.toString('utf8'));
  assert.equal(read.error, '');
  assert.equal(read.metadata.view, 'circuits');
  assert.equal(read.metadata.analysis, 'lens');
  assert.equal(read.metadata.model.name, 'english');
  // Each cell's token as the canvas writes it: the table's "token · probability", cut to the cell with "…" where it is wide.
  const tokens = table.cells.flat().map((cell) => cell.split(' · ')[0]);
  assert.equal(read.cellTexts.length, tokens.length);
  read.cellTexts.forEach((written, i) => assert.ok(written === tokens[i] || (written.endsWith('…') && tokens[i].startsWith(written.slice(0, -1))),
    `cell ${i}: ${written} for ${tokens[i]}`));
  assert.deepEqual(problems(), []);
});

/** In the page: an SVG's tiles, texts of a group, stroke colours and metadata. */
function figureParts({ svg, texts }) {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  return { error: doc.querySelector('parsererror')?.textContent ?? '', tiles: doc.querySelectorAll('g[shape-rendering="crispEdges"]').length,
    texts: [...doc.querySelectorAll(texts)].map((t) => t.textContent), strokes: [...new Set([...doc.querySelectorAll('path[stroke]')].map((p) => p.getAttribute('stroke')))],
    metadata: JSON.parse(doc.querySelector('metadata').textContent) };
}

test('the Your model view\'s head grid and the Train view\'s loss plot export SVG', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForFunction(() => document.body.dataset.modelReady === 'true' && document.querySelector('#model-head-grid canvas'), null, { timeout: 40000 });
  const heads = await page.locator('#model-head-grid canvas').count();
  const grid = await page.evaluate(figureParts, { svg: (await saved(page, '[data-export="model-heads-svg"]')).bytes.toString('utf8'), texts: 'g.tiles > text' });
  assert.equal(grid.error, '');
  assert.equal(grid.tiles, heads, 'a tile per head');
  assert.ok(grid.texts.includes('Layer 1') && grid.texts.includes('H1'), grid.texts.join(' '));
  assert.equal(grid.metadata.view, 'your model');
  assert.equal(grid.metadata.model.name, 'english');

  await page.context().close();
  const train = await openPage(live.chrome.browser, live.server.url);
  await train.page.goto(`${live.server.url}#tab=train`);
  await train.page.waitForSelector('body[data-train-ready="true"]', { timeout: 40000 });
  await trainSteps(train.page);
  const plot = await train.page.evaluate(figureParts, { svg: (await saved(train.page, '[data-export="train-loss-svg"]')).bytes.toString('utf8'),
    texts: 'g.key > text' });
  assert.equal(plot.error, '');
  assert.deepEqual(plot.texts, ['training loss', 'held-out loss', 'held-out accuracy (right axis)']);
  for (const colour of ['#0072b2', '#e69f00', '#009e73']) assert.ok(plot.strokes.includes(colour), `a line in ${colour}`);
  assert.equal(plot.metadata.view, 'train');
  assert.deepEqual([...problems(), ...train.problems()], []);
});

/** Two training steps, one click each. */
async function trainSteps(page) {
  await page.click('#train-step');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 1, null, { timeout: 40000 });
  await page.click('#train-step');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) === 2, null, { timeout: 40000 });
}

/** In the page: the export row of `selector` (an .export-group): each control's box and data-export, the scale's accessible name. */
function exportRow(selector) {
  const group = document.querySelector(selector);
  const controls = [...group.querySelectorAll('button, select')].map((c) => {
    const r = c.getBoundingClientRect();
    return { key: c.dataset.export, tag: c.localName, left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width };
  });
  const scale = group.querySelector('select');
  const label = scale.closest('label');
  return { controls, scaleName: scale.getAttribute('aria-label') ?? '', visibleLabel: label ? label.textContent.replace(scale.textContent, '').trim() : '',
    label: group.getAttribute('aria-label') ?? '', role: group.getAttribute('role') ?? '', text: group.querySelector('.export-label')?.textContent ?? '',
    viewport: innerWidth };
}

test('the export row: "Download …: SVG PNG scale [2×] JSON CSV Copy figure" on one line at 1280 px, wrapping tidily at 375 px', async () => {
  for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(live.server.url + withRandomWeights('#mask=causal&stage=masked'));
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector('#matrices figure')?.dataset.table === 'ready');
    const row = await page.evaluate(exportRow, '#exports .export-group');
    assert.deepEqual(row.controls.map((c) => c.key), ['masked-svg', 'masked-png', 'masked-png-scale', 'masked-json', 'masked-csv', 'masked-copy'],
      'SVG, PNG and its scale, JSON, CSV, Copy figure');
    assert.equal(row.role, 'group');
    assert.match(row.label, /^Download /);
    assert.equal(row.text, 'Download:', 'one figure: its caption is above it');
    const scale = row.controls.find((c) => c.tag === 'select');
    assert.ok(scale.width < 80, `the scale is ${scale.width} px wide`);
    assert.match(row.scaleName, /^PNG scale/, 'the scale\'s accessible name');
    assert.equal(row.visibleLabel, 'scale', 'the scale\'s visible label');
    // No control overlaps another, none runs past the window.
    for (const [i, a] of row.controls.entries()) {
      assert.ok(a.left >= 0 && a.right <= row.viewport, `${a.key} inside the window`);
      for (const b of row.controls.slice(i + 1)) {
        assert.ok(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${a.key} and ${b.key} overlap`);
      }
    }
    if (viewport.width === 1280) {
      const tops = new Set(row.controls.map((c) => Math.round(c.top)));
      assert.ok(Math.max(...tops) - Math.min(...tops) <= 4, `one line: tops ${[...tops].join(', ')}`);
      // The keyboard goes through the row in the order it reads.
      await page.focus('[data-export="masked-svg"]');
      const order = ['masked-svg'];
      for (let i = 0; i < 5; ++i) {
        await page.keyboard.press('Tab');
        order.push(await page.evaluate(() => document.activeElement.dataset.export));
      }
      assert.deepEqual(order, row.controls.map((c) => c.key));
    } else {
      // Wrapped at most onto two lines (tops more than 4 px apart), each control whole.
      const lines = row.controls.map((c) => c.top).sort((a, b) => a - b).filter((top, i, all) => i === 0 || top - all[i - 1] > 4);
      assert.ok(lines.length <= 2, `lines at ${lines.join(', ')}`);
    }
    await page.locator('#exports').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, `export-row-${viewport.width}.png`) });
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

/** In the page: the walkthrough's controls as they show the settings drawn (a trained model's greyed-out own values). */
const walkthroughShown = () => ({ text: document.querySelector('#text').value, model: document.querySelector('#walkthrough').dataset.model,
  ...Object.fromEntries(['tokenizer', 'positional', 'mask', 'dModel', 'heads', 'seed', 'window'].map((id) => [id, document.getElementById(id).value])) });

test('every figure\'s SVG metadata is the settings the view drew it with (walkthrough, Your model, Circuits, Train)', async () => {
  // The walkthrough on the english model (characters, learned positions, causal) and on random weights.
  for (const hash of ['#stage=scores', withRandomWeights('#tokenizer=char&positional=learned&mask=sliding-window&window=2&seed=7&heads=2&stage=scores')]) {
    const { page, problems } = await open(hash);
    await page.waitForFunction(() => document.querySelector('#matrices figure')?.dataset.table === 'ready');
    const svg = await saved(page, '#exports .export-group [data-export$="-svg"]');
    const { metadata } = await page.evaluate(readSvg, svg.bytes.toString('utf8'));
    const shown = await page.evaluate(walkthroughShown);
    console.log(`walkthrough ${hash}: ${JSON.stringify(metadata.settings)}`);
    assert.equal(metadata.view, 'walkthrough');
    assert.equal(metadata.text, shown.text);
    for (const key of ['tokenizer', 'positional', 'mask', 'dModel']) assert.equal(String(metadata.settings[key]), shown[key], key);
    assert.equal(String(metadata.settings.heads), shown.heads, 'heads');
    if (shown.model) {
      assert.equal(metadata.model.name, shown.model);
      assert.equal(metadata.settings.seed, undefined, 'a trained model\'s figure names no seed');
    } else {
      assert.equal(String(metadata.settings.seed), shown.seed);
      assert.equal(String(metadata.settings.window), shown.window);
    }
    assert.deepEqual(problems(), []);
    await page.context().close();
  }

  // Your model: the text the grid was drawn on, its knocked-out head; the generation's sampling settings as it was written.
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForFunction(() => document.body.dataset.modelName === 'english' && document.querySelector('#model-head-grid .model-knock'),
    null, { timeout: 40000 });
  const runs = Number(await page.getAttribute('body', 'data-model-run'));
  await page.click('#model-head-grid .model-knock[data-layer="1"][data-head="2"]');
  await page.waitForFunction((n) => Number(document.body.dataset.modelRun) > n, runs);
  const grid = (await page.evaluate(figureParts, { svg: (await saved(page, '[data-export="model-heads-svg"]')).bytes.toString('utf8'),
    texts: 'g.tiles > text' })).metadata;
  assert.equal(grid.model.name, await page.getAttribute('body', 'data-model-name'));
  assert.equal(grid.text, await page.inputValue('#model-text'));
  assert.deepEqual(grid.knockedOut, await page.evaluate(() => [...document.querySelectorAll('#model-head-grid .model-knock[aria-pressed="true"]')]
    .map((b) => `L${Number(b.dataset.layer) + 1}H${Number(b.dataset.head) + 1}`)));
  await page.fill('#model-gen-tokens', '4');
  await page.fill('#model-gen-temperature', '0');
  await page.click('#model-gen-form button[type="submit"]');
  await page.waitForSelector('body[data-model-generated]', { timeout: 30000 });
  await page.waitForSelector('[data-export="generation-svg"]');
  // The form changed after the generation was written: the figure keeps the settings it was written with.
  await page.fill('#model-gen-temperature', '0.7');
  const generation = (await page.evaluate(figureParts, { svg: (await saved(page, '[data-export="generation-svg"]')).bytes.toString('utf8'),
    texts: 'text' })).metadata;
  assert.equal(generation.sampling.temperature, 0);
  assert.equal(generation.sampling.maxTokens, 4);
  assert.deepEqual(generation.knockedOut, ['L2H3']);
  assert.deepEqual(problems(), []);
  await page.context().close();

  // Circuits: the model and the clean prompt the map was computed on.
  const circuits = await openPage(live.chrome.browser, live.server.url);
  await circuits.page.goto(`${live.server.url}#tab=circuits&circuitShow=lens`);
  await circuits.page.waitForFunction(() => Number(document.body.dataset.circuitsDrawn ?? 0) > 0 || document.body.dataset.circuitsError,
    null, { timeout: 60000 });
  const lens = (await circuits.page.evaluate(readSvg, (await saved(circuits.page, '[data-export="circuits-lens-svg"]')).bytes.toString('utf8'))).metadata;
  assert.equal(lens.model.name, await circuits.page.getAttribute('body', 'data-model-name'));
  assert.equal(lens.prompts.clean, await circuits.page.inputValue('#circuits-clean'));
  assert.deepEqual(circuits.problems(), []);
  await circuits.page.context().close();

  // Train: the run's task, model and training settings as its form shows them.
  const train = await openPage(live.chrome.browser, live.server.url);
  await train.page.goto(`${live.server.url}#tab=train&layers=1&trainHeads=2&lr=0.003`);
  await train.page.waitForSelector('body[data-train-ready="true"]', { timeout: 40000 });
  await trainSteps(train.page);
  const loss = (await train.page.evaluate(figureParts, { svg: (await saved(train.page, '[data-export="train-loss-svg"]')).bytes.toString('utf8'),
    texts: 'g.key > text' })).metadata;
  const form = await train.page.evaluate(() => Object.fromEntries(['task', 'layers', 'heads', 'dmodel', 'context', 'lr', 'batch', 'seed']
    .map((k) => [k, document.getElementById(`train-${k}`).value])));
  assert.deepEqual([loss.task, loss.model.layers, loss.model.heads, loss.model.dModel, loss.model.context, loss.training.learningRate,
    loss.training.batch, loss.training.seed].map(String), [form.task, form.layers, form.heads, form.dmodel, form.context, form.lr, form.batch, form.seed]);
  assert.equal(loss.step, 2);
  assert.deepEqual(train.problems(), []);
});
