// dist/attention-lens-snapshot.js, the <attention-lens> element for posts of snapshots only, in
// Chromium: one classic script of at most 60 KB gzipped with no WebAssembly; the example post with
// its script tag pointing at it draws every snapshot with the same pixels as the full element, with
// no request but the page and the script and no wasm instantiated; the snapshot="…json" form fetches
// only its file under the strict CSP; a figure that computes live or loads from the Hub says it needs
// attention-lens-element.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { STRICT_CSP } from '../../scripts/lib/csp.mjs';
import { browserFixture, instrument, openPage, screenshotDir } from './browser.mjs';
import { exampleSnapshots, exampleWithScript, settled } from './embed-posts.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const SCRIPT = 'attention-lens-snapshot.js';
const MAX_GZIP = 60 * 1024;
const live = browserFixture({ csp: true });

/** Each element's status and title line. */
const statuses = (page) => page.evaluate(() => [...document.querySelectorAll('attention-lens')].map((e) => ({
  status: e.shadowRoot.querySelector('.lens').dataset.status, title: e.shadowRoot.querySelector('.title').textContent })));

/** Every canvas of every snapshot element, as its size and pixels (a digest: equal pixels, equal digest). */
const canvasPixels = (page) => page.evaluate(() => [...document.querySelectorAll('attention-lens[snapshot]')].map((e) =>
  [...e.shadowRoot.querySelectorAll('canvas')].filter((c) => c.width > 0 && c.height > 0).map((c) => {
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let digest = 0;
    for (let i = 0; i < data.length; ++i) digest = (digest * 31 + data[i]) >>> 0;
    return `${c.width}x${c.height}:${digest}`;
  })));

/**
 * In the page: two PNGs (base64) compared pixel by pixel: { size, differing (pixels), box (of the
 * differing pixels: [left, top, right, bottom]) }.
 */
async function pngDiff([a, b]) {
  const pixels = async (base64) => {
    const image = new Image();
    image.src = `data:image/png;base64,${base64}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(image, 0, 0);
    return ctx.getImageData(0, 0, image.width, image.height);
  };
  const [x, y] = [await pixels(a), await pixels(b)];
  if (x.width !== y.width || x.height !== y.height) return { size: [[x.width, x.height], [y.width, y.height]] };
  let differing = 0;
  const box = [Infinity, Infinity, -1, -1];
  for (let i = 0; i < x.data.length; i += 4) {
    if (x.data[i] === y.data[i] && x.data[i + 1] === y.data[i + 1] && x.data[i + 2] === y.data[i + 2] && x.data[i + 3] === y.data[i + 3]) continue;
    differing += 1;
    const p = i / 4;
    const [c, r] = [p % x.width, Math.floor(p / x.width)];
    box.splice(0, 4, Math.min(box[0], c), Math.min(box[1], r), Math.max(box[2], c), Math.max(box[3], r));
  }
  return { size: [x.width, x.height], differing, box };
}

test('attention-lens-snapshot.js is one classic script of at most 60 KB gzipped, with no WebAssembly, worker or dynamic import', () => {
  const code = readFileSync(join(dist, SCRIPT));
  const gzipped = gzipSync(code, { level: 9 }).length;
  console.log(`# ${SCRIPT}: ${code.length} bytes, ${gzipped} gzipped (full element: ${readFileSync(join(dist, 'attention-lens-element.js')).length} bytes)`);
  assert.ok(gzipped <= MAX_GZIP, `${gzipped} bytes gzipped, more than ${MAX_GZIP}`);
  const text = code.toString('utf8');
  assert.doesNotMatch(text, /WebAssembly|AGFzbQ/);
  assert.doesNotMatch(text, /new Worker|\bimport\s*\(/);
  assert.doesNotMatch(text, /\bimport\.meta\b/);
  assert.doesNotMatch(text, /^\s*(import|export)\b[^(]/m);
  assert.doesNotMatch(text, /\bnew Function\b|(^|[^.\w$])eval\s*\(/);
});

test('the example post drawn by attention-lens-snapshot.js: the same snapshot pixels as the full element, no wasm, no request but the page and the script; its live figures name attention-lens-element.js', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-snapshot-script-'));
  for (const script of ['attention-lens-element.js', SCRIPT]) copyFileSync(join(dist, script), join(dir, script));
  writeFileSync(join(dir, 'full.html'), readFileSync(join(dist, 'blog-example.html')));
  writeFileSync(join(dir, 'snapshots.html'), exampleWithScript(dist, SCRIPT));
  try {
    for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
      const drawn = {};
      for (const name of ['full', 'snapshots']) {
        const { page, problems } = await openPage(live.chrome.browser, 'file://', viewport);
        await instrument(page);
        const requests = [];
        page.on('request', (r) => requests.push(r.url()));
        await page.goto(pathToFileURL(join(dir, `${name}.html`)).href);
        await settled(page, 5);
        const shown = await statuses(page);
        await page.screenshot({ path: join(screenshotDir, `blog-example-${name === 'full' ? 'element' : 'snapshot'}-script-${viewport.width}.png`), fullPage: true });
        if (name === 'snapshots') await page.locator('attention-lens').first().screenshot({ path: join(screenshotDir, `blog-example-snapshot-script-${viewport.width}-live.png`) });
        // The live figures hidden in both copies (their heights differ: a heatmap, or a message), so that
        // each snapshot sits at the same place, to the subpixel, in both screenshots.
        await page.addStyleTag({ content: 'attention-lens:not([snapshot]) { display: none !important; }' });
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        // A redraw (a resize, the theme, an attribute) draws the same figure: the same height.
        const heights = () => page.evaluate(() => [...document.querySelectorAll('attention-lens[snapshot]')].map((e) => e.getBoundingClientRect().height));
        const first = await heights();
        await page.evaluate(() => Promise.all([...document.querySelectorAll('attention-lens[snapshot]')].map((e) => {
          const rendered = new Promise((resolve) => e.addEventListener('attention-lens-render', resolve, { once: true }));
          e.setAttribute('color-scale', 'linear'); // the default: nothing changes but a redraw
          return rendered;
        })));
        assert.deepEqual(await heights(), first, `${name}, ${viewport.width} px: a redraw keeps each snapshot's height`);
        const figures = page.locator('attention-lens[snapshot]');
        drawn[name] = { shown, pixels: await canvasPixels(page), shots: [] };
        for (let i = 0; i < 3; ++i) drawn[name].shots.push(await figures.nth(i).screenshot());
        if (name === 'snapshots') {
          for (let i = 0; i < 3; ++i) await figures.nth(i).screenshot({ path: join(screenshotDir, `blog-example-snapshot-script-${viewport.width}-figure${i + 1}.png`) });
          assert.equal(await page.evaluate(() => window.__wasmInstances), 0, 'no wasm instantiated');
          assert.deepEqual(requests.map((u) => u.split('/').pop()), ['snapshots.html', SCRIPT]);
        }
        assert.deepEqual(problems(), []);
        await page.context().close();
      }
      const { full, snapshots } = drawn;
      // The live figures (text=…) say which script they need; the snapshots draw as in the full element.
      const [causal, cross] = snapshots.shown;
      for (const figure of [causal, cross]) {
        assert.equal(figure.status, 'error');
        assert.equal(figure.title, 'This figure computes attention in the page: it needs attention-lens-element.js, not attention-lens-snapshot.js, which only draws snapshots.');
      }
      assert.deepEqual(snapshots.shown.slice(2), full.shown.slice(2), 'the snapshots\' status and title lines');
      for (const s of full.shown.slice(2)) assert.equal(s.status, 'ready', s.title);
      assert.deepEqual(snapshots.pixels, full.pixels, `${viewport.width} px: every canvas's pixels`);
      assert.ok(full.pixels.flat().length >= 3 + 8, 'the main heatmaps and the model\'s head tiles are compared');
      const { page } = await openPage(live.chrome.browser, 'file://');
      for (let i = 0; i < 3; ++i) {
        const diff = await page.evaluate(pngDiff, [full.shots[i].toString('base64'), snapshots.shots[i].toString('base64')]);
        if (diff.differing !== 0) {
          writeFileSync(join(screenshotDir, `snapshot-script-diff-${viewport.width}-${i + 1}-full.png`), full.shots[i]);
          writeFileSync(join(screenshotDir, `snapshot-script-diff-${viewport.width}-${i + 1}-snapshot.png`), snapshots.shots[i]);
        }
        assert.deepEqual(diff.differing, 0, `${viewport.width} px: snapshot ${i + 1}'s screenshot differs: ${JSON.stringify(diff)}`);
      }
      await page.context().close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('over http under the strict CSP: snapshot="…json" fetches only its file, hub="…" names the full element', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await instrument(page);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const body = `<script src="${SCRIPT}" defer></script><attention-lens snapshot="snapshots/induction-model.json"></attention-lens>` +
    '<attention-lens hub="HuggingFaceTB/SmolLM2-135M"></attention-lens>';
  await page.route(`${live.server.url}post.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8',
    headers: { 'Content-Security-Policy': STRICT_CSP }, body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>post</title></head><body>${body}</body></html>` }));
  await page.goto(`${live.server.url}post.html`);
  await settled(page, 2);
  const [file, hub] = await statuses(page);
  assert.equal(file.status, 'ready', file.title);
  assert.match(file.title, /^Attention · layer 2 of 2, head 4 of 4 · induction · snapshot$/);
  assert.equal(hub.status, 'error');
  assert.equal(hub.title, 'This figure loads hub="HuggingFaceTB/SmolLM2-135M" from the Hugging Face Hub: it needs attention-lens-element.js, not attention-lens-snapshot.js, which only draws snapshots.');
  assert.deepEqual(requests.map((u) => u.slice(live.server.url.length)), ['post.html', SCRIPT, 'snapshots/induction-model.json']);
  assert.equal(await page.evaluate(() => window.__wasmInstances), 0);
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
  assert.deepEqual(problems(), []);
  await page.close();
});

test('a post with both scripts (a snapshot snippet\'s and a live snippet\'s), in either order, draws every figure', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-both-scripts-'));
  for (const script of ['attention-lens-element.js', SCRIPT]) copyFileSync(join(dist, script), join(dir, script));
  const [snapshot] = exampleSnapshots(dist);
  const computed = '<attention-lens text="The bank will not loan money" mask="causal"></attention-lens>';
  const script = (src) => `<script src="${src}" defer></script>`;
  try {
    for (const [name, first, second] of [['snapshot-first', SCRIPT, 'attention-lens-element.js'], ['element-first', 'attention-lens-element.js', SCRIPT]]) {
      writeFileSync(join(dir, `${name}.html`), `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>both</title></head>
<body>${script(first)}${snapshot}${script(second)}${computed}</body></html>`);
      const { page, problems } = await openPage(live.chrome.browser, 'file://');
      await instrument(page);
      await page.goto(pathToFileURL(join(dir, `${name}.html`)).href);
      await page.waitForFunction(() => [...document.querySelectorAll('attention-lens')].every((e) => e.shadowRoot?.querySelector('.lens')?.dataset.status === 'ready'),
        null, { timeout: 30000 });
      const [drawnSnapshot, drawnLive] = await statuses(page);
      assert.match(drawnSnapshot.title, /^Attention · layer 2 of 2, head 4 of 4 · induction · snapshot$/, name);
      assert.match(drawnLive.title, /^Attention weights/, name);
      const visible = await page.evaluate(() => [...document.querySelectorAll('attention-lens')].map((e) =>
        [...e.shadowRoot.querySelectorAll('canvas')].filter((c) => c.getClientRects().length > 0).length));
      assert.ok(visible.every((n) => n > 0), `${name}: each figure's heatmap is shown (${visible})`);
      assert.equal(await page.evaluate(() => window.__wasmInstances), 1, `${name}: the live figure's wasm, once`);
      assert.deepEqual(problems(), []);
      await page.context().close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
