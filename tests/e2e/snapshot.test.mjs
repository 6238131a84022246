// Snapshot embeds in Chromium: the Your model and Circuits views' "Embed this view" (the page's one
// Embed dialog) write a snapshot; its inline snippet, opened from file:// with the one script the
// dialog names (attention-lens-snapshot.js), draws every head within the stated 8-bit bound of the
// JS API's weights (a patching result exactly), with no wasm instantiated and no request but the
// page and that script; the .json form is fetched
// once over http under the strict CSP, refused readably from file:// and when a CSP's connect-src
// blocks it; hostile snapshots show a message inside their element while the others (and a live
// element) keep working, and no text in a snapshot runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { STRICT_CSP } from '../../scripts/lib/csp.mjs';
import { browserFixture, instrument, openPage, screenshotDir } from './browser.mjs';
import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { QUANTISATION_BOUND, quantiseRows, scriptSafeJson, toBase64 } from '../../web/api/snapshot.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const live = browserFixture({ csp: true });

const { loadAttentionLens } = await import(pathToFileURL(join(dist, 'attention-lens.mjs')).href);
const api = new SessionModel(await loadAttentionLens(), () => {});
await api.trained({ name: 'english' });

const pageHtml = (body, head = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>snapshot test</title>${head}</head><body>${body}</body></html>`;

/** A folder with `scripts` (from dist/) and `html` as post.html; its file:// URL and a cleanup. */
function filePost(html, scripts = ['attention-lens-element.js']) {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-snapshot-'));
  for (const script of scripts) copyFileSync(join(dist, script), join(dir, script));
  writeFileSync(join(dir, 'post.html'), html);
  return { url: pathToFileURL(join(dir, 'post.html')).href, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Waits until the page's `count` elements have finished (ready or error), then what each shows. */
async function elements(page, count) {
  await page.waitForFunction((n) => {
    const all = [...document.querySelectorAll('attention-lens')];
    return all.length === n && all.every((e) => ['ready', 'error'].includes(e.shadowRoot?.querySelector('.lens')?.dataset.status));
  }, count, { timeout: 30000 });
  return page.evaluate(() => [...document.querySelectorAll('attention-lens')].map((e) => {
    const root = e.shadowRoot;
    const lens = root.querySelector('.lens');
    return { status: lens.dataset.status, kind: lens.dataset.snapshot ?? '', title: root.querySelector('.title').textContent,
      problems: [...root.querySelectorAll('.problems li')].map((li) => li.textContent),
      chips: [...root.querySelectorAll('.snapshot > .tokens .chip')].map((c) => c.textContent),
      quantised: root.querySelector('.quantised')?.textContent ?? '', provenance: root.querySelector('.provenance')?.textContent ?? '' };
  }));
}

/** The element `index`'s main heatmap numbers after showing `layer`, `head` (1-based attributes). */
async function drawnHead(page, index, layer, head) {
  return page.evaluate(async ([i, l, h]) => {
    const element = document.querySelectorAll('attention-lens')[i];
    const rendered = new Promise((resolve) => element.addEventListener('attention-lens-render', resolve, { once: true }));
    element.setAttribute('layer', String(l));
    element.setAttribute('head', String(h));
    await rendered;
    const m = element.snapshotMatrix;
    return { rows: m.rows, cols: m.cols, data: Array.from(m.data), layer: element.shadowRoot.querySelector('.lens').dataset.layer };
  }, [index, layer, head]);
}

/** The Embed dialog's snapshot: { inline, file, bytes, size (its line), files (the files it says the snippet needs) } once shown. */
async function embedded(page, button, screenshot = '') {
  await page.click(button);
  await page.waitForFunction(() => !document.getElementById('embed-snapshot').hidden || !document.getElementById('embed-problem').hidden);
  const out = { inline: await page.inputValue('#embed-inline'), file: await page.inputValue('#embed-file'),
    size: await page.textContent('#embed-snapshot-size'), problem: await page.textContent('#embed-problem'),
    files: await page.locator('#embed-snapshot-files [data-file]').evaluateAll((items) => items.map((item) => item.dataset.file)) };
  if (screenshot) await page.locator('#embed-dialog').screenshot({ path: join(screenshotDir, screenshot) });
  await page.click('#embed-close');
  return out;
}

const jsonOf = (inline) => JSON.parse(inline.slice(inline.indexOf('<script type="application/json">') + 32, inline.lastIndexOf('</script></attention-lens>')));

test('Your model: Embed this view → the inline snippet from file:// draws every head within the stated bound of the API; no wasm, no request', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model&genTokens=4`);
  await page.waitForFunction(() => document.body.dataset.modelName === 'english' && Number(document.body.dataset.modelRun ?? 0) > 0 &&
    document.querySelector('#model-head-grid canvas'), null, { timeout: 60000 });
  const text = await page.inputValue('#model-text');
  await page.click('#model-gen-start');
  await page.waitForFunction(() => Number(document.body.dataset.modelGenerated ?? 0) > 0, null, { timeout: 60000 });
  const shot = await embedded(page, '#model-embed', 'embed-dialog-snapshot-1280.png');
  assert.equal(shot.problem, '');
  // The snapshot-only element: the one file the dialog names, and the one the snippets load.
  assert.deepEqual(shot.files, ['attention-lens-snapshot.js']);
  assert.match(shot.inline, /^<script src="attention-lens-snapshot\.js" defer><\/script>\n<attention-lens snapshot>/);
  assert.match(shot.file, /^<script src="attention-lens-snapshot\.js" defer><\/script>\n/);
  assert.match(shot.size, /^snapshot: [\d.]+ kB · all 8 heads \(2 layers × 4\) on \d+ tokens and 4 generated · weights to ±0\.002 \(8 bits per weight\)/);
  assert.match(shot.file, /<attention-lens snapshot="english-attention\.json"><\/attention-lens>/);
  assert.doesNotMatch(shot.inline.slice(shot.inline.indexOf('application/json">') + 18, shot.inline.lastIndexOf('</script>')), /</,
    'no < inside the inline JSON');
  const doc = jsonOf(shot.inline);
  assert.equal(doc.provenance.model.name, 'english');
  assert.equal(doc.provenance.text, text);
  assert.equal(doc.provenance.version, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
  problems.check?.();
  await page.close();

  // The API's run of the same text (the page's session, in node).
  const run = api.run({ text });
  const post = filePost(pageHtml(shot.inline), shot.files);
  try {
    const { page: reader } = await openPage(live.chrome.browser, 'file://');
    await instrument(reader);
    const requests = [];
    reader.on('request', (r) => requests.push(r.url()));
    await reader.goto(post.url);
    const [shown] = await elements(reader, 1);
    assert.equal(shown.status, 'ready', shown.title);
    assert.equal(shown.kind, 'model');
    // The snapshot's tokens are the API's; the chips show them (more than 48 collapse to the first 16 and last 8).
    assert.deepEqual(doc.tokens, run.tokens);
    const chips = run.tokens.map((t) => (t === ' ' ? '␣' : t));
    assert.deepEqual(shown.chips, chips.length > 48 ? [...chips.slice(0, 16), ...chips.slice(-8)] : chips);
    assert.match(shown.quantised, /within ±0\.002 of the model's float32 value/);
    assert.match(shown.provenance, /^Model: english \(English characters.*\), shipped with Attention Lens · snapshot made with Attention Lens /);
    let worst = 0;
    const n = run.n;
    for (let l = 0; l < 2; ++l) for (let h = 0; h < 4; ++h) {
      const drawn = await drawnHead(reader, 0, l + 1, h + 1);
      assert.deepEqual([drawn.rows, drawn.cols, drawn.layer], [n, n, String(l)]);
      const want = run.attention[l].subarray(h * n * n, (h + 1) * n * n);
      drawn.data.forEach((v, i) => {
        worst = Math.max(worst, Math.abs(v - want[i]));
        assert.ok(Math.abs(v - want[i]) <= QUANTISATION_BOUND + 1e-6, `layer ${l + 1} head ${h + 1} [${i}]: drawn ${v}, API ${want[i]}`);
      });
    }
    console.log(`# english, ${n} tokens: max |drawn − API| = ${worst.toExponential(3)} (bound ${QUANTISATION_BOUND.toExponential(3)})`);
    // Hovering a cell reads it with its bound; the generation's tokens are drawn.
    const readout = await reader.evaluate(() => {
      const root = document.querySelector('attention-lens').shadowRoot;
      const canvas = root.querySelector('.snapshot .matrices canvas');
      canvas.focus();
      return root.querySelector('.snapshot .readout').textContent;
    });
    assert.match(readout, /^query “.*” → key “.*”: [\d.e-]+ \(±0\.002\)$/);
    assert.equal(await reader.evaluate(() => document.querySelector('attention-lens').shadowRoot.querySelectorAll('.snapshot-generation .chip').length), 4);
    assert.equal(await reader.evaluate(() => window.__wasmInstances), 0, 'no wasm instantiated');
    assert.deepEqual(requests.map((u) => u.split('/').pop()), ['post.html', 'attention-lens-snapshot.js']);
    await reader.screenshot({ path: join(screenshotDir, 'snapshot-model.png'), fullPage: true });
    await reader.close();
  } finally {
    post.remove();
  }
});

test('Circuits: a patching snapshot draws the API\'s effects exactly; its .json is fetched once under the strict CSP, refused from file:// and by a CSP without it', async () => {
  const { page } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=circuits`);
  await page.waitForFunction(() => Number(document.body.dataset.circuitsReads ?? 0) > 0, null, { timeout: 60000 });
  await page.click('#circuits-preset-induction');
  await page.waitForFunction(() => document.body.dataset.circuitsShown === 'heads', null, { timeout: 60000 });
  const shot = await embedded(page, '#circuits-embed');
  await page.close();
  assert.match(shot.size, /^snapshot: \d+ B · patching every head of 2 layers/);
  const doc = jsonOf(shot.inline);
  const preset = api.circuitInduction({ seed: 1 });
  const answers = api.circuitAnswers({ answers: preset.answers });
  const want = api.circuit({ kind: 'heads', clean: preset.clean, corrupted: preset.corrupted, answers: answers.map((a) => a.id) });
  assert.deepEqual(doc.prompts, { clean: preset.clean, corrupted: preset.corrupted });

  // Over http under the strict CSP: the file form, one request for the file; no wasm.
  const json = JSON.stringify(doc);
  const { page: reader } = await openPage(live.chrome.browser, live.server.url);
  await instrument(reader);
  const requests = [];
  reader.on('request', (r) => requests.push(r.url()));
  await reader.route(`${live.server.url}finding.json`, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: json }));
  for (const [path, csp, body] of [['snap.html', STRICT_CSP, shot.file.replace('english', 'x').replace(/circuits-heads\.json/, 'finding.json')],
    ['snap-blocked.html', STRICT_CSP.replace(/connect-src [^;]*/, "connect-src 'none'"), '<script src="attention-lens-element.js" defer></script><attention-lens snapshot="finding.json"></attention-lens>']]) {
    await reader.route(live.server.url + path, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8',
      headers: { 'Content-Security-Policy': csp }, body: pageHtml(body) }));
  }
  await reader.goto(`${live.server.url}snap.html`);
  const [shown] = await elements(reader, 1);
  assert.equal(shown.status, 'ready', shown.title);
  assert.match(shown.title, /^Patching each head/);
  const drawn = await reader.evaluate(() => Array.from(document.querySelector('attention-lens').snapshotMatrix.data));
  assert.deepEqual(drawn, Array.from(want.effect), 'the effects drawn are the API\'s, exactly');
  assert.equal(requests.filter((u) => u.endsWith('/finding.json')).length, 1, 'the file is fetched once');
  assert.equal(await reader.evaluate(() => window.__wasmInstances), 0);
  assert.deepEqual(await reader.evaluate(() => window.__cspViolations), []);
  await reader.screenshot({ path: join(screenshotDir, 'snapshot-patching.png') });
  // A blog whose CSP has no connect-src for the file: said readably.
  await reader.goto(`${live.server.url}snap-blocked.html`);
  const [blocked] = await elements(reader, 1);
  assert.equal(blocked.status, 'error');
  assert.match(blocked.title, /^This snapshot cannot be shown: could not fetch finding\.json \(.*\)\. If this page sets a Content-Security-Policy, its connect-src must allow http:\/\/127\.0\.0\.1:\d+\.$/);
  await reader.close();

  // From file://: the inline form is asked for and nothing is requested.
  const post = filePost(pageHtml('<script src="attention-lens-element.js" defer></script><attention-lens snapshot="finding.json"></attention-lens>'));
  try {
    const { page: local } = await openPage(live.chrome.browser, 'file://');
    const localRequests = [];
    local.on('request', (r) => localRequests.push(r.url()));
    await local.goto(post.url);
    const [refused] = await elements(local, 1);
    assert.equal(refused.status, 'error');
    assert.match(refused.title, /cannot be read by a page opened from file:\/\/ .*use the inline form/);
    assert.deepEqual(localRequests.map((u) => u.split('/').pop()), ['post.html', 'attention-lens-element.js']);
    await local.close();
  } finally {
    post.remove();
  }
});

/** A valid 1-layer, 1-head snapshot of `tokens` (each row all on its first key), to break one thing at a time. */
function tiny(tokens) {
  const rows = tokens.map((_, i) => Float32Array.from({ length: i + 1 }, (__, j) => (j === 0 ? 1 : 0)));
  return { format: 'attention-lens-snapshot', version: 1, kind: 'model', model: { layers: 1, heads: 1 }, tokens,
    attention: { layers: [0], causal: true, ...quantiseRows(rows) }, next: [{ id: 0, text: tokens[0], probability: 0.5 }] };
}

test('hostile snapshots: a readable message in each element, no text runs, the good ones and a live element still draw', async () => {
  const hostileToken = '</script><script>window.__pwned=1</script><!--';
  const good = tiny([hostileToken, '<img src=x onerror="window.__pwned=2">', 'c']);
  const bad = (edit) => {
    const doc = tiny(['a', 'b', 'c']);
    edit(doc);
    return JSON.stringify(doc).replace(/</g, '\\u003c');
  };
  const cases = [
    ['NaN in a scale', bad((d) => { d.attention.scales = toBase64(Float32Array.from([NaN, 1 / 255, 1 / 255])); }), /attention\.scales\[0\] is NaN/],
    ['wrong lengths', bad((d) => { d.tokens.push('d'); }), /attention\.scales is \d+ base64 characters; its counts need/],
    ['10⁹ claimed heads', bad((d) => { d.model.heads = 1e9; }), /model\.heads is 1000000000: it must be a whole number from 1 to 128/],
    ['10⁹ claimed tokens', bad((d) => { d.model = { layers: 128, heads: 128 }; d.attention.layers = Array.from({ length: 128 }, (_, l) => l); d.tokens = Array(512).fill('x'); }),
      /attention claims 128 layers × 128 heads × 512² = \d+ weights; at most 8388608 are read/],
    ['a truncated file', scriptSafeJson(good).slice(0, 120), /not valid JSON \(is the file complete\?\)/],
    ['bad base64', bad((d) => { d.attention.values = `*${d.attention.values.slice(1)}`; }), /attention\.values is not valid base64/],
    ['a newer version', bad((d) => { d.version = 9; }), /version 9; this element reads version 1/],
  ];
  const body = '<script src="attention-lens-element.js" defer></script>' +
    `<attention-lens snapshot><script type="application/json">${scriptSafeJson(good)}</script></attention-lens>` +
    cases.map(([, json]) => `<attention-lens snapshot><script type="application/json">${json}</script></attention-lens>`).join('') +
    '<attention-lens text="The cat sat" mask="causal"></attention-lens>';
  const post = filePost(pageHtml(body));
  try {
    const { page } = await openPage(live.chrome.browser, 'file://');
    const { dialogs } = await instrument(page);
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(post.url);
    const shown = await elements(page, cases.length + 2);
    assert.equal(shown[0].status, 'ready', shown[0].title);
    assert.deepEqual(shown[0].chips, [hostileToken, '<img src=x onerror="window.__pwned=2">', 'c'], 'token text shown as text');
    cases.forEach(([what, , message], i) => {
      const s = shown[i + 1];
      assert.equal(s.status, 'error', what);
      assert.ok(s.title.startsWith('This snapshot cannot be shown: '), `${what}: ${s.title}`);
      assert.match(s.title, message, what);
    });
    const walkthrough = shown.at(-1);
    assert.equal(walkthrough.status, 'ready', walkthrough.title);
    assert.match(walkthrough.title, /Attention weights/);
    assert.equal(await page.evaluate(() => window.__pwned ?? null), null, 'nothing in a snapshot ran');
    assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.equal(await page.evaluate(() => window.__wasmInstances), 1, 'only the live element instantiates the wasm');
    await page.screenshot({ path: join(screenshotDir, 'snapshot-hostile.png'), fullPage: true });
    await page.close();
  } finally {
    post.remove();
  }
});
