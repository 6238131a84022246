// The one-tag blog embed, dist/attention-lens-element.js, in Chromium: the example post opened
// from file:// and over http, a module-script page, its numbers against the JS API, untrusted
// attributes, re-rendering on attribute changes, and a strict Content-Security-Policy. (Snapshots:
// snapshot.test.mjs; the example post's two snapshots are checked here to draw beside its live elements.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { instrument, browserFixture, openPage, screenshotDir } from './browser.mjs';
import { longPostHtml, settled } from './embed-posts.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const exampleUrl = pathToFileURL(join(dist, 'blog-example.html')).href;
const elementUrl = pathToFileURL(join(dist, 'attention-lens-element.js')).href;

const live = browserFixture();

/** Serves `html` at `path` on the test server's origin (other paths go to dist/). */
async function routeHtml(page, path, html, headers = {}) {
  await page.route(live.server.url + path, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', headers, body: html }));
  return live.server.url + path;
}

const pageHtml = (head, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>embed test</title>${head}</head><body>${body}</body></html>`;


/** What each element shows, read from its (open) shadow root. */
function describe(page) {
  return page.evaluate(() => [...document.querySelectorAll('attention-lens')].map((host) => {
    const root = host.shadowRoot;
    const visible = (selector) => {
      const node = root.querySelector(selector);
      return Boolean(node && !node.hidden && node.getClientRects().length);
    };
    const canvases = [...root.querySelectorAll('canvas')];
    const table = root.querySelector('table');
    return {
      status: root.querySelector('.lens').dataset.status,
      step: root.querySelector('.lens').dataset.step,
      title: root.querySelector('.title').textContent,
      problems: visible('.problems') ? [...root.querySelectorAll('.problems li')].map((li) => li.textContent) : [],
      chips: visible('.tokens') ? [...root.querySelectorAll('.tokens > *')].map((c) => c.textContent) : [],
      headButtons: visible('.head-picker') ? root.querySelectorAll('.head-picker button').length : 0,
      legend: visible('.legend'),
      explanation: visible('.explain') ? root.querySelector('.explain').textContent : '',
      matrices: canvases.map((c) => ({ rows: Number(c.dataset.rows), cols: Number(c.dataset.cols) })),
      // The screen-reader table: the numbers drawn, at 4 decimals.
      table: table ? [...table.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) => Number(td.textContent.replace('−∞', '-Infinity')))) : [],
      renders: host.renderCount,
    };
  }));
}

/** All elements anywhere in the page, shadow roots included, with one of these tag names. */
function countTags(page, tags) {
  return page.evaluate((names) => {
    let count = 0;
    const walk = (root) => {
      for (const node of root.querySelectorAll('*')) {
        if (names.includes(node.localName)) count += 1;
        if (node.shadowRoot) walk(node.shadowRoot);
      }
    };
    walk(document);
    return count;
  }, tags);
}

function assertProbabilityRows(table, label) {
  assert.ok(table.length > 0, `${label}: the table has rows`);
  table.forEach((row, i) => {
    const sum = row.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 2e-3, `${label}: row ${i} sums to ${sum}`);
  });
}

test('the blog example works from file://: its live elements and snapshots render, nothing but the script loads', async () => {
  const { page, problems } = await openPage(live.chrome.browser, 'file://');
  const { dialogs } = await instrument(page);
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(exampleUrl);
  await settled(page, 5);
  const [causal, cross, model, patching, gpt2] = await describe(page);

  assert.equal(causal.status, 'ready');
  assert.deepEqual(causal.matrices, [{ rows: 6, cols: 6 }]);
  assert.match(causal.title, /Attention weights/);
  assert.match(causal.title, /causal/);
  assert.deepEqual(causal.problems, []);
  // compact: a title line and the heatmap only.
  assert.deepEqual(causal.chips, []);
  assert.equal(causal.headButtons, 0);
  assert.equal(causal.legend, false);
  assert.equal(causal.explanation, '');
  assertProbabilityRows(causal.table, 'causal');
  causal.table.forEach((row, i) => row.forEach((v, j) => {
    if (j > i) assert.equal(v, 0, `causal cell ${i},${j} is masked`);
  }));

  assert.equal(cross.status, 'ready');
  assert.deepEqual(cross.matrices, [{ rows: 5, cols: 6 }]);
  assert.deepEqual(cross.chips, ['Target:', 'The', 'boat', 'reached', 'the', 'bank',
    'Source:', 'Le', 'bateau', 'a', 'atteint', 'la', 'rive']);
  assert.equal(cross.headButtons, 2);
  assert.equal(cross.legend, true);
  assert.match(cross.explanation, /softmax/);
  assertProbabilityRows(cross.table, 'cross');

  // The snapshots (written at build time from the shipped induction model) draw without the wasm.
  assert.equal(model.status, 'ready');
  assert.match(model.title, /^Attention · layer 2 of 2, head 4 of 4 · induction · snapshot$/);
  assert.deepEqual(model.matrices[0], { rows: 20, cols: 20 });
  // Row i's i + 1 weights, each within 1/510 (8 bits) and 5e-5 (the table's 4 decimals) of a softmax row's.
  assert.equal(model.table.length, 20);
  model.table.forEach((row, i) => assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) <= (i + 1) * (1 / 510 + 5e-5), `snapshot row ${i}`));
  assert.equal(patching.status, 'ready');
  assert.match(patching.title, /^Patching each head/);
  assert.deepEqual(patching.matrices, [{ rows: 2, cols: 4 }]);
  // Every head of a GPT-2-small-shaped model (12 × 12, 32 tokens; m.snapshot at build time).
  assert.equal(gpt2.status, 'ready');
  assert.match(gpt2.title, /^Attention · layer 6 of 12, head 2 of 12 · .* · snapshot$/);
  assert.deepEqual(gpt2.matrices[0], { rows: 32, cols: 32 });
  assert.equal(gpt2.table.length, 32);
  gpt2.table.forEach((row, i) => assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) <= (i + 1) * (1 / 510 + 5e-5), `GPT-2-shaped row ${i}`));

  // One wasm module instance for the whole page (the live elements'), and only the page and the script were read.
  assert.equal(await page.evaluate(() => window.__wasmInstances), 1);
  assert.deepEqual(requests, [exampleUrl, elementUrl]);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems(), []);

  await page.screenshot({ path: join(screenshotDir, 'blog-example-1280.png'), fullPage: true });
  await page.context().close();
});

test('the blog example fits 375 px and a wide matrix scrolls inside its element', async () => {
  const { page, problems } = await openPage(live.chrome.browser, 'file://', { width: 375, height: 812 });
  await page.goto(exampleUrl);
  await settled(page, 5);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await page.screenshot({ path: join(screenshotDir, 'blog-example-375.png'), fullPage: true });
  const figures = page.locator('attention-lens');
  await figures.nth(0).screenshot({ path: join(screenshotDir, 'blog-example-375-figure1.png') });
  await figures.nth(1).screenshot({ path: join(screenshotDir, 'blog-example-375-figure2.png') });
  // The canvases follow the reader's theme: switching to dark redraws them on a dark surface.
  const corner = () => page.evaluate(() => [...document.querySelectorAll('attention-lens:not([snapshot])')].map((host) => {
    const canvas = host.shadowRoot.querySelector('canvas');
    return Array.from(canvas.getContext('2d').getImageData(1, 1, 1, 1).data.slice(0, 3));
  }));
  assert.deepEqual(await corner(), [[255, 255, 255], [255, 255, 255]]);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction(() => [...document.querySelectorAll('attention-lens:not([snapshot])')].every((host) =>
    host.shadowRoot.querySelector('canvas').getContext('2d').getImageData(1, 1, 1, 1).data[0] < 60));
  assert.deepEqual(await corner(), [[26, 29, 36], [26, 29, 36]]); // --surface in dark mode
  await page.screenshot({ path: join(screenshotDir, 'blog-example-375-dark.png'), fullPage: true });
  await figures.nth(1).screenshot({ path: join(screenshotDir, 'blog-example-375-figure2-dark.png') });

  // 40 character tokens do not fit 375 px at a readable size: the heatmap scrolls, the page does not.
  await page.evaluate(() => {
    const wide = document.createElement('attention-lens');
    wide.setAttribute('text', 'a quick brown fox jumps over the lazy dog');
    wide.setAttribute('tokenizer', 'char');
    document.querySelector('article').append(wide);
  });
  await settled(page, 6);
  const scroll = await page.evaluate(() => {
    const s = document.querySelectorAll('attention-lens')[5].shadowRoot.querySelector('.heatmap-scroll');
    return { scrollWidth: s.scrollWidth, clientWidth: s.clientWidth, page: document.documentElement.scrollWidth };
  });
  assert.ok(scroll.scrollWidth > scroll.clientWidth, `the heatmap scrolls (${JSON.stringify(scroll)})`);
  assert.ok(scroll.page <= 375, `the page does not (${JSON.stringify(scroll)})`);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('a long post of 5 snapshots and a live element never scrolls the page, at load or when a head tile is clicked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-long-'));
  copyFileSync(join(dist, 'attention-lens-element.js'), join(dir, 'attention-lens-element.js'));
  writeFileSync(join(dir, 'post.html'), longPostHtml(dist));
  const url = pathToFileURL(join(dir, 'post.html')).href;
  for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
    const { page, problems } = await openPage(live.chrome.browser, 'file://', viewport);
    await page.goto(url);
    await settled(page, 6);
    await page.waitForTimeout(2000); // two seconds after load (and after every element drew)
    const at = await page.evaluate(() => ({ x: scrollX, y: scrollY, height: document.documentElement.scrollHeight }));
    assert.ok(at.height > 3 * viewport.height, `the post is long (${at.height} px)`);
    assert.deepEqual([at.x, at.y], [0, 0], `${viewport.width} px: the page stays where the reader left it`);
    await page.screenshot({ path: join(screenshotDir, `long-post-${viewport.width}.png`) });

    // A reader clicks layer 1, head 1's tile with the main heatmap above the window: the element shows
    // that head, and the page does not move.
    const model = page.locator('attention-lens').nth(1);
    const tile = model.locator('.snap-tile canvas').first();
    await tile.evaluate((canvas) => window.scrollTo(0, canvas.getBoundingClientRect().top + scrollY - 40));
    const before = await page.evaluate(() => scrollY);
    assert.ok(before > 0);
    await tile.click();
    await page.waitForFunction(() => {
      const lens = document.querySelectorAll('attention-lens')[1].shadowRoot.querySelector('.lens');
      return lens.dataset.layer === '0' && lens.dataset.head === '0';
    });
    assert.equal(await page.evaluate(() => scrollY), before, `${viewport.width} px: a tile click scrolls nothing outside the element`);
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
  rmSync(dir, { recursive: true, force: true });
});

test('the walkthrough\'s Embed snippet, saved in an empty folder with exactly the files the dialog lists, renders from file://', async () => {
  for (const { hash, model, viewport } of [{ hash: '', model: 'english', viewport: { width: 1280, height: 900 } },
    { hash: '#model=random', model: '', viewport: { width: 375, height: 800 } }]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(live.server.url + hash);
    await page.waitForFunction(() => document.body.dataset.ready === 'true' && document.querySelector('#matrices canvas'), null, { timeout: 60000 });
    await page.click('#embed');
    await page.waitForSelector('#embed-live', { state: 'visible' });
    const snippet = await page.inputValue('#embed-element');
    if (model) assert.match(snippet, new RegExp(`<attention-lens [^>]*model="${model}"`));
    else assert.doesNotMatch(snippet, /model=/);
    // The files the dialog lists, each from its own download button, into an empty folder beside the post.
    const listed = await page.locator('#embed-live-files [data-file]').evaluateAll((items) => items.map((item) => item.dataset.file));
    assert.ok(listed.length > 0, 'the dialog lists the files the snippet needs');
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-embed-'));
    for (const name of listed) {
      const [download] = await Promise.all([page.waitForEvent('download'),
        page.locator(`#embed-live-files [data-file="${name}"] button`).click()]);
      assert.equal(download.suggestedFilename(), name);
      await download.saveAs(join(dir, name));
    }
    await page.waitForFunction(() => /: [\d.]+ (kB|MB)\.$/.test(document.querySelector('#embed-live-files [role="status"]').textContent));
    await page.locator('#embed-dialog').screenshot({ path: join(screenshotDir, `embed-dialog-live-${viewport.width}.png`) });
    assert.deepEqual(problems(), []);
    await page.context().close();

    writeFileSync(join(dir, 'post.html'), pageHtml('', snippet));
    assert.deepEqual(readdirSync(dir).sort(), [...listed, 'post.html'].sort());
    const { page: reader, problems: readerProblems } = await openPage(live.chrome.browser, 'file://', viewport);
    const requests = [];
    reader.on('request', (request) => requests.push(request.url().split('/').pop()));
    await reader.goto(pathToFileURL(join(dir, 'post.html')).href);
    await settled(reader, 1);
    const [shown] = await describe(reader);
    assert.equal(shown.status, 'ready', shown.title);
    assert.doesNotMatch(shown.title, /could not|error/i);
    if (model) assert.match(shown.title, /trained model: English/);
    assert.equal(shown.matrices.length, 1);
    // The heatmap is drawn: its canvas holds more than one colour.
    const colours = await reader.evaluate(() => {
      const canvas = document.querySelector('attention-lens').shadowRoot.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      const seen = new Set();
      for (let i = 0; i < data.length; i += 4) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      return seen.size;
    });
    assert.ok(colours > 8, `the heatmap canvas holds ${colours} colours`);
    assert.deepEqual(requests, ['post.html', ...listed], 'nothing is loaded but the post and the listed files');
    await reader.screenshot({ path: join(screenshotDir, `embed-snippet-post-${model || 'random'}-${viewport.width}.png`), fullPage: true });
    assert.deepEqual(readerProblems(), []);
    await reader.context().close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('over http the element also loads as <script type="module">, and twice on one page', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await instrument(page);
  const url = await routeHtml(page, 'embed-module.html', pageHtml(
    '<script type="module" src="./attention-lens-element.js"></script>' +
    '<script src="./attention-lens-element.js" defer></script>',
    '<attention-lens text="The cat sat on the mat" positional="rope" step="scores" heads="2" head="2"></attention-lens>' +
    '<attention-lens text="one two three" compact></attention-lens>'));
  await page.goto(url);
  await settled(page, 2);
  const [rope, small] = await describe(page);
  assert.equal(rope.status, 'ready');
  assert.equal(rope.step, 'scores');
  assert.deepEqual(rope.matrices, [{ rows: 6, cols: 6 }]);
  assert.match(rope.title, /head\s2\sof\s2/);
  assert.ok(rope.table.flat().some((v) => v < 0), 'raw scores include negative values');
  assert.deepEqual(small.matrices, [{ rows: 3, cols: 3 }]);
  assert.equal(await page.evaluate(() => window.__wasmInstances), 1);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('the drawn numbers equal layer.forward() of the JS API for the same settings', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  const cases = [
    { attrs: { text: 'The bank will not loan money', heads: '4', mask: 'causal', head: '3' },
      config: { dModel: 64, heads: 4, positional: 'sinusoidal', seed: 42 }, head: 2, forward: { mask: 'causal' } },
    { attrs: { text: 'The boat reached the bank', source: 'Le bateau a atteint la rive', heads: '2', head: '2',
      'd-model': '32', seed: '7', positional: 'none' },
    config: { dModel: 32, heads: 2, positional: 'none', seed: 7 }, head: 1, forward: {} },
    { attrs: { text: 'attention is all you need', positional: 'rope', mask: 'sliding-window', window: '2', scale: 'false' },
      config: { dModel: 64, heads: 4, positional: 'rope', seed: 42 }, head: 0,
      forward: { mask: 'sliding-window', window: 2, scale: false } },
  ];
  const attribute = ([k, v]) => `${k}="${v}"`;
  const url = await routeHtml(page, 'embed-numbers.html', pageHtml(
    '<script src="./attention-lens-element.js" defer></script>',
    cases.map((c) => `<attention-lens ${Object.entries(c.attrs).map(attribute).join(' ')}></attention-lens>`).join('')));
  await page.goto(url);
  await settled(page, cases.length);
  const shown = await describe(page);
  const expected = await page.evaluate(async (list) => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    const lens = await loadAttentionLens();
    return list.map(({ attrs, config, head, forward }) => {
      const layer = lens.createLayer(config);
      const q = lens.tokenize(attrs.text);
      const options = { ...forward, n: q.tokens.length };
      let kvN = q.tokens.length;
      if (attrs.source) {
        const s = lens.tokenize(attrs.source);
        kvN = s.tokens.length;
        Object.assign(options, { kv: layer.embed(s.ids), kvN });
      }
      const { attention } = layer.forward(layer.embed(q.ids), options);
      layer.dispose();
      const n = q.tokens.length;
      return Array.from({ length: n }, (_, i) =>
        Array.from(attention.subarray((head * n + i) * kvN, (head * n + i + 1) * kvN)));
    });
  }, cases);
  cases.forEach((c, k) => {
    const table = shown[k].table;
    assert.equal(shown[k].status, 'ready', `case ${k}`);
    assert.deepEqual(shown[k].problems, [], `case ${k}`);
    assert.equal(table.length, expected[k].length, `case ${k}: rows`);
    expected[k].forEach((row, i) => {
      assert.equal(table[i].length, row.length, `case ${k}: columns of row ${i}`);
      row.forEach((v, j) => {
        const tolerance = 6e-5 + 1e-3 * Math.abs(v);
        assert.ok(Math.abs(table[i][j] - v) <= tolerance, `case ${k} [${i}][${j}]: drawn ${table[i][j]}, API ${v}`);
      });
    });
  });
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('invalid attributes show a message, HTML in attributes stays text, nothing runs', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  const { dialogs } = await instrument(page);
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  const url = await routeHtml(page, 'embed-invalid.html', pageHtml(
    '<script src="./attention-lens-element.js" defer></script>',
    '<attention-lens heads="five" text="&lt;img src=x onerror=alert(1)&gt;"></attention-lens>' +
    '<attention-lens mask="&lt;img src=y onerror=alert(2)&gt;" step="nope" head="9" text="a b"></attention-lens>' +
    '<attention-lens heads="5" d-model="16" text="heads must divide d-model"></attention-lens>'));
  await page.goto(url);
  await settled(page, 3);
  const [xss, bad, indivisible] = await describe(page);
  const tokens = await page.evaluate(async () => {
    const { loadAttentionLens } = await import('/attention-lens.mjs');
    return (await loadAttentionLens()).tokenize('<img src=x onerror=alert(1)>').tokens;
  });

  assert.equal(xss.status, 'ready');
  assert.ok(xss.problems.some((p) => p.startsWith('heads="five" is not valid; using 4')), xss.problems.join(' | '));
  assert.deepEqual(xss.chips, ['Tokens:', ...tokens]); // the markup, as literal tokens
  assert.ok(tokens.includes('img') && tokens.includes('onerror'));
  assert.equal(xss.headButtons, 4); // rendered with the default heads
  assert.deepEqual(xss.matrices, [{ rows: tokens.length, cols: tokens.length }]);

  assert.equal(bad.status, 'ready');
  assert.ok(bad.problems.some((p) => p.startsWith('mask="<img src=y onerror=alert(2)>" is not valid')), bad.problems.join(' | '));
  assert.ok(bad.problems.some((p) => p.startsWith('step="nope" is not valid')), bad.problems.join(' | '));
  assert.ok(bad.problems.some((p) => /head="9" is more than the 4 heads/.test(p)), bad.problems.join(' | '));
  assert.equal(bad.step, 'weights');
  assert.deepEqual(bad.matrices, [{ rows: 2, cols: 2 }]);

  // Valid on their own, rejected by the core together: its message, then the default d-model and heads.
  assert.equal(indivisible.status, 'ready');
  assert.equal(indivisible.problems.length, 1, indivisible.problems.join(' | '));
  assert.match(indivisible.problems[0], /head/i);
  assert.match(indivisible.problems[0], /Showing the default d-model and heads instead\.$/);
  assert.equal(indivisible.headButtons, 4);
  assert.deepEqual(indivisible.matrices, [{ rows: 6, cols: 6 }]); // heads must divide d - model

  // The same through setAttribute after the first render.
  await page.evaluate(() => {
    const host = document.querySelector('attention-lens');
    host.setAttribute('text', '<b>bold</b><img src=z onerror="window.__pwned = 1"><script>window.__pwned = 2</script>');
    host.setAttribute('source', '<svg onload="window.__pwned = 3">');
  });
  await page.waitForFunction(() => document.querySelector('attention-lens').shadowRoot.textContent.includes('svg'));
  assert.equal(await countTags(page, ['img', 'b', 'svg', 'script']), 1); // the page's own <script>
  const [changed] = await describe(page);
  assert.ok(changed.chips.includes('onerror') && changed.chips.includes('svg'), changed.chips.join(' '));
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(requests.filter((u) => /\/[xyz]$/.test(u)), []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('attribute changes re-render, once per frame', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  const url = await routeHtml(page, 'embed-change.html', pageHtml(
    '<script src="./attention-lens-element.js" defer></script>',
    '<attention-lens text="The bank will not loan money"></attention-lens>'));
  await page.goto(url);
  await settled(page, 1);
  let [shown] = await describe(page);
  assert.deepEqual(shown.matrices, [{ rows: 6, cols: 6 }]);
  assert.equal(shown.headButtons, 4);
  const before = shown.renders;

  // Four changes in one task: one compute, one render.
  await page.evaluate(() => {
    const host = document.querySelector('attention-lens');
    host.setAttribute('text', 'Time flies like an arrow today');
    host.setAttribute('heads', '2');
    host.setAttribute('mask', 'causal');
    host.setAttribute('text', 'Time flies');
  });
  await page.waitForFunction((n) => document.querySelector('attention-lens').renderCount > n, before);
  await page.waitForTimeout(150);
  [shown] = await describe(page);
  assert.equal(shown.renders, before + 1);
  assert.deepEqual(shown.matrices, [{ rows: 2, cols: 2 }]);
  assert.equal(shown.headButtons, 2);
  assert.deepEqual(shown.chips, ['Tokens:', 'Time', 'flies']);
  assert.equal(shown.table[0][1], 0, 'causal mask applied');

  // The step attribute switches the view without a new token set; Q, K, V shows three matrices.
  await page.evaluate(() => document.querySelector('attention-lens').setAttribute('step', 'qkv'));
  await page.waitForFunction(() => document.querySelector('attention-lens').shadowRoot.querySelector('.lens').dataset.step === 'qkv');
  [shown] = await describe(page);
  assert.deepEqual(shown.matrices, [{ rows: 2, cols: 32 }, { rows: 2, cols: 32 }, { rows: 2, cols: 32 }]);

  // compact hides the chips; the head picker button switches heads; hovering reads a cell.
  await page.evaluate(() => {
    const host = document.querySelector('attention-lens');
    host.setAttribute('step', 'weights');
    host.toggleAttribute('compact', true);
  });
  await page.waitForFunction(() => document.querySelector('attention-lens').shadowRoot.querySelector('.lens').dataset.step === 'weights');
  [shown] = await describe(page);
  assert.deepEqual(shown.chips, []);
  const canvas = page.locator('attention-lens canvas');
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width - 14, box.y + box.height - 8); // last row, last column
  await page.waitForFunction(() => /:/.test(document.querySelector('attention-lens').shadowRoot.querySelector('.readout').textContent));
  const readout = await page.locator('attention-lens .readout').textContent();
  assert.match(readout, /^query “flies” → key “flies”: 0\.\d+|^query “flies” → key “flies”: 1$/);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('runs under a strict Content-Security-Policy (no eval, no new Function, no inline style)', async () => {
  const body = '<attention-lens text="The bank will not loan money" mask="causal"></attention-lens>';
  const head = '<script src="./attention-lens-element.js" defer></script>';
  const strict = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src data:";
  {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url);
    await instrument(page);
    const url = await routeHtml(page, 'embed-csp.html', pageHtml(head, body), { 'Content-Security-Policy': strict });
    await page.goto(url);
    await settled(page, 1);
    const [shown] = await describe(page);
    assert.equal(shown.status, 'ready');
    assert.deepEqual(shown.matrices, [{ rows: 6, cols: 6 }]);
    assertProbabilityRows(shown.table, 'csp');
    assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
  {
    // Without 'wasm-unsafe-eval' the browser refuses to compile the wasm: a readable message.
    const { page } = await openPage(live.chrome.browser, live.server.url);
    await instrument(page);
    const url = await routeHtml(page, 'embed-csp-no-wasm.html', pageHtml(head, body),
      { 'Content-Security-Policy': "default-src 'self'; script-src 'self'" });
    await page.goto(url);
    await settled(page, 1);
    const [shown] = await describe(page);
    assert.equal(shown.status, 'error');
    assert.match(shown.title, /could not run/);
    assert.match(shown.title, /wasm-unsafe-eval/);
    await page.context().close();
  }
});

test('the built element is one classic script with the wasm inlined', () => {
  const code = readFileSync(join(dist, 'attention-lens-element.js'), 'utf8');
  assert.doesNotMatch(code, /\bimport\.meta\b/);
  assert.doesNotMatch(code, /^\s*(import|export)\b[^(]/m);
  assert.doesNotMatch(code, /\bnew Function\b/);
  assert.match(code, /data:application\/octet-stream;base64,AGFzbQ/); // "\0asm", inlined
  assert.doesNotMatch(code, /attention-lens\.wasm/);
});

// ---- model="…": the shipped trained models -------------------------------------------------

/** Layer l, head h of a shipped trained model on `text`, from the JS API in Node: rows of weights. */
async function trainedWeights(name, text, l, h) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', pathToFileURL(dist)).href);
  const lens = await loadAttentionLens();
  const model = await lens.trainedModel(name);
  const ids = model.encode(text);
  const n = ids.length;
  const a = model.forward(ids, { n }).attention[l];
  model.dispose();
  return Array.from({ length: n }, (_, i) => Array.from(a.subarray((h * n + i) * n, (h * n + i + 1) * n)));
}

function assertTableEquals(table, expected, label) {
  assert.equal(table.length, expected.length, `${label}: rows`);
  expected.forEach((row, i) => row.forEach((v, j) => {
    assert.ok(Math.abs(table[i][j] - v) <= 6e-5 + 1e-3 * Math.abs(v), `${label} [${i}][${j}]: drawn ${table[i][j]}, API ${v}`);
  }));
}

const INDUCTION_TEXT = 'qwertyuiopqwertyuiop';
const modelBody = `<attention-lens model="induction" layer="2" head="4" text="${INDUCTION_TEXT}"></attention-lens>` +
  '<attention-lens text="The cat sat on the mat" mask="causal"></attention-lens>';

test('model="induction" from file:// shows the trained layer-2 head; only that model is downloaded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lens-model-'));
  const file = join(dir, 'post.html');
  writeFileSync(file, pageHtml(`<script src="${elementUrl}" defer></script>`, modelBody));
  const { page, problems } = await openPage(live.chrome.browser, 'file://');
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(file).href);
  await settled(page, 2);
  const [trained, plain] = await describe(page);
  assert.equal(trained.status, 'ready', trained.title);
  assert.deepEqual(trained.problems, []);
  assert.match(trained.title, /head\s4\sof\s4/);
  assert.match(trained.title, /trained model: Induction heads.*layer\s2\sof\s2/);
  assertTableEquals(trained.table, await trainedWeights('induction', INDUCTION_TEXT, 1, 3), 'induction');
  // The induction head: in the repeat, each query attends to the token after its earlier copy.
  const half = INDUCTION_TEXT.length / 2;
  for (let i = half; i < INDUCTION_TEXT.length; ++i) assert.ok(trained.table[i][i - half + 1] > 0.5, `query ${i}`);
  assert.equal(plain.status, 'ready');
  assert.doesNotMatch(plain.title, /trained/);
  const modelUrl = new URL('models/induction.js', elementUrl).href;
  assert.deepEqual(requests, [pathToFileURL(file).href, elementUrl, modelUrl]);
  assert.deepEqual(problems(), []);
  await page.context().close();
  rmSync(dir, { recursive: true, force: true });
});

test('model="…" over http under a strict CSP; characters outside the alphabet are mapped and said, unknown models named', async () => {
  const strict = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src data:";
  const body = modelBody +
    '<attention-lens model="english" text="Hello, world" head="1"></attention-lens>' +
    '<attention-lens model="gpt5" text="abc"></attention-lens>';
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await instrument(page);
  const url = await routeHtml(page, 'embed-model-csp.html',
    pageHtml('<script src="./attention-lens-element.js" defer></script>', body), { 'Content-Security-Policy': strict });
  await page.goto(url);
  await settled(page, 4);
  const [trained, plain, english, unknown] = await describe(page);
  assert.equal(trained.status, 'ready');
  assertTableEquals(trained.table, await trainedWeights('induction', INDUCTION_TEXT, 1, 3), 'induction (csp)');
  assert.equal(plain.status, 'ready');
  assert.equal(english.status, 'ready');
  // What the reader typed is read in the model's alphabet (the API's tokenize with unknown: 'map'), and said.
  assert.match(english.problems.join(' '), /Read in the english model's alphabet: 1 capital as lowercase\./);
  assertTableEquals(english.table, await trainedWeights('english', 'hello, world', 0, 0), 'english');
  assert.match(unknown.problems.join(' '), /model="gpt5" is not a shipped model \(induction, english\)/);
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});
