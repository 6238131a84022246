// GGUF files in the Your model view (Chromium): a .gguf picked as a file (tests/data/gguf's tiny
// Q8_0 Llama with a tokenizer in its metadata, tests/js/gguf-support.mjs) loads with no config, its
// status line names the file, its format (m.weights.formats) and its size, the facts line says
// nothing of dequantizing (Q8_0 is kept as stored), and every head is drawn as the JS API computes it on the same bytes; a
// config.json dropped with it is said not read; a hostile or truncated .gguf shows the core's
// message and the model stays. A GGUF repo by Hub id + File from the local stand-in of the Hub:
// the File row (an unlisted repo's .gguf files as the Hub lists them, lens.hubFiles, paged; the known files' menu for a listed one;
// a split model one line not chosen; an unknown repo said in one line, the box kept), the load,
// only the file asked for, its header first by Range; the link's hub + hubFile (a reload loads the same file), and the listed repos' File menus.
// Screenshots at 1280 and 375 px after the GGUF load and of the File row (build/screenshots/gguf-*.png; gguf-hub-listed-*.png: a listed repo's files).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, screenshotDir, serveDist, tableNumbers } from './browser.mjs';
import { assertHeadsDrawn, headFigure } from './hub-fixture.mjs';
import { strictCspAlso } from '../../scripts/lib/csp.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';
import { llamaQ8WithTokenizer } from '../js/gguf-support.mjs';
import { DATA_DIR } from '../js/support.mjs';
import { formatBytes } from '../../web/shared/format.js';
import { HUB_MODELS, ggufFileLabel } from '../../web/shared/hub-models.js';

const GGUF = llamaQ8WithTokenizer();
const TRUNCATED = readFileSync(`${DATA_DIR}malformed-gguf/truncated.gguf`);
const IQ4_NL = readFileSync(`${DATA_DIR}malformed-gguf/iq4_nl.gguf`);
const REPO = 'org/tiny-GGUF';
const FILE = 'tiny-Q8_0.gguf';

let hub;
let server;
let chrome;

// An unlisted repo of several .gguf files, as the Hub lists them (lens.hubFiles): the one that
// loads, others only listed (their bytes are not read), a model split into two files, a folder.
const MANY = 'org/many-GGUF';
const MANY_FILES = {
  'README.md': '# many', [FILE]: GGUF, 'tiny-Q4_K_M.gguf': new Uint8Array(1500).fill(1), 'F32/tiny-F32.gguf': new Uint8Array(250_000).fill(2),
  'big-Q8_0-00001-of-00002.gguf': new Uint8Array(3000).fill(3), 'big-Q8_0-00002-of-00002.gguf': new Uint8Array(2000).fill(3),
};

before(async () => {
  hub = await startStandIn({ [REPO]: { 'README.md': '# tiny', [FILE]: GGUF }, [MANY]: MANY_FILES });
  [server, chrome] = await Promise.all([serveDist({ csp: strictCspAlso([hub.endpoint, hub.storage]) }), launchBrowser()]);
});
after(async () => {
  await chrome?.close();
  server?.stop();
  await hub?.close();
});

const upload = (name, bytes) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });

/** In the page: the JS API on the same GGUF bytes (or the Hub file), each layer's attention on `text`. */
async function apiGguf({ bytes, hub: id, file, endpoint, text }) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens();
  const m = await (bytes ? lens.loadCheckpoint({ weights: new Blob([Uint8Array.from(bytes)]) }) : lens.loadCheckpoint({ hub: id, file, endpoint }));
  const { ids } = m.tokenize(text);
  const { attention } = m.forward(ids, { n: ids.length });
  const out = { n: ids.length, formats: { ...m.weights.formats }, config: { ...m.config }, attention: attention.map((a) => Array.from(a)) };
  m.dispose();
  return out;
}

/** The problems the page reported, less the stand-in's origins and its refusals on purpose (404 for a missing file, 401 for a repo it does not have). */
const realProblems = (problems) => problems().filter((p) => ![hub.endpoint, hub.storage].some((o) => p.includes(`left the origin: ${o}`)) &&
  !/Failed to load resource: the server responded with a status of (401|404)/.test(p));

/** The Hub form's screenshot at 1280 and 375 px (build/screenshots/`name`-1280.png, -375.png), nothing wider than the phone's screen. */
async function shotHubForm(page, name) {
  mkdirSync(screenshotDir, { recursive: true });
  await page.locator('#model-hub-form').screenshot({ path: join(screenshotDir, `${name}-1280.png`) });
  await page.setViewportSize({ width: 375, height: 900 });
  await page.locator('#model-hub-form').screenshot({ path: join(screenshotDir, `${name}-375.png`) });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth > innerWidth), false);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('a .gguf file picked loads with no config: its format and size said, every head as the API computes; a broken .gguf is refused and the model stays', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.match(await page.getAttribute('#model-files', 'accept'), /(^|,)\.gguf(,|$)/);
  assert.match(await page.textContent('#model-drop'), /one \.gguf file/);

  await page.setInputFiles('#model-files', [upload('tiny-Q8_0.gguf', GGUF)]);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  await page.waitForSelector('#model-finder tbody tr');
  const text = await page.inputValue('#model-text');
  const api = await page.evaluate(apiGguf, { bytes: Array.from(GGUF), text });
  assert.deepEqual(api.formats, { Q8_0: 16, F32: 5 });
  const status = await page.textContent('#model-status');
  assert.ok(status.startsWith(`tiny-Q8_0.gguf: GGUF, Q8_0 × 16, F32 × 5 tensors · file ${formatBytes(GGUF.length)} · 2 layers × 4 heads · d_model 64 · ` +
    '96 tokens · context 64 · wasm memory'), status);
  assert.equal(await page.getAttribute('#model-status', 'data-container'), 'GGUF');
  // Q8_0 is kept as stored (the core's catalog.parameterBytes lists it): nothing said of dequantizing.
  const facts = await page.textContent('#model-facts');
  assert.match(facts, /^Llama · 2 layers · /);
  assert.doesNotMatch(facts, /dequantized/);
  assert.equal(await page.textContent('#model-text-info'), `${api.n} tokens`);
  await assertHeadsDrawn((layer, head) => tableNumbers(page, headFigure(layer, head)), { layers: 2, heads: 4 }, api);
  const next = await page.$$eval('#model-next li .model-next-token', (items) => items.map((i) => i.textContent));
  assert.equal(next.length, 10);
  assert.ok(next.every((t) => t.length > 0 && !t.startsWith('#')), JSON.stringify(next));

  // Screenshots of the view with the GGUF model loaded (looked at by hand: the status and facts lines wrap, nothing sticks out).
  const dir = screenshotDir;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, 'gguf-file-1280.png'), fullPage: false });
  await page.setViewportSize({ width: 375, height: 900 });
  await page.locator('#model-status').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(dir, 'gguf-file-375.png'), fullPage: false });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth > innerWidth);
  assert.equal(wide, false, 'nothing wider than a 375 px screen');
  await page.setViewportSize({ width: 1280, height: 900 });

  // A config.json dropped with it: the model loads, and the load line says the config was not read.
  await page.setInputFiles('#model-files', [upload('tiny-Q8_0.gguf', GGUF), upload('config.json', '{"model_type": "gpt2"}')]);
  await page.waitForSelector('body[data-model-loads="2"]', { timeout: 30000 });
  assert.equal(await page.textContent('#model-load-status'), "config.json was not read: a GGUF file's metadata holds its config.");

  // Refused, each with the core's message; the loaded model and its heads stay.
  const kept = await tableNumbers(page, headFigure(1, 3));
  const refusals = [
    [[upload('truncated.gguf', TRUNCATED)], /Could not load the checkpoint: .*runs past the end of the data section/],
    [[upload('iq4_nl.gguf', IQ4_NL)], /Could not load the checkpoint: .*'blk\.0\.ffn_up\.weight' is IQ4_NL; supported in GGUF files: F32, F16, BF16, Q8_0/],
    [[upload('a.gguf', GGUF), upload('b.gguf', GGUF)], /^Found 2 \.gguf files \(a\.gguf, b\.gguf\): drop one \.gguf file at a time/],
    [[upload('a.gguf', GGUF), upload('model.safetensors', GGUF)], /^Found a\.gguf and model\.safetensors: drop one checkpoint at a time/],
  ];
  for (const [files, message] of refusals) {
    await page.setInputFiles('#model-files', files);
    await page.waitForFunction((source) => new RegExp(source).test(document.querySelector('#model-error').textContent), message.source,
      { timeout: 30000 });
    await page.waitForSelector('body[data-model-loading="false"]');
    assert.equal(await page.locator('#model-error').isVisible(), true);
    assert.match(await page.textContent('#model-status'), /^tiny-Q8_0\.gguf: GGUF/);
    assert.deepEqual(await tableNumbers(page, headFigure(1, 3)), kept, 'the model and its heads stay');
  }
  // The view keeps working: a keystroke runs the kept model.
  const typed = await page.evaluate(apiGguf, { bytes: Array.from(GGUF), text: 'the cat sat' });
  await page.fill('#model-text', 'the cat sat');
  await page.waitForFunction((n) => document.querySelector('#model-text-info').textContent === `${n} tokens`, typed.n);
  await assertHeadsDrawn((layer, head) => tableNumbers(page, headFigure(layer, head)), { layers: 2, heads: 4 }, typed);
  assert.deepEqual(realProblems(problems), []);
  await page.close();
});

test('a GGUF repo by Hub id + File: the file alone fetched, drawn as the API computes, in the link (a reload loads it again); the listed repos\' File menus', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-source="shipped"]', { timeout: 30000 });

  // A listed GGUF repo: its known files in the File menu (the first chosen), the facts line of the chosen one; Llama 3.2's files (rope_freqs.weight) are read: Load enabled.
  const smol = HUB_MODELS.find((m) => m.id === 'bartowski/SmolLM2-135M-Instruct-GGUF');
  await page.selectOption('#model-hub-pick', smol.id);
  assert.equal(await page.locator('#model-hub-file-row').isVisible(), true);
  const tab = await page.evaluate(async () => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const { families, parameterBytes, limits } = (await loadAttentionLens()).catalog;
    return { families, parameterBytes, maxParameterBytes: limits.maxCheckpointParameterBytes };
  });
  assert.deepEqual(await page.$$eval('#model-hub-file-pick option', (os) => os.map((o) => [o.value, o.textContent])),
    [...smol.files.map((f) => [f.file, ggufFileLabel(smol, f, tab)]), ['', 'Another file (type its name)']]);
  assert.equal(await page.inputValue('#model-hub-file-pick'), 'SmolLM2-135M-Instruct-Q8_0.gguf');
  assert.equal(await page.locator('#model-hub-file').isHidden(), true);
  assert.equal(await page.textContent('#model-hub-line'), 'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q8_0.gguf · 145 MB · Llama · 135 M parameters');
  assert.equal(await page.isDisabled('#model-hub-load'), false);
  // The Hub's form with the File row, at 1280 and 375 px (nothing wider than the screen).
  await shotHubForm(page, 'gguf-hub-file');
  // Its Q4_K_M (Q4_K rows beside Q5_0 ones where 576 is not whole 256-value blocks) is read: Load enabled.
  await page.selectOption('#model-hub-file-pick', 'SmolLM2-135M-Instruct-Q4_K_M.gguf');
  assert.equal(await page.textContent('#model-hub-line'), 'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q4_K_M.gguf · 105 MB · Llama · 135 M parameters');
  assert.equal(await page.isDisabled('#model-hub-load'), false);
  // Llama 3.2's files (Llama 3's RoPE scaling as rope_freqs.weight) are read: Load enabled, nothing said against them.
  await page.selectOption('#model-hub-pick', 'bartowski/Llama-3.2-1B-Instruct-GGUF');
  assert.equal(await page.textContent('#model-hub-line'), 'bartowski/Llama-3.2-1B-Instruct-GGUF · Llama-3.2-1B-Instruct-Q8_0.gguf · 1.32 GB · Llama · ' +
    '1.24 B parameters');
  assert.equal(await page.isDisabled('#model-hub-load'), false);
  await page.selectOption('#model-hub-pick', smol.id);
  // "Another file": the box shown and focused; Load waits for a name.
  await page.selectOption('#model-hub-file-pick', '');
  assert.equal(await page.locator('#model-hub-file').isVisible(), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'model-hub-file');
  assert.equal(await page.isDisabled('#model-hub-load'), true);
  // A listed .safetensors repo: no File row.
  await page.selectOption('#model-hub-pick', 'openai-community/gpt2');
  assert.equal(await page.locator('#model-hub-file-row').isHidden(), true);

  // An unlisted repo whose id says GGUF: the File box at once, then (its files listed by the Hub) the menu of its one .gguf file, chosen; loaded from the stand-in.
  const listed = Number(await page.getAttribute('body', 'data-model-hub-listed') ?? 0);
  await page.fill('#model-hub-id', REPO);
  assert.equal(await page.locator('#model-hub-file-row').isVisible(), true);
  await page.waitForFunction((n) => Number(document.body.dataset.modelHubListed ?? 0) > n, listed);
  assert.deepEqual(await page.$$eval('#model-hub-file-pick option', (os) => os.map((o) => o.value)), [FILE, '']);
  assert.equal(await page.inputValue('#model-hub-file-pick'), FILE);
  assert.equal(await page.locator('#model-hub-file').isHidden(), true);
  assert.equal(await page.getAttribute('#model-hub-file-label', 'for'), 'model-hub-file-pick');
  hub.reset();
  await page.click('#model-hub-load');
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  await page.waitForSelector('#model-finder tbody tr');
  assert.equal(hub.count('hub', 'config.json'), 0, 'no config.json asked for');
  // Its header read first, by Range (in a browser the API then keeps the whole file in Cache Storage).
  const reads = hub.requests.filter((r) => r.method === 'GET');
  assert.ok(reads.every((r) => r.path.endsWith(`/${FILE}`)), `only the file asked for: ${JSON.stringify(reads)}`);
  assert.equal(reads[0].range, 'bytes=0-65535');
  const status = await page.textContent('#model-status');
  assert.ok(status.startsWith(`${REPO}, file ${FILE} from ${hub.endpoint}: GGUF, Q8_0 × 16, F32 × 5 tensors · `), status);
  const text = await page.inputValue('#model-text');
  const api = await page.evaluate(apiGguf, { hub: REPO, file: FILE, endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tableNumbers(page, headFigure(layer, head)), { layers: 2, heads: 4 }, api);
  // The link names the repo and its file; opened afresh, it loads the same file.
  const url = page.url();
  assert.match(url, /[#&]hub=org%2Ftiny-GGUF(&|$)/);
  assert.match(url, /[#&]hubFile=tiny-Q8_0\.gguf(&|$)/);
  const again = await openPage(chrome.browser, server.url);
  await again.page.goto(url);
  await again.page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  assert.ok((await again.page.textContent('#model-status')).startsWith(`${REPO}, file ${FILE} from ${hub.endpoint}: GGUF`));
  assert.equal(await again.page.inputValue('#model-hub-file'), FILE);
  await assertHeadsDrawn((layer, head) => tableNumbers(again.page, headFigure(layer, head)), { layers: 2, heads: 4 }, api);
  await again.page.close();

  // A file the repo does not hold (typed: "Another file"): the API's message, the model stays.
  await page.selectOption('#model-hub-file-pick', '');
  await page.fill('#model-hub-file', 'tiny-Q4_K_M.gguf');
  await page.click('#model-hub-load');
  await page.waitForFunction(() => /tiny-Q4_K_M\.gguf was not found in 'org\/tiny-GGUF'/.test(document.querySelector('#model-error').textContent),
    undefined, { timeout: 30000 });
  await page.waitForSelector('body[data-model-loading="false"]');
  assert.ok((await page.textContent('#model-status')).startsWith(`${REPO}, file ${FILE}`));
  assert.deepEqual(realProblems(problems), []);
  await page.close();
});

test('an unlisted GGUF repo typed: its .gguf files listed by the Hub (paged) in the File menu with their sizes, a split model not choosable; one picked loads and the status names it; an unknown repo is said and the box stays usable', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-source="shipped"]', { timeout: 30000 });
  const listedCount = async () => Number((await page.getAttribute('body', 'data-model-hub-listed')) ?? 0);

  // Typed, the listing held by the stand-in: a quiet status while it is asked; 2 entries a page (the Link followed).
  hub.treePage = 2;
  hub.reset();
  hub.hold(`/api/models/${MANY}/tree/main`);
  const before = await listedCount();
  await page.fill('#model-hub-id', MANY.slice(0, -1));
  await page.type('#model-hub-id', MANY.slice(-1)); // keystrokes: only the last one's listing is asked
  await page.waitForFunction(() => document.querySelector('#model-hub-files-status').textContent === "Listing the repo's files…");
  assert.equal(await page.getAttribute('#model-hub-files-status', 'role'), 'status');
  hub.release();
  await page.waitForFunction((n) => Number(document.body.dataset.modelHubListed ?? 0) > n, before);
  const trees = hub.requests.filter((r) => r.path.startsWith('/api/models/'));
  assert.ok(trees.every((r) => r.path === `/api/models/${MANY}/tree/main`), JSON.stringify(trees));
  assert.equal(trees.length, 4, 'the 7 entries (6 files and the folder F32) at 2 a page');
  assert.equal(await page.textContent('#model-hub-files-status'), '');

  // The menu: each .gguf file by its quant (its name where the name has none) and size, the split model one line that cannot be chosen, "Another file" last.
  const options = await page.$$eval('#model-hub-file-pick option', (os) => os.map((o) => [o.value, o.textContent, o.disabled]));
  assert.deepEqual(options, [
    ['F32/tiny-F32.gguf', 'F32 · 250 kB', false],
    ['tiny-Q4_K_M.gguf', 'Q4_K_M · 1.5 kB', false],
    [FILE, `Q8_0 · ${formatBytes(GGUF.length)}`, false],
    ['big-Q8_0-00001-of-00002.gguf', 'Q8_0 · 5 kB · split into 2 files — not read', true],
    ['', 'Another file (type its name)', false],
  ]);
  assert.equal(await page.inputValue('#model-hub-file-pick'), 'F32/tiny-F32.gguf', 'the first file chosen');
  assert.equal(await page.getAttribute('#model-hub-file-label', 'for'), 'model-hub-file-pick');
  assert.equal(await page.locator('#model-hub-file').isHidden(), true);
  assert.equal(await page.textContent('#model-hub-line'), `${MANY} · F32/tiny-F32.gguf · 250 kB`);
  // From the keyboard: the menu focused, a key chooses the next file; the facts line follows.
  await page.focus('#model-hub-file-pick');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('#model-hub-file-pick').value === 'tiny-Q4_K_M.gguf');
  assert.equal(await page.textContent('#model-hub-line'), `${MANY} · tiny-Q4_K_M.gguf · 1.5 kB`);

  // The row at 1280 and 375 px (looked at by hand), nothing wider than the screen.
  await shotHubForm(page, 'gguf-hub-listed');

  // One picked and loaded: the status line names the repo and the file; only that file is read.
  await page.selectOption('#model-hub-file-pick', FILE);
  assert.equal(await page.textContent('#model-hub-line'), `${MANY} · ${FILE} · ${formatBytes(GGUF.length)}`);
  hub.reset();
  await page.click('#model-hub-load');
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  const status = await page.textContent('#model-status');
  assert.ok(status.startsWith(`${MANY}, file ${FILE} from ${hub.endpoint}: GGUF, Q8_0 × 16, F32 × 5 tensors · `), status);
  // The file's size as the File menu wrote it (one unit, one count), not the weights' bytes.
  assert.ok(status.includes(` · file ${formatBytes(GGUF.length)} · `), status);
  const kept = await page.evaluate(() => [...document.querySelectorAll('#model-cache-list .model-cache-line')].map((l) => l.textContent));
  assert.deepEqual(kept, [`${MANY} @ main · ${formatBytes(GGUF.length)} kept · 1 file`], 'the kept file: the same count');
  assert.ok(hub.requests.filter((r) => r.method === 'GET').every((r) => r.path.endsWith(`/${FILE}`)), JSON.stringify(hub.requests));

  // Kept for the tab's life: the same id typed again lists from memory (no request), its menu back at once.
  hub.reset();
  await page.fill('#model-hub-id', 'org/other');
  await page.fill('#model-hub-id', MANY);
  assert.equal(await page.locator('#model-hub-file-pick').isVisible(), true);
  await page.waitForTimeout(600);
  assert.equal(hub.requests.filter((r) => r.path.startsWith(`/api/models/${MANY}/`)).length, 0);

  // A repo the stand-in does not have: said in one line, the File row back to the typed box, usable; the model stays.
  const asked = await listedCount();
  await page.fill('#model-hub-id', 'org/missing-GGUF');
  await page.waitForFunction((n) => Number(document.body.dataset.modelHubListed ?? 0) > n, asked);
  assert.equal(await page.textContent('#model-hub-files-status'),
    `Could not list the repo's files: repository 'org/missing-GGUF' was not found on ${hub.endpoint} (or it is private)`);
  assert.equal(await page.$$eval('#model-hub-files-status *', (children) => children.length), 0, 'text, not HTML');
  assert.equal(await page.locator('#model-hub-file-pick').isHidden(), true);
  assert.equal(await page.locator('#model-hub-file').isVisible(), true);
  assert.equal(await page.getAttribute('#model-hub-file-label', 'for'), 'model-hub-file');
  await page.fill('#model-hub-file', 'x-Q8_0.gguf');
  assert.equal(await page.isDisabled('#model-hub-load'), false);
  assert.ok((await page.textContent('#model-status')).startsWith(`${MANY}, file ${FILE}`));
  // And the page keeps working: the listed repo typed again shows its menu (the error gone).
  await page.fill('#model-hub-id', MANY);
  assert.equal(await page.textContent('#model-hub-files-status'), '');
  assert.equal(await page.locator('#model-hub-file-pick').isVisible(), true);
  hub.treePage = Infinity;
  assert.deepEqual(realProblems(problems), []);
  await page.close();
});
