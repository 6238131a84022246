// <attention-lens hub="org/name"> in Chromium against the local stand-in of the Hub
// (scripts/lib/hub-stand-in.mjs; no test reaches the internet): before the reader presses its
// button nothing is requested and no wasm instantiated (counted), and the button says the download
// (a listed model's size, "size unknown until asked" otherwise); pressed, it loads the full module
// and the checkpoint and draws every head within the snapshot's 8-bit bound of what the JS API
// computes in node; the Hub files it kept are the page's (its Your model view lists them); a blog
// whose CSP lacks the Hub's origin gets a readable message; from file:// the button says it needs http.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { STRICT_CSP, strictCspAlso } from '../../scripts/lib/csp.mjs';
import { instrument, launchBrowser, openPage, screenshotDir, serveDist } from './browser.mjs';
import { startSmallHub, TWELVE_HEADS, TWELVE_ID, twelveHeadsRepo } from './hub-fixture.mjs';
import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { QUANTISATION_BOUND, quantiseRows, scriptSafeJson } from '../../web/api/snapshot.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const TEXT = 'the cat sat on the mat and the cat';
const live = {};

const pageHtml = (body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>live embed</title><script src="attention-lens-element.js" defer></script></head><body>${body}</body></html>`;

// The posts are files of a copy of dist/ served from loopback (a page Chromium sees as loopback may
// fetch from the loopback stand-in; one fulfilled by the test would not): live.html under the strict
// CSP plus the stand-in's origins, and the same post under the strict CSP alone (a blog that lists
// only the real Hub's origins).
before(async () => {
  live.hub = await startSmallHub(twelveHeadsRepo());
  live.dir = mkdtempSync(join(tmpdir(), 'attention-lens-live-'));
  cpSync(dist, live.dir, { recursive: true });
  writeFileSync(join(live.dir, 'live.html'), pageHtml(
    `<attention-lens hub="${TWELVE_ID}" endpoint="${live.hub.endpoint}" text="${TEXT}" layer="2" head="5"></attention-lens>` +
    '<attention-lens hub="HuggingFaceTB/SmolLM2-135M" text="The cat"></attention-lens>' +
    '<attention-lens hub="not an id"></attention-lens>' +
    // With a snapshot inside, hub= shows the snapshot and offers no load.
    `<attention-lens hub="${TWELVE_ID}" endpoint="${live.hub.endpoint}"><script type="application/json">${scriptSafeJson({ format: 'attention-lens-snapshot',
      version: 1, kind: 'model', model: { layers: 1, heads: 1 }, tokens: ['a', 'b'], attention: { layers: [0], causal: true,
        ...quantiseRows([Float32Array.from([1]), Float32Array.from([0.25, 0.75])]) } })}</script></attention-lens>`));
  writeFileSync(join(live.dir, 'live-blocked.html'), pageHtml(`<attention-lens hub="${TWELVE_ID}" endpoint="${live.hub.endpoint}" text="${TEXT}"></attention-lens>`));
  [live.server, live.blocked] = await Promise.all([serveDist({ csp: strictCspAlso([live.hub.endpoint, live.hub.storage]), dir: live.dir }),
    serveDist({ csp: STRICT_CSP, dir: live.dir })]);
  live.chrome = await launchBrowser();
});
after(async () => {
  await live.chrome?.close();
  live.server?.stop();
  live.blocked?.stop();
  await live.hub?.close();
  if (live.dir) rmSync(live.dir, { recursive: true, force: true });
});

/** Each element's status, live phase, title and live box text once none is loading. */
function states(page, count) {
  return page.waitForFunction((n) => {
    const all = [...document.querySelectorAll('attention-lens')];
    const shown = all.map((e) => {
      const root = e.shadowRoot;
      const lens = root?.querySelector('.lens');
      return { status: lens?.dataset.status, live: lens?.dataset.live, title: root?.querySelector('.title').textContent,
        what: root?.querySelector('.live-what')?.textContent ?? '', button: root?.querySelector('.live-load')?.textContent ?? '',
        disabled: root?.querySelector('.live-load')?.disabled ?? null, note: root?.querySelector('.live-note')?.textContent ?? '' };
    });
    return all.length === n && shown.every((s) => ['idle', 'ready', 'error'].includes(s.status)) && shown;
  }, count, { timeout: 60000 }).then((h) => h.jsonValue());
}

test('hub="…": nothing requested before the press; then every head drawn within the bound of the API; the Hub cache is the page\'s', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await instrument(page);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const endpoint = live.hub.endpoint;
  live.hub.reset();
  await page.goto(`${live.server.url}live.html`);
  let [twelve, listed, bad, withSnapshot] = await states(page, 4);
  assert.equal(withSnapshot.status, 'ready', withSnapshot.title);
  assert.equal(withSnapshot.button, '', 'no load offered beside a snapshot');
  assert.equal(twelve.status, 'idle');
  assert.equal(twelve.what, `${TWELVE_ID} · download size unknown until asked from ${endpoint.replace('http://', '')}`);
  assert.equal(twelve.button, `Load ${TWELVE_ID} (size unknown until asked) and run it in this page`);
  assert.equal(listed.button, 'Load SmolLM2-135M (269 MB) and run it in this page');
  assert.match(listed.what, /^HuggingFaceTB\/SmolLM2-135M · 269 MB download from huggingface\.co$/);
  assert.match(listed.note, /Nothing is downloaded until you press the button/);
  assert.equal(bad.status, 'error');
  assert.equal(bad.title, 'Attention Lens cannot load a model: hub="not an id" is not a Hugging Face id (org/name).');
  await page.waitForTimeout(500);
  assert.deepEqual(live.hub.requests, [], 'no request to the Hub before the press');
  assert.deepEqual(requests.map((u) => u.replace(live.server.url, '')), ['live.html', 'attention-lens-element.js'], 'nothing but the page and the script');
  assert.equal(await page.evaluate(() => window.__wasmInstances), 0, 'no wasm before the press');
  await page.screenshot({ path: join(screenshotDir, 'live-embed-idle.png'), fullPage: true });

  await page.locator('attention-lens').first().locator('.live-load').click();
  [twelve] = await states(page, 4);
  assert.equal(twelve.status, 'ready', twelve.title);
  assert.equal(twelve.live, 'ready');
  assert.match(twelve.title, /^Attention · layer 2 of 2, head 5 of 12 · org\/twelve-heads · live$/);
  assert.ok(live.hub.count('hub', 'config.json') >= 1, 'config.json asked after the press');
  assert.equal(live.hub.requests.filter((r) => r.path.includes('SmolLM2')).length, 0, 'the other element still asked nothing');
  assert.ok(requests.some((u) => u.endsWith('/attention-lens.mjs')), 'the full module loaded from beside the script');

  // The API in node on the same repo and text (the page's session code).
  const { loadAttentionLens } = await import(pathToFileURL(join(dist, 'attention-lens.mjs')).href);
  const session = new SessionModel(await loadAttentionLens(), () => {});
  await session.hub({ hub: TWELVE_ID, endpoint });
  const run = session.run({ text: TEXT });
  let worst = 0;
  for (let l = 0; l < TWELVE_HEADS.layers; ++l) for (let h = 0; h < TWELVE_HEADS.heads; ++h) {
    const drawn = await page.evaluate(async ([layer, head]) => {
      const element = document.querySelector('attention-lens');
      const rendered = new Promise((resolve) => element.addEventListener('attention-lens-render', resolve, { once: true }));
      element.setAttribute('layer', String(layer + 1));
      element.setAttribute('head', String(head + 1));
      await rendered;
      return Array.from(element.snapshotMatrix.data);
    }, [l, h]);
    const want = run.attention[l].subarray(h * run.n * run.n, (h + 1) * run.n * run.n);
    assert.equal(drawn.length, want.length);
    drawn.forEach((v, i) => {
      worst = Math.max(worst, Math.abs(v - want[i]));
      assert.ok(Math.abs(v - want[i]) <= QUANTISATION_BOUND + 1e-6, `layer ${l + 1} head ${h + 1} [${i}]: drawn ${v}, API ${want[i]}`);
    });
  }
  console.log(`# live ${TWELVE_ID}, ${run.n} tokens, 24 heads: max |drawn − API| = ${worst.toExponential(3)}`);
  // Another text redraws from the loaded model, with no new download.
  const asked = live.hub.requests.length;
  await page.evaluate(() => document.querySelector('attention-lens').setAttribute('text', 'a b a b'));
  const again = session.run({ text: 'a b a b' });
  await page.waitForFunction((n) => document.querySelector('attention-lens').snapshotMatrix?.rows === n, again.n);
  assert.deepEqual(await page.evaluate(() => [...document.querySelector('attention-lens').shadowRoot.querySelectorAll('.snapshot > .tokens .chip')]
    .map((c) => c.textContent)), again.tokens.map((t) => (t.trim() === '' ? t.replace(/ /g, '␣') : t)));
  assert.equal(live.hub.requests.length, asked, 'no request for a new text');
  await page.screenshot({ path: join(screenshotDir, 'live-embed-ready.png'), fullPage: true });
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);

  // The page (same origin) lists the files the embed kept: one Cache Storage.
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector(`#model-cache-list .model-cache-item[data-repo="${TWELVE_ID}"]`, { timeout: 60000 });
  // Only the stand-in's origins were asked (and its 404 for tokenizer.json: this repo has vocab.json + merges.txt).
  assert.deepEqual(problems().filter((p) => !p.startsWith(`request left the origin: ${live.hub.endpoint}/`) &&
    !p.startsWith(`request left the origin: ${live.hub.storage}/`) && !/status of 404/.test(p)), []);
  await page.close();
});

test('hub="…" under a blog CSP without the Hub\'s origin: a readable message after the press; from file:// the button asks for http', async () => {
  const { page } = await openPage(live.chrome.browser, live.blocked.url);
  await page.goto(`${live.blocked.url}live-blocked.html`);
  let [shown] = await states(page, 1);
  assert.equal(shown.status, 'idle');
  await page.locator('attention-lens .live-load').click();
  [shown] = await states(page, 1);
  assert.equal(shown.status, 'error');
  assert.match(shown.title, new RegExp(`^Could not load ${TWELVE_ID}: this page's Content-Security-Policy ` +
    'blocked http://127\\.0\\.0\\.1:\\d+ \\(connect-src\\): a live model needs connect-src to allow http://127\\.0\\.0\\.1:\\d+ and the Hub\'s file storage'));
  assert.equal(shown.disabled, false, 'the button stays, to try again');
  await page.screenshot({ path: join(screenshotDir, 'live-embed-blocked.png') });
  await page.close();

  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-live-'));
  try {
    copyFileSync(join(dist, 'attention-lens-element.js'), join(dir, 'attention-lens-element.js'));
    writeFileSync(join(dir, 'post.html'), pageHtml(`<attention-lens hub="${TWELVE_ID}"></attention-lens>`));
    const { page: local } = await openPage(live.chrome.browser, 'file://');
    await local.goto(pathToFileURL(join(dir, 'post.html')).href);
    [shown] = await states(local, 1);
    assert.equal(shown.status, 'idle');
    assert.equal(shown.disabled, true);
    assert.match(shown.note, /opened from file:\/\/: a live model needs the page served over http\(s\)/);
    await local.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
