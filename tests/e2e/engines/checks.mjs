// The essentials of the Chromium suites as one engine-neutral list of page checks, run by each
// engine's test file (chromium, firefox, webkit .test.mjs) through scripts/lib/drivers.mjs: the
// page loads under the strict CSP with no error and no request off the origin, wasm SIMD runs and draws;
// the opening sentence typed at 1280 and 375 px (mapped tokens, no sideways scroll, the greyed menus whole);
// typed tokens change the drawing and the drawn weights equal the JS API's in the same browser;
// the inspector shows a cell's terms; the Web Worker path; the embed from file:// and over http
// under the strict CSP; a hostile link runs nothing; the Train view trains in its worker (the
// loss falls); the embed's model="induction" draws the trained head from file:// and under the strict
// CSP; a long post of snapshots and a live element never scrolls its page; snapshots (inline and snapshot="…json") draw the API's weights within their 8-bit bound from file://
// and under the strict CSP, with no wasm and no request but the .json; a heatmap's SVG figure opens as an image of its declared size; at 375 px no tab scrolls
// sideways or has anything wider than its panel, and the footer describes the tab shown; the first screen (1280 × 900,
// 375 × 800) holds Open files… beside Load, the greyed controls say why, and a phone's Train tab its live loss beside Start. The Your model view's checks are model-checks.mjs's (the local stand-in of the Hub,
// scripts/lib/hub-stand-in.mjs, and a server that never answers, for a cancel). Errors and requests are
// recorded in the page (probe.js) because WebKit's WebDriver reports neither; a worker's own fetches
// are not seen.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { STRICT_CSP, strictCspAlso } from '../../../scripts/lib/csp.mjs';
import { cutSelects, heatmapTable, screenshotDir, serveDist, sticksOut, withRandomWeights } from '../browser.mjs';
import { familyRepos, llama3F32, llamaHubRepos, qwen2Bf16, shardedMistral, startSmallHub, startStall, twelveHeadsRepo } from '../hub-fixture.mjs';
import { ENGINE_FAMILY_CASES, modelChecks, pickFiles } from './model-checks.mjs';
import { launchEngine } from '../../../scripts/lib/drivers.mjs';
import { QUANTISATION_BOUND, scriptSafeJson } from '../../../web/api/snapshot.js';
import { longPostHtml } from '../embed-posts.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dist = join(root, 'dist');
export const PROBE = fileURLToPath(new URL('./probe.js', import.meta.url));
const DESKTOP = { width: 1280, height: 900 };
const TEXT = 'The bank will not loan money';

/** The blog example's policy: the strict one plus the hash of the post's own <style>. */
function blogPolicy() {
  const html = readFileSync(join(dist, 'blog-example.html'), 'utf8');
  const [style] = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
  const hash = createHash('sha256').update(style).digest('base64');
  return STRICT_CSP.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`);
}

/** build/engine-fixtures/: the blog example with the probe loaded first, for file://. */
function fileFixture() {
  const dir = join(root, 'build', 'engine-fixtures');
  mkdirSync(dir, { recursive: true });
  const html = readFileSync(join(dist, 'blog-example.html'), 'utf8').replace(/<head>/i, '<head><script src="probe.js"></script>');
  writeFileSync(join(dir, 'blog-example.html'), html);
  copyFileSync(join(dist, 'attention-lens-element.js'), join(dir, 'attention-lens-element.js'));
  copyFileSync(PROBE, join(dir, 'probe.js'));
  return pathToFileURL(join(dir, 'blog-example.html')).href;
}

// A post with the trained induction model's layer-2 head 4 and a random-weights element beside it:
// model-post-file.html (the probe loaded first, for file://) and model-post.html (served with the
// probe injected), the element script and models/induction.js beside them.
const INDUCTION_TEXT = 'qwertyuiopqwertyuiop';
function modelFixture() {
  const dir = join(root, 'build', 'engine-fixtures');
  mkdirSync(join(dir, 'models'), { recursive: true });
  const page = (head) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>model embed</title>${head}<script src="attention-lens-element.js" defer></script></head><body>
<attention-lens model="induction" layer="2" head="4" text="${INDUCTION_TEXT}"></attention-lens>
<attention-lens text="The cat sat on the mat" mask="causal"></attention-lens></body></html>`;
  writeFileSync(join(dir, 'model-post-file.html'), page('<script src="probe.js"></script>'));
  writeFileSync(join(dir, 'model-post.html'), page(''));
  copyFileSync(join(dist, 'attention-lens-element.js'), join(dir, 'attention-lens-element.js'));
  copyFileSync(join(dist, 'models', 'induction.js'), join(dir, 'models', 'induction.js'));
  copyFileSync(PROBE, join(dir, 'probe.js'));
  return { dir, fileUrl: pathToFileURL(join(dir, 'model-post-file.html')).href };
}

// A post of snapshots (dist/snapshots/, written at build time from the shipped induction model):
// the model's every head and its patched heads inline, and the model's again as snapshot="…json";
// snapshot-post-file.html (the probe first, for file://) and snapshot-post.html (served), in the
// model fixture's folder with the .json beside them.
function snapshotFixture(dir) {
  mkdirSync(join(dir, 'snapshots'), { recursive: true });
  const inline = (name) => {
    const json = readFileSync(join(dist, 'snapshots', `${name}.json`), 'utf8');
    copyFileSync(join(dist, 'snapshots', `${name}.json`), join(dir, 'snapshots', `${name}.json`));
    return `<attention-lens snapshot><script type="application/json">${scriptSafeJson(JSON.parse(json))}</script></attention-lens>`;
  };
  const page = (head) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>snapshot embed</title>${head}<script src="attention-lens-element.js" defer></script></head><body>
${inline('induction-model')}${inline('induction-patching')}<attention-lens snapshot="snapshots/induction-model.json"></attention-lens></body></html>`;
  writeFileSync(join(dir, 'snapshot-post-file.html'), page('<script src="probe.js"></script>'));
  writeFileSync(join(dir, 'snapshot-post.html'), page(''));
  return pathToFileURL(join(dir, 'snapshot-post-file.html')).href;
}

/** The induction model's layer 2 (index 1), head 4 (index 3) on INDUCTION_TEXT, from the JS API in Node. */
async function inductionHead() {
  const { loadAttentionLens } = await import(pathToFileURL(join(dist, 'attention-lens.mjs')).href);
  const lens = await loadAttentionLens();
  const model = await lens.trainedModel('induction');
  const ids = model.encode(INDUCTION_TEXT);
  const n = ids.length;
  const a = model.forward(ids, { n }).attention[1];
  model.dispose();
  return Array.from({ length: n }, (_, i) => Array.from(a.subarray((3 * n + i) * n, (3 * n + i + 1) * n)));
}

// ---- in the page ------------------------------------------------------------------------------

function pageSettled() {
  return document.body.dataset.ready === 'true' && document.querySelector('#matrices canvas') !== null &&
    [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready');
}

/** In the page: what pageSettled waits for, as it stands (for the message of a wait that timed out). */
function drawState() {
  const figures = [...document.querySelectorAll('#matrices figure')];
  const error = document.querySelector('#error');
  return { ready: document.body.dataset.ready ?? null, canvas: document.querySelector('#matrices canvas') !== null,
    figures: figures.length, tablesPending: figures.filter((f) => f.dataset.table !== 'ready').length,
    status: document.querySelector('#status')?.textContent ?? null, error: error && !error.hidden ? error.textContent : null,
    pageErrors: window.__probe?.report().errors ?? null, visibility: document.visibilityState, url: location.href };
}

/** Waits up to 30 s for the page's first draw; a timeout says what the page was still missing. */
async function waitForDraw(page) {
  try {
    await page.waitFor(pageSettled, null, 30000, 'the page to draw');
  } catch (error) {
    const state = await page.evaluate(drawState).catch((e) => `unreadable (${e.name}: ${e.message})`);
    error.message += `; the page then: ${JSON.stringify(state)}`;
    throw error;
  }
}

/** The first heatmap's numbers, from its screen-reader table, and a digest of its pixels. */
function firstMatrix() {
  const slot = document.querySelector('#matrices .matrix-slot');
  const canvas = slot.querySelector('canvas');
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let digest = 0;
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) {
    const rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    colours.add(rgb);
    digest = (digest * 31 + rgb) >>> 0;
  }
  return { step: slot.dataset.step, rows: Number(canvas.dataset.rows), cols: Number(canvas.dataset.cols),
    colours: colours.size, digest,
    values: [...slot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')]
      .map((td) => (td.textContent === '−∞' ? -Infinity : Number(td.textContent)))) };
}

/** The public API in the page: head `head`'s weights and q, k of `text` (word tokens, seed 42). */
async function apiForward({ text, head = 0, dModel = 64, heads = 4 }) {
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const layer = lens.createLayer({ dModel, heads, seed: 42, positional: 'sinusoidal' });
  const { tokens, ids } = lens.tokenize(text, { mode: 'word' });
  const n = tokens.length;
  const r = layer.forward(layer.embed(ids), { n, trace: n <= 64 });
  const step = (id) => Array.from(r.steps?.find((s) => s.id === id && s.head === head)?.data ?? []);
  const out = { n, weights: Array.from(r.attention.subarray(head * n * n, (head + 1) * n * n)),
    scores: step('scores'), q: step('q'), k: step('k') };
  layer.dispose();
  return out;
}

// What most people type first: a capital and a period (the english model's alphabet has neither
// capitals nor … : it reads the text mapped, the core's rule).
const OPENING_TEXT = 'The bank will not loan money.';
const PHONE = { width: 375, height: 812 };

/** The phone of the first-screen checks (the 375 × 800). */
const FIRST_SCREEN_PHONE = { width: 375, height: 800 };

/** In the page: the selectors whose (first) element is not wholly inside the first screen, the page not scrolled. */
function outsideFirstScreen(selectors) {
  return selectors.filter((selector) => {
    const r = document.querySelector(selector)?.getBoundingClientRect();
    return !r || scrollY !== 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth;
  });
}

/** In the page: the walkthrough's chips, messages, width and greyed controls, for the checks below. */
function openingState() {
  const q = (selector) => document.querySelector(selector);
  const controls = Object.fromEntries(['tokenizer', 'positional', 'mask', 'dModel', 'heads']
    .map((id) => [id, { value: q(`#${id}`).value, disabled: q(`#${id}`).disabled, shown: q(`#${id}`).selectedOptions[0]?.textContent }]));
  return { chips: [...document.querySelectorAll('#tokens .chip')].map((c) => c.textContent),
    substitutes: [...document.querySelectorAll('#tokens .chip.substitute')].map((c) => c.title),
    titles: [...document.querySelectorAll('#tokens .chip')].map((c) => c.title),
    read: q('#text-read').hidden ? null : q('#text-read').textContent,
    error: q('#error').hidden ? null : q('#error').textContent,
    overflow: document.documentElement.scrollWidth - innerWidth, controls };
}

/** The english model through the public API in the page: layer 1's weights of `text` read with unknown: 'map'. */
async function apiEnglish(text) {
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const model = await lens.trainedModel('english');
  const { ids, tokens } = model.tokenize(text, { unknown: 'map' });
  const { attention } = model.forward(ids, { n: ids.length });
  const out = { n: ids.length, tokens, weights: Array.from(attention[0]) };
  model.dispose();
  return out;
}

/** Empties the text box as a reader selecting all and deleting does (one input event). */
function clearText() {
  const box = document.querySelector('#text');
  box.focus();
  box.value = '';
  box.dispatchEvent(new Event('input', { bubbles: true }));
}

/** The page's viewport point over cell (row, col) of the first heatmap, scrolled into view. */
function cellPoint([row, col]) {
  const canvas = document.querySelector('#matrices .matrix-slot canvas');
  const { left, top, cell } = canvas.dataset;
  const x = +left + (col + 0.5) * +cell;
  const y = +top + (row + 0.5) * +cell;
  const frame = canvas.closest('.heatmap-scroll') ?? canvas.parentElement;
  frame.scrollLeft = Math.max(0, x - frame.clientWidth / 2);
  frame.scrollTop = Math.max(0, y - frame.clientHeight / 2);
  window.scrollBy(0, canvas.getBoundingClientRect().top + y - innerHeight / 2);
  const rect = canvas.getBoundingClientRect(); // left, top and cell are CSS pixels
  return { x: rect.left + x, y: rect.top + y };
}

const inspected = ([row, col]) => {
  const where = document.querySelector('.inspector-where')?.textContent ?? '';
  const value = document.querySelector('[data-testid="cell-value"]');
  return new RegExp(`i = ${row}\\).*j = ${col}\\)`).test(where) && value
    ? { value: Number(value.dataset.value),
      terms: [...document.querySelectorAll('#inspector table.terms tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))) }
    : null;
};

/**
 * In the page: what is wrong with the first heatmap's labels and the inspector with cell
 * [row, col] hovered: drawn label boxes (canvas.drawnLabels) that overlap or leave the canvas, the
 * cell's own labels missing, an equation or table wider than its box without its scroll cue.
 */
function layoutProblems([row, col]) {
  const canvas = document.querySelector('#matrices .matrix-slot canvas');
  const boxes = canvas.drawnLabels ?? [];
  const [width, height] = [parseFloat(canvas.style.width), parseFloat(canvas.style.height)];
  const out = [];
  boxes.forEach((a, i) => {
    if (a.x < 0 || a.y < 0 || a.x + a.w > width || a.y + a.h > height) out.push(`“${a.text}” outside the canvas`);
    for (const b of boxes.slice(i + 1)) if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) out.push(`“${a.text}” over “${b.text}”`);
  });
  for (const [axis, index] of [['row', row], ['col', col]]) {
    if (!boxes.some((b) => b.axis === axis && b.index === index && b.focus)) out.push(`no label of the hovered ${axis}`);
  }
  const inspector = document.getElementById('inspector');
  if (inspector.scrollWidth > inspector.clientWidth) out.push('the inspector is wider than its box');
  for (const box of inspector.querySelectorAll('.katex-display, .terms-scroll')) {
    const cue = box.closest('.scroll-frame')?.querySelector(':scope > .scroll-cue-right');
    if (box.scrollWidth > box.clientWidth && !cue?.getClientRects().length) out.push(`${box.className} cut without a cue`);
  }
  return out;
}

/**
 * In the page: the first heatmap's "SVG" export (its blob caught on its way to the download link,
 * the download itself skipped) opened as an image: { parsed (no parsererror), declared (its
 * width / height attributes), natural (the image's size), cell (the pixel at the first cell's centre,
 * which must not be the surface's) }.
 */
async function svgFigureOpens() {
  const createObjectURL = URL.createObjectURL;
  const click = HTMLAnchorElement.prototype.click;
  let blob = null;
  URL.createObjectURL = (b) => { blob = b; return createObjectURL.call(URL, b); };
  HTMLAnchorElement.prototype.click = function skipDownload() { if (!this.download) click.call(this); };
  try {
    document.querySelector('[data-export$="-svg"]').click();
  } finally {
    URL.createObjectURL = createObjectURL;
    HTMLAnchorElement.prototype.click = click;
  }
  const svg = await blob.text();
  const root = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const image = new Image();
  image.src = createObjectURL.call(URL, new Blob([svg], { type: 'image/svg+xml' }));
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const { left, top, cell } = document.querySelector('#matrices canvas').dataset;
  const at = ctx.getImageData(12 + Number(left) + Number(cell) / 2, 36 + Number(top) + Number(cell) / 4, 1, 1).data; // above the cell's number
  return { parsed: !root.querySelector('parsererror'), declared: [Number(root.documentElement.getAttribute('width')),
    Number(root.documentElement.getAttribute('height'))], natural: [image.naturalWidth, image.naturalHeight], cell: [...at.slice(0, 3)] };
}

/** In the page: each <attention-lens>'s status, title and drawn table, once all are done; else null. */
function embedTables() {
  const all = [...document.querySelectorAll('attention-lens')];
  const done = all.length > 0 && all.every((e) => ['ready', 'error'].includes(e.shadowRoot?.querySelector('.lens')?.dataset.status) &&
    [...e.shadowRoot.querySelectorAll('figure')].every((f) => f.dataset.table !== 'pending'));
  return done && all.map((e) => ({
    status: e.shadowRoot.querySelector('.lens').dataset.status,
    title: e.shadowRoot.querySelector('.lens').textContent.slice(0, 300),
    rows: [...e.shadowRoot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))),
  }));
}

// ---- the checks -------------------------------------------------------------------------------

function close(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, ${expected.length} expected`);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tol + tol * 10 * Math.abs(expected[i]),
    `${what}[${i}]: ${v}, expected ${expected[i]}`));
}

async function hover(page, cell) {
  const { x, y } = await page.evaluate(cellPoint, cell);
  await page.mouseMove(x, y);
  return page.waitFor(inspected, cell, 10000, `the inspector on cell ${cell}`);
}

/** `allow`: origins besides the page's that requests may go to (the stand-in of the Hub's). */
async function clean(page, { wasm, allow = [] } = {}) {
  const allowed = (url) => allow.some((origin) => url.startsWith(`${origin}/`));
  const report = await page.evaluate(() => window.__probe.report());
  assert.deepEqual(report.errors, [], 'no console or page error');
  assert.deepEqual(report.offOrigin.filter((url) => !allowed(url)), [], 'no request off the origin');
  assert.deepEqual(report.violations, [], 'no CSP violation');
  assert.deepEqual(report.dialogs, [], 'no dialog');
  // Chromium and Firefox also report every request, a worker's included (WebKit's WebDriver cannot).
  const origin = await page.evaluate(() => location.origin);
  const off = (page.requests?.() ?? []).filter((url) => !url.startsWith(origin) && !/^(data|blob|file):/.test(url) && !allowed(url));
  assert.deepEqual(off, [], 'no request off the origin (seen by the driver)');
  if (wasm !== undefined) assert.equal(report.wasmInstances, wasm, 'wasm instances');
  return report;
}

/**
 * Registers the shared checks as node:test tests for `engineName`; screenshots go to
 * build/screenshots/engine-<name>-*.png.
 */
/**
 * In the page: an export row's controls (buttons and the PNG scale) as boxes, the scale's accessible
 * name and visible label, and the window's width.
 */
function exportRowBoxes(selector) {
  const group = document.querySelector(selector);
  const controls = [...group.querySelectorAll('button, select')].map((c) => {
    const r = c.getBoundingClientRect();
    return { key: c.dataset.export, select: c.localName === 'select', left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width };
  });
  const scale = group.querySelector('select');
  return { controls, scaleName: scale.getAttribute('aria-label') ?? '', scaleLabel: scale.closest('label')?.firstChild?.textContent ?? '',
    width: innerWidth };
}

export function engineSuite(engineName) {
  const live = {};
  const shot = (name) => join(screenshotDir, `engine-${engineName}-${name}.png`);
  before(async () => {
    mkdirSync(screenshotDir, { recursive: true });
    live.fileUrl = fileFixture();
    live.modelPost = modelFixture();
    live.snapshotFileUrl = snapshotFixture(live.modelPost.dir);
    writeFileSync(join(live.modelPost.dir, 'long-post.html'), longPostHtml(dist));
    live.llama = { mistral: shardedMistral(), qwen2: qwen2Bf16(), llama3: llama3F32() };
    live.hub = await startSmallHub({ ...llamaHubRepos(live.llama.mistral, live.llama.qwen2), ...twelveHeadsRepo(),
      ...familyRepos(ENGINE_FAMILY_CASES) });
    live.stall = await startStall();
    [live.plain, live.strict, live.blog, live.models, live.hubbed, live.engine] = await Promise.all([serveDist({ probe: PROBE }),
      serveDist({ csp: true, probe: PROBE }), serveDist({ csp: blogPolicy(), probe: PROBE }),
      serveDist({ csp: true, probe: PROBE, dir: live.modelPost.dir }),
      serveDist({ csp: strictCspAlso([live.hub.endpoint, live.hub.storage, live.stall.origin]), probe: PROBE }), launchEngine(engineName)]);
    console.log(`# ${live.engine.version}`);
  });
  after(async () => {
    await live.engine?.close();
    for (const server of [live.plain, live.strict, live.blog, live.models, live.hubbed]) server?.stop();
    await live.hub?.close();
    await live.stall?.close();
  });

  /**
   * Runs `body(page)` in a fresh page, closed afterwards even when it fails; a failure of the
   * body is the one reported (a close that fails after it is only noted).
   */
  async function withPage(body, viewport = DESKTOP) {
    const page = await live.engine.newPage(viewport);
    let result;
    try {
      result = await body(page);
    } catch (error) {
      await page.close().catch((closing) => console.log(`# ${engineName}: closing the page after a failed check: ${closing.name} ${closing.message}`));
      throw error;
    }
    await page.close();
    return result;
  }
  const open = async (page, server, hash = '') => {
    await page.goto(server.url + withRandomWeights(hash));
    await waitForDraw(page);
  };

  test(`${engineName}: the page loads under the strict CSP, runs wasm SIMD and draws, with no error and nothing off the origin`, () => withPage(async (page) => {
    await open(page, live.strict);
    const status = await page.evaluate(() => document.querySelector('#status').textContent);
    assert.match(status, /6 tokens .* on the main thread \(wasm SIMD\)/);
    const drawn = await page.evaluate(firstMatrix);
    assert.deepEqual([drawn.step, drawn.rows, drawn.cols], ['weights', 6, 6]);
    assert.ok(drawn.colours > 6, `the heatmap has ${drawn.colours} colours`);
    assert.ok(await page.evaluate(() => document.querySelectorAll('#equation .katex').length) >= 1, 'KaTeX typeset');
    const fonts = await page.evaluate(async () => {
      await document.fonts.ready;
      return [...document.fonts].filter((f) => f.status === 'error').map((f) => f.family);
    });
    assert.deepEqual(fonts, [], 'no font failed to load');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    await page.screenshot(shot('page'));
    const report = await clean(page);
    assert.ok(report.resources.some((url) => url.endsWith('/attention-lens.wasm')), report.resources.join(' '));
  }));

  test(`${engineName}: a heatmap's SVG figure opens as an image of its declared size, its first cell painted`, () => withPage(async (page) => {
    await open(page, live.strict, '#mask=causal');
    const figure = await page.evaluate(svgFigureOpens);
    assert.ok(figure.parsed, 'the SVG parses');
    assert.ok(figure.declared[0] > 100 && figure.declared[1] > 100, `declared ${figure.declared}`);
    assert.deepEqual(figure.natural, figure.declared, 'the image is the size the SVG declares');
    // Causal weights: the first query sees only itself, weight 1, the top of viridis (#fde725).
    assert.ok(Math.abs(figure.cell[0] - 0xfd) <= 2 && Math.abs(figure.cell[1] - 0xe7) <= 2 && Math.abs(figure.cell[2] - 0x25) <= 2,
      `the first cell is ${figure.cell}`);
    await clean(page);
  }));

  test(`${engineName}: a figure's export row: SVG, PNG, a labelled scale under 80 px, JSON, CSV, Copy figure; one line at 1280 px, no overlap at 375 px`, async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      await withPage(async (page) => {
        await open(page, live.strict, '#mask=causal&stage=masked');
        const row = await page.evaluate(exportRowBoxes, '#exports .export-group');
        assert.deepEqual(row.controls.map((c) => c.key), ['masked-svg', 'masked-png', 'masked-png-scale', 'masked-json', 'masked-csv', 'masked-copy']);
        const scale = row.controls.find((c) => c.select);
        assert.ok(scale.width < 80, `the scale is ${scale.width} px wide`);
        assert.match(row.scaleName, /^PNG scale/);
        assert.equal(row.scaleLabel, 'scale');
        for (const [i, a] of row.controls.entries()) {
          assert.ok(a.left >= 0 && a.right <= row.width, `${a.key} inside the window`);
          for (const b of row.controls.slice(i + 1)) {
            assert.ok(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${a.key} and ${b.key} overlap`);
          }
        }
        const lines = row.controls.map((c) => c.top).sort((a, b) => a - b).filter((top, i, all) => i === 0 || top - all[i - 1] > 4);
        assert.ok(lines.length <= (viewport === DESKTOP ? 1 : 2), `${viewport.width} px: lines at ${lines.join(', ')}`);
        await page.evaluate(() => document.querySelector('#exports').scrollIntoView({ block: 'center' }));
        await page.screenshot(shot(`export-row-${viewport.width}`));
        await clean(page);
      }, viewport);
    }
  });

  test(`${engineName}: the opening page reads "${OPENING_TEXT}" as typed at 1280 and 375 px: mapped tokens drawn (= the API's), no error, no sideways scroll, the greyed controls show the model`, async () => {
    const api = await withPage(async (page) => {
      await page.goto(live.plain.url);
      return page.evaluate(apiEnglish, OPENING_TEXT);
    });
    assert.deepEqual(api.tokens, Array.from(OPENING_TEXT.toLowerCase()));
    for (const viewport of [DESKTOP, PHONE]) {
      await withPage(async (page) => {
        await page.goto(live.strict.url); // the page opens on the shipped english model
        await waitForDraw(page);
        // A refused input first (no text), then the sentence typed key by key.
        await page.evaluate(clearText);
        await page.waitFor(() => !document.querySelector('#error').hidden, null, 10000, 'the empty text refused');
        const refused = await page.evaluate(openingState);
        await page.type('#text', OPENING_TEXT);
        await page.waitFor((n) => Number(document.querySelector('#matrices canvas')?.dataset.rows) === n &&
          document.querySelector('#error').hidden, api.n, 10000, 'the typed sentence drawn');
        await page.waitFor(pageSettled);
        const state = await page.evaluate(openingState);
        const where = `${viewport.width} px`;
        assert.equal(state.error, null, `${where}: no error`);
        assert.ok(state.overflow <= 0, `${where}: the page is ${state.overflow}px wider than the window`);
        assert.deepEqual(state.chips, api.tokens.map((t) => (t === ' ' ? '␣' : t)), `${where}: the chips are the tokens read`);
        assert.equal(state.titles[0], 'token 1: typed “T”, read as “t” (as lowercase)');
        assert.deepEqual(state.substitutes, [], 'a capital is not a substitute');
        assert.equal(state.read, "Read in the english model's alphabet: 1 capital as lowercase.");
        const drawn = await page.evaluate(firstMatrix);
        assert.equal(drawn.step, 'weights');
        close(drawn.values.flat(), api.weights.slice(0, api.n * api.n), 1e-4, `${where}: drawn weights vs API`);
        // After the refused input and after the mapped one, the greyed controls show the model's own.
        for (const [when, s] of [['refused', refused], ['mapped', state]]) {
          assert.deepEqual(Object.fromEntries(Object.entries(s.controls).map(([id, c]) => [id, [c.value, c.disabled]])),
            { tokenizer: ['char', true], positional: ['learned', true], mask: ['causal', true], dModel: ['64', true], heads: ['4', true] },
            `${where}, ${when}: the greyed controls`);
        }
        assert.deepEqual(await page.evaluate(cutSelects), [], `${where}: no menu cuts its text`);
        await page.screenshot(shot(`opening-${viewport.width}`), { fullPage: true });
        await clean(page);
      }, viewport);
    }
  });

  test(`${engineName}: at 375 px an error with a long unbreakable name wraps: no sideways scroll; a substitute chip is marked`, () => withPage(async (page) => {
    await open(page, live.strict); // random weights: the weights file picker is on
    const name = `${'a-very-long-checkpoint-file-name-without-spaces_'.repeat(4)}.safetensors`;
    await page.evaluate(pickFiles, { selector: '#weights-file', files: [{ name, type: 'application/octet-stream', base64: 'AAAAAAAAAAA=' }] });
    await page.waitFor(() => !document.querySelector('#error').hidden, null, 10000, 'the file refused');
    const error = await page.evaluate(() => document.querySelector('#error').textContent);
    assert.ok(error.startsWith(`Could not load ${name}: `), error);
    let overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `with the error showing, the page is ${overflow}px wider than the window`);
    await page.screenshot(shot('error-375'), { fullPage: true });
    // The english model on a text with a character it lacks: a marked chip and the line under the box.
    await page.goto('about:blank'); // a new document (a hash change alone keeps this one)
    await page.goto(`${live.strict.url}#text=${encodeURIComponent('Fee: 5€ — “ok”')}`);
    await waitForDraw(page);
    const state = await page.evaluate(openingState);
    assert.equal(state.error, null);
    assert.deepEqual(state.chips, Array.from('fee:␣5␣␣-␣"ok"'));
    assert.deepEqual(state.substitutes, ['token 7: typed “€”, read as “␣” (not in the alphabet)',
      'token 9: typed “—”, read as “-” (the nearest character)', 'token 11: typed ““”, read as “"” (the nearest character)',
      'token 14: typed “””, read as “"” (the nearest character)']);
    assert.equal(state.read, "Read in the english model's alphabet: 1 capital as lowercase; — → -, “ → \", ” → \"; € → ␣ (not in the alphabet: marked).");
    overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    await page.screenshot(shot('substitutes-375'), { fullPage: true });
    await clean(page);
  }, PHONE));

  test(`${engineName}: typed tokens change what is drawn, and the drawn weights equal the JS API's`, () => withPage(async (page) => {
    await open(page, live.plain);
    const before = await page.evaluate(firstMatrix);
    await page.type('#text', ' boat');
    await page.waitFor(() => {
      const chips = [...document.querySelectorAll('#tokens .chip')].map((c) => c.textContent);
      return chips.length === 7 && chips[6] === 'boat';
    }, null, 10000, 'the chips of the typed text');
    await page.waitFor((n) => Number(document.querySelector('#matrices canvas')?.dataset.rows) === n, 7);
    await page.waitFor(pageSettled);
    const after7 = await page.evaluate(firstMatrix);
    assert.notEqual(after7.digest, before.digest, 'the pixels changed');
    const api = await page.evaluate(apiForward, { text: `${TEXT} boat` });
    close(after7.values.flat(), api.weights, 1e-4, 'drawn weights vs API');
    for (const row of after7.values) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3, 'rows sum to 1');
    await page.press('Backspace');
    await page.waitFor(() => document.querySelectorAll('#tokens .chip')[6]?.textContent === 'boa');
    await clean(page);
  }));

  test(`${engineName}: the inspector shows a cell's value and its terms, equal to the API's`, () => withPage(async (page) => {
    await open(page, live.plain, '#stage=scores&head=1');
    const api = await page.evaluate(apiForward, { text: TEXT, head: 1 });
    const shown = await hover(page, [2, 4]);
    close([shown.value], [api.scores[2 * 6 + 4]], 1e-5, 'score (2, 4)');
    assert.equal(shown.terms.length, 16, 'd_k = 16 terms');
    shown.terms.forEach(([t, left, right], i) => {
      assert.equal(t, i);
      close([left, right], [api.q[2 * 16 + t], api.k[4 * 16 + t]], 1e-5, `term ${t}`);
    });
    await page.screenshot(shot('inspector'));
    await clean(page);
  }));

  test(`${engineName}: at 43 tokens, 1280 and 375 px, heatmap labels never overlap, the hovered cell's are drawn, the inspector fits or shows its cue`, async () => {
    const text = Array.from({ length: 43 }, (_, i) => `w${(i * 7) % 31}`).join(' ');
    for (const viewport of [DESKTOP, PHONE]) {
      await withPage(async (page) => {
        await open(page, live.plain, `#text=${encodeURIComponent(text)}&stage=weights`);
        await hover(page, [28, 20]);
        assert.deepEqual(await page.evaluate(layoutProblems, [28, 20]), [], `${viewport.width} px`);
        await page.screenshot(shot(`labels-${viewport.width}`));
      }, viewport);
    }
  });

  test(`${engineName}: a larger input is computed in the Web Worker under the strict CSP, equal to the API`, () => withPage(async (page) => {
    await open(page, live.strict, '#stage=weights');
    const long = Array.from({ length: 400 }, (_, i) => `t${i}`).join(' ');
    await page.fill('#text', long);
    await page.waitFor(() => document.querySelector('#matrices canvas')?.dataset.rows === '400', null, 30000);
    assert.match(await page.evaluate(() => document.querySelector('#status').textContent), /400 tokens .* in the worker \(wasm SIMD\)/);
    if (await page.evaluate(() => Number(document.querySelector('#matrices canvas').dataset.cell)) < 2) {
      await page.click('[aria-label="Zoom in"]');
      await page.waitFor(() => Number(document.querySelector('#matrices canvas').dataset.cell) >= 2);
    }
    const api = await page.evaluate(apiForward, { text: long });
    for (const [i, j] of [[2, 1], [150, 17]]) {
      const shown = await hover(page, [i, j]);
      close([shown.value], [api.weights[i * 400 + j]], 1e-6, `worker weight (${i}, ${j})`);
    }
    await page.screenshot(shot('worker'));
    await clean(page);
  }));

  const embedShapes = () => {
    const all = [...document.querySelectorAll('attention-lens:not([snapshot])')]; // the live ones (the post also has snapshots)
    const done = all.length >= 2 && all.every((e) => e.shadowRoot?.querySelector('.lens')?.dataset.status === 'ready' &&
      [...e.shadowRoot.querySelectorAll('figure')].every((f) => f.dataset.table !== 'pending'));
    return done && all.map((e) => ({
      shapes: [...e.shadowRoot.querySelectorAll('canvas')].map((c) => [Number(c.dataset.rows), Number(c.dataset.cols)]),
      sums: [...e.shadowRoot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')]
        .reduce((s, td) => s + Number(td.textContent), 0)),
    }));
  };
  const assertEmbeds = (embeds) => {
    assert.deepEqual(embeds.map((e) => e.shapes), [[[6, 6]], [[5, 6]]]);
    for (const e of embeds) for (const sum of e.sums) assert.ok(Math.abs(sum - 1) < 2e-3, `a row sums to ${sum}`);
  };

  test(`${engineName}: the embed renders from file://, loading nothing but its script`, () => withPage(async (page) => {
    await page.goto(live.fileUrl);
    assertEmbeds(await page.waitFor(embedShapes, null, 30000, 'both embeds'));
    const report = await clean(page, { wasm: 1 });
    // (Chromium lists file:// loads in resource timing; Firefox and WebKit list none.)
    for (const url of report.resources) assert.match(url, /\/engine-fixtures\/(probe|attention-lens-element)\.js$/);
    // (data: URLs are no request: Firefox lists a data: font of its own once the post's snapshots draw.)
    for (const url of (page.requests?.() ?? []).filter((u) => !u.startsWith('data:'))) assert.match(url, /\/engine-fixtures\/(blog-example\.html|probe\.js|attention-lens-element\.js)$/);
    await page.screenshot(shot('embed-file'));
  }, { width: 800, height: 1000 }));

  test(`${engineName}: the embed renders over http under the strict CSP, and hovering reads a cell`, () => withPage(async (page) => {
    await page.goto(`${live.blog.url}blog-example.html`);
    assertEmbeds(await page.waitFor(embedShapes, null, 30000, 'both embeds'));
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth), '704px', "the post's hashed style applies");
    const point = await page.evaluate(() => {
      const canvas = document.querySelector('attention-lens').shadowRoot.querySelector('canvas');
      canvas.scrollIntoView({ block: 'center' });
      const { left, top, cell } = canvas.dataset;
      const rect = canvas.getBoundingClientRect();
      return { x: rect.left + +left + 5.5 * +cell, y: rect.top + +top + 5.5 * +cell };
    });
    await page.mouseMove(point.x, point.y);
    await page.waitFor(() => /query “money” → key “money”: /.test(
      document.querySelector('attention-lens').shadowRoot.querySelector('.readout')?.textContent ?? ''), null, 10000, 'the readout');
    await clean(page, { wasm: 1 });
  }));

  test(`${engineName}: a hostile link is shown as text and runs nothing`, () => withPage(async (page) => {
    const hostile = '<img src=x onerror="window.__pwned=1;alert(1)"> <script>window.__pwned=2</script>';
    await open(page, live.plain, `#text=${encodeURIComponent(hostile)}&heads=banana&stage=${encodeURIComponent('javascript:alert(3)')}`);
    const seen = await page.evaluate(() => ({ pwned: window.__pwned ?? null, imgs: document.querySelectorAll('img').length,
      chips: [...document.querySelectorAll('#tokens .chip')].map((c) => c.textContent).join(''),
      notice: document.querySelector('#notice').textContent }));
    assert.equal(seen.pwned, null);
    assert.equal(seen.imgs, 0);
    assert.ok(seen.chips.includes('<imgsrc=xonerror='), `tokens shown as text: ${seen.chips}`);
    assert.match(seen.notice, /heads|Ignored/);
    await clean(page);
  }));

  test(`${engineName}: the Train view trains in its worker under the strict CSP: the loss falls, the heads draw`, () => withPage(async (page) => {
    await page.goto(`${live.strict.url}#tab=train&task=copy&layers=2&trainHeads=2&trainDModel=16&context=12&lr=0.01&batch=16&trainSeed=3`);
    await page.waitFor(() => document.body.dataset.trainReady === 'true', null, 30000, 'the Train view');
    const status = () => ({ step: Number(document.body.dataset.trainStep), ...document.querySelector('#train-status').dataset });
    await page.click('#train-step');
    const first = await page.waitFor(() => Number(document.body.dataset.trainStep) === 1 &&
      { ...document.querySelector('#train-status').dataset }, null, 30000, 'one step');
    await page.click('#train-run');
    await page.waitFor(() => Number(document.body.dataset.trainStep) >= 200, null, 60000, '200 steps');
    await page.click('#train-run'); // pause
    await page.waitFor(() => document.body.dataset.trainStatus === 'paused', null, 30000, 'paused'); // the chunk under way ends first
    const later = await page.evaluate(status);
    assert.ok(Number(later.heldOutLoss) < Number(first.heldOutLoss) - 0.3, `held-out loss ${first.heldOutLoss} → ${later.heldOutLoss}`);
    for (const [layer, head] of [[0, 0], [1, 1]]) {
      const rows = await page.waitFor(heatmapTable, `.train-tile[data-layer="${layer}"][data-head="${head}"] figure`, 10000, 'a probe head');
      assert.ok(rows.length > 1, `layer ${layer} head ${head} draws ${rows.length} rows`);
      for (const row of rows) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 2e-3, 'attention rows sum to 1');
    }
    await page.screenshot(shot('train'));
    await clean(page);
  }));

  test(`${engineName}: the embed's model="induction" draws the trained induction head, from file:// and under the strict CSP`, async () => {
    const want = await inductionHead();
    const half = INDUCTION_TEXT.length / 2;
    for (const url of [live.modelPost.fileUrl, `${live.models.url}model-post.html`]) {
      await withPage(async (page) => {
        await page.goto(url);
        const [trained, plain] = await page.waitFor(embedTables, null, 30000, `the embeds of ${url}`);
        assert.equal(trained.status, 'ready', trained.title);
        assert.match(trained.title, /trained model: Induction heads/);
        assert.equal(trained.rows.length, want.length);
        want.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(trained.rows[i][j] - v) <= 6e-5 + 1e-3 * Math.abs(v),
          `${url} [${i}][${j}]: drawn ${trained.rows[i][j]}, API ${v}`)));
        // The induction head: in the repeat, each query attends to the token after its earlier copy.
        for (let i = half; i < INDUCTION_TEXT.length; ++i) assert.ok(trained.rows[i][i - half + 1] > 0.5, `query ${i}`);
        assert.equal(plain.status, 'ready');
        assert.doesNotMatch(plain.title, /trained/);
        await clean(page, { wasm: 1 });
        if (url.startsWith('http')) await page.screenshot(shot('embed-model'));
      }, { width: 800, height: 1000 });
    }
  });

  test(`${engineName}: snapshots draw from file:// and under the strict CSP, loading no wasm and requesting nothing but the .json`, async () => {
    const want = await inductionHead();
    for (const url of [live.snapshotFileUrl, `${live.models.url}snapshot-post.html`]) {
      await withPage(async (page) => {
        await page.goto(url);
        const [model, patching, file] = await page.waitFor(embedTables, null, 30000, `the snapshots of ${url}`);
        assert.equal(model.status, 'ready', model.title);
        assert.match(model.title, /^Attention · layer 2 of 2, head 4 of 4 · induction · snapshot/);
        assert.equal(model.rows.length, want.length);
        // Within the 8-bit bound, and the screen-reader table's 4 decimals.
        want.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(model.rows[i][j] - v) <= QUANTISATION_BOUND + 6e-5,
          `${url} [${i}][${j}]: drawn ${model.rows[i][j]}, API ${v}`)));
        assert.equal(patching.status, 'ready', patching.title);
        assert.match(patching.title, /^Patching each head/);
        assert.equal(patching.rows.length, 2);
        const report = await clean(page, { wasm: 0 });
        if (url.startsWith('file:')) {
          assert.equal(file.status, 'error');
          assert.match(file.title, /cannot be read by a page opened from file:\/\/.*use the inline form/);
          for (const u of (page.requests?.() ?? []).filter((r) => !r.startsWith('data:'))) assert.match(u, /\/engine-fixtures\/(snapshot-post-file\.html|probe\.js|attention-lens-element\.js)$/);
        } else {
          assert.equal(file.status, 'ready', file.title);
          assert.deepEqual(file.rows, model.rows, 'the .json draws what the inline copy draws');
          assert.equal(report.resources.filter((u) => u.endsWith('/snapshots/induction-model.json')).length, 1, report.resources.join(' '));
          assert.deepEqual(report.resources.filter((u) => !/\/(attention-lens-element\.js|snapshots\/induction-model\.json|_*probe\.js)$/.test(u)), []);
          await page.screenshot(shot('snapshots'));
        }
      }, { width: 800, height: 1000 });
    }
  });

  test(`${engineName}: a long post of 5 snapshots and a live element leaves the page at scrollY 0 two seconds after load, at 1280 and 375 px`, async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      await withPage(async (page) => {
        await page.goto(`${live.models.url}long-post.html`);
        const shown = await page.waitFor(embedTables, null, 30000, 'the six elements');
        assert.deepEqual(shown.map((e) => e.status), Array(6).fill('ready'), shown.map((e) => e.title).join(' | '));
        await new Promise((resolve) => setTimeout(resolve, 2000)); // two seconds after load (and after every element drew)
        const at = await page.evaluate(() => ({ x: scrollX, y: scrollY, height: document.documentElement.scrollHeight }));
        assert.ok(at.height > 3 * viewport.height, `the post is long (${at.height} px)`);
        assert.deepEqual([at.x, at.y], [0, 0], `${viewport.width} px: the page stays at the top`);
        await clean(page, { wasm: 1 });
      }, viewport);
    }
  });

  test(`${engineName}: at 375 px no tab scrolls sideways, and the footer describes the tab shown`, () => withPage(async (page) => {
    const shown = async () => ({ ...await page.evaluate(() => ({ footer: document.querySelector('#status').textContent,
      overflow: document.documentElement.scrollWidth - innerWidth })),
    // Nothing wider than its panel either (a file picker 1 px too wide scrolls the page in one engine, not in another).
    out: await page.evaluate(sticksOut, `#${await page.evaluate(() => document.querySelector('[role="tab"][aria-selected="true"]').id.slice(4))}-view`) });
    await page.goto(live.strict.url);
    await page.waitFor(pageSettled, null, 30000, 'the walkthrough');
    let now = await shown();
    assert.match(now.footer, /^\d+ tokens · 4 heads · d_model 64 · forward [\d.]+ ms on the main thread/, 'the walkthrough');
    assert.ok(now.overflow <= 0, `the walkthrough is ${now.overflow} px wider than the window`);
    assert.deepEqual(now.out, [], `the walkthrough: nothing wider than its panel`);
    await page.click('#tab-train');
    await page.waitFor(() => document.body.dataset.trainReady === 'true' && /^Training on /.test(document.querySelector('#status').textContent),
      null, 30000, 'the Train view and its footer');
    now = await shown();
    assert.match(now.footer, /^Training on [a-z]+: \d+ layers? × \d+ heads? · d_model \d+ · step 0 · ready, in the training worker$/);
    assert.ok(now.overflow <= 0, `the Train view is ${now.overflow} px wider than the window`);
    assert.deepEqual(now.out, [], `the Train view: nothing wider than its panel`);
    await page.click('#tab-model');
    await page.waitFor(() => document.body.dataset.modelName === 'english' && /^english: /.test(document.querySelector('#status').textContent) &&
      document.querySelector('#model-head-grid canvas') !== null, null, 30000, 'the Your model view and its footer');
    now = await shown();
    assert.match(now.footer, /^english: \d+ tokens · 2 layers × 4 heads · d_model 64 · forward [\d.]+ ms in the model worker( on \d+ threads)? \(wasm SIMD\)$/);
    assert.ok(now.overflow <= 0, `the Your model view is ${now.overflow} px wider than the window`);
    assert.deepEqual(now.out, [], `the Your model view: nothing wider than its panel`);
    await page.screenshot(shot('yourmodel-375'), { fullPage: true });
    await page.click('#tab-walkthrough');
    now = await page.waitFor(() => !document.querySelector('#walkthrough-view').hidden && document.querySelector('#status').textContent, null, 10000);
    assert.match(now, /^\d+ tokens · 4 heads · d_model 64 /, 'the walkthrough\'s own line again');
    await clean(page);
  }, PHONE));

  test(`${engineName}: the first screen holds Open files… beside Load (1280 × 900, 375 × 800), the greyed controls' reason, and on a phone the Train tab's live loss beside Start`, async () => {
    for (const viewport of [DESKTOP, FIRST_SCREEN_PHONE]) {
      await withPage(async (page) => {
        await page.goto(`${live.strict.url}#tab=model`);
        await page.waitFor(() => document.body.dataset.modelReady === 'true', null, 30000, 'the Your model view');
        assert.deepEqual(await page.evaluate(outsideFirstScreen, ['#model-hub-load', '#model-open-files']), [], `${viewport.width} px: in the first screen`);
        await page.goto(`${live.strict.url}#stage=qkv`); // the opening model's greyed controls
        await page.waitFor(pageSettled, null, 30000, 'the walkthrough');
        const why = await page.evaluate(() => ['tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask'].map((id) => {
          const note = document.getElementById(document.getElementById(id).getAttribute('aria-describedby') ?? '');
          return note && note.getBoundingClientRect().height > 0 ? note.textContent : `#${id}: no reason shown`;
        }));
        for (const text of why) assert.match(text, /^The trained english model fixes these/);
        await clean(page);
      }, viewport);
    }
    await withPage(async (page) => {
      await page.goto(`${live.strict.url}#tab=train`);
      await page.waitFor(() => document.body.dataset.trainReady === 'true', null, 30000, 'the Train view');
      await page.click('#train-run');
      await page.waitFor(() => Number(document.body.dataset.trainStep) > 0 && Number.isFinite(Number(document.querySelector('#train-live-loss').textContent)),
        null, 30000, 'the live loss');
      assert.deepEqual(await page.evaluate(outsideFirstScreen, ['#train-run', '#train-live-loss', '#train-live-heads canvas']), [], 'beside Start');
      await page.click('#train-run'); // pause
      await page.waitFor(() => document.body.dataset.trainStatus === 'paused', null, 30000, 'paused');
      await page.screenshot(shot('train-live-375'));
      await clean(page);
    }, FIRST_SCREEN_PHONE);
  });

  // The Your model view's checks (model-checks.mjs), on the same engine and servers.
  modelChecks(engineName, { live, withPage, shot, clean });
}
