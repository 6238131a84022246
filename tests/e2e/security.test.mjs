// The page and the embed as an attacker would feed them, in Chromium: under a strict
// Content-Security-Policy (scripts/serve.mjs --csp) they compute with no violation; a hostile
// shared link (markup in tokens, javascript: URLs, huge values, __proto__ keys) runs nothing and
// is shown as text; hostile .safetensors uploads (the malformed corpus, markup in names, NaN and
// huge weights) give the error banner and keep the last good state. Nothing here waits on a timer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { STRICT_CSP } from '../../scripts/lib/csp.mjs';
import { MAX_TEXT } from '../../web/shared/state.js';
import { CORPUS_LAYER, malformedCorpus, writeSafetensors } from '../js/support.mjs';
import { hoverCell, instrument, launchBrowser, openPage, serveDist, withRandomWeights } from './browser.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

let plain; // dist/ with no CSP: the page itself must be safe, not only the browser's policy
let strict; // dist/ with STRICT_CSP on every response
let chrome;

before(async () => {
  [plain, strict, chrome] = await Promise.all([serveDist(), serveDist({ csp: true }), launchBrowser()]);
});

after(async () => {
  await chrome?.close();
  plain?.stop();
  strict?.stop();
});

/**
 * Opens dist/index.html + hash on `server`, instrumented; resolves once the page is ready, with
 * the Content-Security-Policy header of every response by URL (`policies`).
 */
async function openApp(server, hash = '') {
  const { page, problems } = await openPage(chrome.browser, server.url);
  const { dialogs } = await instrument(page);
  const policies = new Map();
  page.on('response', (r) => policies.set(r.url(), r.headers()['content-security-policy'] ?? null));
  await page.goto(server.url + withRandomWeights(hash));
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return { page, problems, dialogs, policies };
}

/** Waits until the token chips read `tokens` and the first heatmap has their rows. */
async function drawn(page, count) {
  await page.waitForFunction((n) => document.querySelectorAll('#tokens .chip').length === n &&
    Number(document.querySelector('#matrices canvas')?.dataset.rows) === n, count);
}

/** Everything a payload could have left behind (shadow roots included): elements, handlers, globals. */
function traces(page) {
  return page.evaluate(() => {
    const all = [];
    const walk = (root) => {
      for (const node of root.querySelectorAll('*')) {
        all.push(node);
        if (node.shadowRoot) walk(node.shadowRoot);
      }
    };
    walk(document);
    return {
      pwned: window.__pwned ?? null,
      polluted: ({}).polluted ?? Object.prototype.polluted ?? null,
      foreign: all.filter((e) => e.matches('img, iframe, object, embed, frame, svg[onload], base, meta[http-equiv]')).length,
      // (an inline snapshot's <script type="application/json"> is a data block: browsers never run it)
      inlineScripts: all.filter((e) => e.localName === 'script' && !e.src && e.type !== 'application/json').length,
      handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).map((e) => e.localName),
      javascriptLinks: all.filter((e) => /^\s*javascript:/i.test(e.getAttribute('href') ?? e.getAttribute('src') ?? '')).length,
    };
  });
}

const CLEAN = { pwned: null, polluted: null, foreign: 0, inlineScripts: 0, handlers: [], javascriptLinks: 0 };

/** The CSP violations the document recorded. */
const violations = (page) => page.evaluate(() => window.__cspViolations);

// ---- a strict Content-Security-Policy ---------------------------------------------------------

test('the page computes under a strict CSP: no violation, the main thread and the worker compute, typing, stepping, the inspector', async () => {
  const { page, problems, dialogs, policies } = await openApp(strict, '#stage=scores');
  await drawn(page, 6);
  // The page, the worker script, the API module and the wasm all came with the strict policy.
  const served = [...policies].filter(([url]) => /\/$|engine-worker.*\.js$|attention-lens\.(mjs|wasm)$/.test(url));
  assert.equal(served.length, 4, served.map(([url]) => url).join(' '));
  for (const [url, policy] of served) assert.equal(policy, STRICT_CSP, url);
  // Small inputs are computed on the page's thread (in the keystroke's frame); larger ones in
  // the Web Worker, which must run under the policy too (a blocked worker or wasm compile would
  // leave everything on the main thread).
  assert.match(await page.locator('#status').textContent(), /on the main thread \(wasm SIMD\)/);
  await page.fill('#text', Array.from({ length: 500 }, (_, i) => `t${i}`).join(' '));
  await page.waitForFunction(() => Number(document.querySelector('#matrices canvas')?.dataset.rows) === 500);
  assert.match(await page.locator('#status').textContent(), /500 tokens .* in the worker \(wasm SIMD\)/);
  // Cell (2, 1) by keyboard: at 500 tokens cells are 1 px, too small to hover reliably.
  await page.locator('#matrices canvas').first().focus();
  for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight']) await page.keyboard.press(key);
  await page.waitForFunction(() => /i = 2\).*j = 1\)/.test(document.querySelector('.inspector-where')?.textContent ?? ''));

  await page.fill('#text', 'Attention is all you need');
  await page.waitForFunction(() => document.querySelector('#tokens .chip:nth-child(3)')?.textContent === 'all');
  await drawn(page, 5);
  assert.match(await page.locator('#status').textContent(), /on the main thread/);
  await hoverCell(page, 0, 1, 3);
  await page.waitForFunction(() => /i = 1\).*j = 3\)/.test(document.querySelector('.inspector-where')?.textContent ?? ''));
  assert.ok(Number.isFinite(Number(await page.locator('[data-testid="cell-value"]').getAttribute('data-value'))));
  assert.ok(await page.locator('#inspector .katex').count() >= 1, 'the inspector typesets its equation');

  // Every stage typesets its equation with the bundled KaTeX fonts (font-src 'self').
  for (const stage of await page.locator('#stage-list button').evaluateAll((bs) => bs.map((b) => b.dataset.stage))) {
    await page.click(`#stage-list [data-stage="${stage}"]`);
    await page.waitForFunction((id) => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === id, stage);
    assert.ok(await page.locator('#equation .katex').count() >= 1, `stage ${stage} typesets its equation`);
  }
  const fonts = await page.evaluate(async () => {
    await document.fonts.ready;
    return [...document.fonts].filter((f) => f.status !== 'unloaded').map((f) => `${f.family} ${f.style} ${f.weight} ${f.status}`);
  });
  assert.ok(fonts.some((f) => f.includes('KaTeX') && f.endsWith('loaded')), fonts.join(', '));
  assert.deepEqual(fonts.filter((f) => f.endsWith('error')), [], 'no font was blocked');

  // A weights download builds a blob: URL; an upload is read in the page: both allowed.
  const download = page.waitForEvent('download');
  await page.click('#weights-save');
  assert.match((await download).suggestedFilename(), /\.safetensors$/);

  assert.deepEqual(await violations(page), []);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('the blog example and its elements, one with hostile attributes, run under the strict CSP (plus a hash for the post\'s own <style>)', async () => {
  // The example post has one inline <style> block of its own: a strict site allows it by hash,
  // as it would any author's inline style. The element itself needs nothing inline.
  const html = readFileSync(`${dist}blog-example.html`, 'utf8');
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
  assert.equal(styles.length, 1);
  const hash = createHash('sha256').update(styles[0]).digest('base64');
  const policy = STRICT_CSP.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`);
  const server = await serveDist({ csp: policy });
  try {
    const { page, problems } = await openPage(chrome.browser, server.url);
    const { dialogs } = await instrument(page);
    const response = await page.goto(`${server.url}blog-example.html`);
    assert.equal(response.headers()['content-security-policy'], policy);
    await page.waitForFunction(() => {
      const all = [...document.querySelectorAll('attention-lens')];
      return all.length === 5 && all.every((e) => e.shadowRoot?.querySelector('.lens')?.dataset.status === 'ready');
    }, null, { timeout: 30000 });
    // The two live elements' heatmaps (the three snapshots after them draw their own).
    const shapes = await page.evaluate(() => [...document.querySelectorAll('attention-lens:not([snapshot])')].map((host) =>
      [...host.shadowRoot.querySelectorAll('canvas')].map((c) => [Number(c.dataset.rows), Number(c.dataset.cols)])));
    assert.deepEqual(shapes, [[[6, 6]], [[5, 6]]]);
    // The post's style applied (hash allowed), and the element's constructable stylesheet too.
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth), '704px');
    assert.ok(await page.evaluate(() => document.querySelector('attention-lens').shadowRoot.adoptedStyleSheets.length) >= 1);
    // Hovering reads a cell: the last query, "money", and the last key.
    const canvas = page.locator('attention-lens canvas').first();
    const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell }));
    await canvas.hover({ position: { x: g.left + 5.5 * g.cell, y: g.top + 5.5 * g.cell } });
    await page.waitForFunction(() => /query “money” → key “money”: /.test(
      document.querySelector('attention-lens').shadowRoot.querySelector('.readout')?.textContent ?? ''));
    // An element added with hostile attributes: each is reported as text, the defaults render.
    const hostile = {
      text: '__proto__ constructor <img src=x onerror="window.__pwned=9">', mask: '__proto__', step: 'constructor',
      positional: 'toString', tokenizer: 'hasOwnProperty', heads: '1e400', 'd-model': 'Infinity', head: '-1',
      window: '99999999999', seed: 'javascript:alert(10)',
    };
    await page.evaluate((attributes) => {
      const element = document.createElement('attention-lens');
      for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
      document.querySelector('article').append(element);
    }, hostile);
    await page.waitForFunction(() => document.querySelectorAll('attention-lens')[5]?.shadowRoot
      ?.querySelector('.lens')?.dataset.status === 'ready');
    const shown = await page.evaluate(() => {
      const root = document.querySelectorAll('attention-lens')[5].shadowRoot;
      return { problems: [...root.querySelectorAll('.problems li')].map((li) => li.textContent),
        chips: [...root.querySelectorAll('.tokens > *')].map((c) => c.textContent),
        matrices: [...root.querySelectorAll('canvas')].map((c) => [Number(c.dataset.rows), Number(c.dataset.cols)]) };
    });
    for (const name of Object.keys(hostile).filter((k) => k !== 'text')) {
      assert.ok(shown.problems.some((p) => p.startsWith(`${name}="${hostile[name]}" is not valid`)), `${name}: ${shown.problems.join(' | ')}`);
    }
    assert.ok(['__proto__', 'constructor', '<', 'img', 'onerror'].every((t) => shown.chips.includes(t)), shown.chips.join(' '));
    assert.equal(shown.matrices.length, 1);
    assert.deepEqual(await traces(page), CLEAN);

    assert.equal(await page.evaluate(() => window.__wasmInstances), 1);
    assert.deepEqual(await violations(page), []);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems(), []);
    await page.context().close();
  } finally {
    server.stop();
  }
});

// ---- a hostile shared link --------------------------------------------------------------------

const MARKUP = '<img src=x onerror="window.__pwned=1;alert(1)"> <svg onload="window.__pwned=2"></svg> ' +
  '<script>window.__pwned=3</script> <a href="javascript:window.__pwned=4">link</a> ' +
  '<iframe src="javascript:alert(5)"></iframe> {{constructor.constructor(\'alert(6)\')()}} __proto__ constructor';

test('a hostile shared link runs nothing: markup stays text, bad and huge values are ignored, no pollution', async () => {
  const requests = [];
  const params = new URLSearchParams();
  params.append('text', MARKUP);
  params.append('cross', '1');
  params.append('source', `${MARKUP} ${'A'.repeat(100000)}`); // huge: cut to MAX_TEXT (20 000) characters
  for (const [key, value] of [['stage', 'javascript:alert(7)'], ['head', '999999'], ['heads', '1e400'],
    ['seed', '-1'], ['dModel', 'Infinity'], ['window', '99999999999'], ['positional', '__proto__'],
    ['mask', 'constructor'], ['preset', 'toString'], ['view', '<b>x</b>'], ['cells', '__proto__'],
    ['__proto__', 'polluted'], ['__proto__[polluted]', '1'], ['constructor[prototype][polluted]', '1'],
    ['hasOwnProperty', '1'], ['<img src=y onerror=alert(8)>', '1']]) params.append(key, value);
  const { page, problems, dialogs } = await openApp(plain, `#${params}`);
  page.on('request', (r) => requests.push(r.url()));
  await page.waitForFunction(() => document.querySelectorAll('#source-tokens .chip').length > 0 &&
    document.querySelector('#matrices canvas') !== null);

  assert.deepEqual(await traces(page), CLEAN);
  assert.deepEqual(dialogs, []);
  assert.equal(await page.inputValue('#text'), MARKUP);
  assert.equal((await page.inputValue('#source')).length, MAX_TEXT, `the huge source was cut to ${MAX_TEXT} characters`);
  // The markup is more tokens than the chips show collapsed: expand them (… N more) to read them all.
  await page.locator('#tokens .more-tokens[aria-expanded="false"]').first().click();
  await page.waitForSelector('#tokens .more-tokens[aria-expanded="true"]');
  const chips = (await page.locator('#tokens .chip').allTextContents()).join(' ');
  for (const word of ['<', 'img', 'onerror', 'script', 'javascript', 'iframe', '__proto__', 'constructor']) {
    assert.ok(chips.includes(word), `"${word}" is shown as a token: ${chips}`);
  }
  // Every unusable field is named in the notice (as text), and the defaults are used instead.
  const notice = await page.locator('#notice').textContent();
  for (const key of ['stage', 'head', 'heads', 'seed', 'dModel', 'window', 'positional', 'mask', 'preset', 'view',
    'cells', '__proto__', 'constructor[prototype][polluted]', 'hasOwnProperty', '<img src=y onerror=alert(8)>']) {
    assert.ok(notice.includes(key), `the notice names ${key}: ${notice}`);
  }
  assert.equal(await page.inputValue('#heads'), '4');
  assert.equal(await page.inputValue('#mask'), 'none');

  // The cell inspector shows the hostile token labels as text too.
  await hoverCell(page, 0, 0, 0);
  await page.waitForSelector('[data-testid="cell-value"]');
  assert.match(await page.locator('.inspector-where').textContent(), /“<”/);

  // Valid but huge values: 4096 padded keys over 16 heads is past the weights limit; the banner
  // says so, and a sensible link afterwards recovers.
  await page.evaluate(() => { location.hash = '#text=a%20b&mask=padding&padTo=4096&heads=16&dModel=256&model=random'; });
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.locator('#error').textContent(),
    /heads \* n \* kvN = 268435456 attention weights exceed the limit of 67108864/);
  await page.evaluate(() => { location.hash = '#text=a%20b%20c&model=random'; });
  await page.waitForSelector('#error', { state: 'hidden' });
  await drawn(page, 3);

  assert.deepEqual(await traces(page), CLEAN);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith(plain.url) || /\/[xy]$/.test(u)), []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

// ---- hostile .safetensors uploads -------------------------------------------------------------

/** The page's default layer (dModel 64, 4 heads, biases) as a state_dict with `change` applied. */
function pageWeights(change) {
  const d = 64;
  const tensor = (shape) => ({ dtype: 'F32', shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.01) });
  const tensors = { in_proj_weight: tensor([3 * d, d]), in_proj_bias: tensor([3 * d]),
    'out_proj.weight': tensor([d, d]), 'out_proj.bias': tensor([d]) };
  change(tensors);
  return Buffer.from(writeSafetensors(tensors));
}

test('hostile .safetensors uploads show the error banner as text and keep the last good state', async () => {
  const { page, problems, dialogs } = await openApp(plain);
  await drawn(page, 6);
  const heatmap = () => page.locator('#matrices canvas').first().evaluate((c) => c.toDataURL());
  const before = await heatmap();
  const hostileName = '<img src=y onerror="window.__pwned=5">';

  // One file of each class of the malformed corpus (reader-level: the same message whatever the
  // layer; and the corpus' hostile tensor name), NaN weights, and finite weights so large that
  // the forward would overflow float32.
  const corpus = malformedCorpus();
  const readerLevel = corpus.filter((c) => !c.name.startsWith('layer-'));
  const oneOfEachClass = [...new Map(readerLevel.map((c) => [c.name.split('-')[0], c])).values()];
  const files = [...oneOfEachClass, corpus.find((c) => c.name === 'layer-hostile-name.safetensors')];
  assert.notEqual(CORPUS_LAYER.dModel, 64, 'the page\'s layer is not the corpus\'s: only layer-independent files');
  const uploads = files.map((c) => ({ name: `${hostileName}${c.name}`, buffer: Buffer.from(c.bytes), expected: c.expected }));
  uploads.push({ name: `${hostileName}nan.safetensors`, expected: 'in_proj_weight[5] is NaN: values must be finite',
    buffer: pageWeights((t) => { t.in_proj_weight.data[5] = NaN; }) });
  uploads.push({ name: `${hostileName}huge.safetensors`, expected: 'values too large for float32',
    buffer: pageWeights((t) => { t.in_proj_weight.data.fill(1e30); }) });
  assert.ok(uploads.length >= 12, `${uploads.length} uploads`);

  for (const upload of uploads) {
    await page.setInputFiles('#weights-file', { name: upload.name, mimeType: 'application/octet-stream', buffer: upload.buffer });
    await page.waitForFunction((name) => (document.querySelector('#error:not([hidden])')?.textContent ?? '').includes(name), upload.name);
    const banner = await page.locator('#error').textContent();
    assert.ok(banner.includes(upload.expected), `${upload.name}: "${banner}" should include "${upload.expected}"`);
    assert.deepEqual(await traces(page), CLEAN, upload.name);
  }
  assert.equal(await heatmap(), before, 'the last good heatmap stays');
  assert.match(await page.locator('#weights-status').textContent(), /Seeded random weights/);
  // The page still computes with its own weights.
  await page.fill('#text', 'still working');
  await drawn(page, 2);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});
