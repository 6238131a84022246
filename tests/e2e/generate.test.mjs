// The Your model view's knock-out and generation in Chromium, with the shipped english model (it
// loads when the tab is first shown): a head's "knock out" lists each next token's probability
// before → after as the JS API gives them for the same ablation in the same browser, Restore all
// gives back the unablated numbers exactly; greedy generation (temperature 0) writes the API's
// generate tokens, with and without a head knocked out; the page stays responsive while it writes;
// where the newest token looked is drawn, and the chosen head's whole generation as a heatmap whose
// numbers are the API's generate steps for that head; a sampled run of more than 8 tokens (the
// page asks for 8 at a time) equals one API generate call with that seed. Screenshots: desktop,
// 375 px (no sideways scroll; the before → after ticks clear of the text), dark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserFixture, openPage, screenshotDir } from './browser.mjs';

const live = browserFixture();
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

/**
 * The API in the page: the english model on `text`, with `heads` ablated: every next token's
 * probability, and generate's ids (greedy, or with `sampling`: { temperature, topK, topP, seed })
 * and each step's query row of head `head` in layer `layer` (`rows`: [[layer, head]]).
 */
function apiEnglish(page, { text, heads, maxTokens, sampling = { temperature: 0 }, rows = [] }) {
  return page.evaluate(async ({ text, heads, maxTokens, sampling, rows }) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const lens = await loadAttentionLens();
    const m = await lens.trainedModel('english');
    const all = m.tokenize(text, { unknown: 'map' });
    const ids = all.ids.slice(0, Math.min(all.ids.length, m.config.context));
    m.ablate(heads);
    m.forward(ids, { n: ids.length });
    const next = Object.fromEntries(m.nextTokens(m.config.vocab).map((t) => [t.id, t.probability]));
    const top = m.nextTokens(10).map((t) => ({ id: t.id, probability: t.probability }));
    const g = maxTokens ? m.generate(ids, { maxTokens, ...sampling }) : { ids: [], steps: [] };
    const generated = Array.from(g.ids);
    const { heads: h } = m.config;
    const headRows = rows.map(([layer, head]) => g.steps.map((step) => {
      const t = step.attention[layer].length / h;
      return Array.from(step.attention[layer].subarray(head * t, (head + 1) * t));
    }));
    const config = { ...m.config };
    m.dispose();
    return { next, top, generated, headRows, config, n: ids.length };
  }, { text, heads, maxTokens, sampling, rows });
}

/** In the page: the generation heatmap's numbers (its screen-reader table; a cell not written yet is NaN) once `rows` rows are drawn. */
function drawnGenerationMap(rows) {
  const host = document.querySelector('#model-gen-map');
  const figure = host?.querySelector('figure');
  if (host.hidden || host.dataset.rows !== String(rows) || figure?.dataset.table !== 'ready') return null;
  return { layer: Number(host.dataset.layer), head: Number(host.dataset.head), label: figure.querySelector('canvas').getAttribute('aria-label'),
    caption: figure.querySelector('figcaption').textContent,
    rows: [...figure.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))),
    rowLabels: [...figure.querySelectorAll('tbody th')].map((th) => th.textContent) };
}

/**
 * The heatmap's rows against the API's steps for one head (`api`: per new token its query row,
 * t = prompt + k values): each row's first t numbers as the table prints them (4 digits), the rest
 * of the row not written yet.
 */
function assertMapEquals(drawn, api, what) {
  assert.equal(drawn.rows.length, api.length, `${what}: a row per new token`);
  const cols = api[api.length - 1].length;
  drawn.rows.forEach((row, k) => {
    assert.equal(row.length, cols, `${what}: row ${k}'s columns`);
    api[k].forEach((v, j) => assert.ok(Math.abs(row[j] - v) <= 5e-5 + 5e-4 * Math.abs(v), `${what}: [${k}][${j}] drawn ${row[j]}, API ${v}`));
    assert.ok(row.slice(api[k].length).every(Number.isNaN), `${what}: row ${k} after its ${api[k].length} positions is not written yet`);
  });
}

const listed = (page) => page.$$eval('#model-next li', (items) => items.map((li) => ({ id: Number(li.dataset.id),
  probability: li.dataset.probability, before: li.dataset.before, after: li.dataset.after })));

const generated = (page) => page.$$eval('#model-gen-text .model-gen-chip', (chips) => chips.map((c) => Number(c.dataset.id)));

async function generate(page, tokens) {
  const before = Number(await page.evaluate(() => document.body.dataset.modelGenerated ?? 0));
  await page.fill('#model-gen-tokens', String(tokens));
  await page.fill('#model-gen-temperature', '0');
  await page.click('#model-gen-start');
  await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated ?? 0) > b, before, { timeout: 30000 });
}

async function runDone(page, run) {
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun ?? 0) > r, run, { timeout: 30000 });
  return Number(await page.evaluate(() => document.body.dataset.modelRun));
}

test('Your model: knock out a head (before → after as the API gives), Restore all, greedy generation equals the API', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('#model-head-grid .model-knock', { timeout: 30000 });
  await page.waitForSelector('#model-next li');
  let run = Number(await page.evaluate(() => document.body.dataset.modelRun));

  // The example button: a sentence of the shipped model's alphabet.
  await page.click('#model-example');
  run = await runDone(page, run);
  const text = await page.inputValue('#model-text');
  assert.equal(text, 'the cat sat on the mat and the');

  const plain = await apiEnglish(page, { text, heads: [] });
  const unablated = await listed(page);
  assert.deepEqual(unablated.map((t) => t.id), plain.top.map((t) => t.id));
  assert.deepEqual(unablated.map((t) => Number(t.probability)), plain.top.map((t) => t.probability));

  // Knock out layer 1 head 1 (0, 0) and the last layer's last head.
  const { layers, heads } = plain.config;
  const knocked = [{ layer: 0, head: 0 }, { layer: layers - 1, head: heads - 1 }];
  for (const { layer, head } of knocked) {
    await page.click(`#model-head-grid .model-knock[data-layer="${layer}"][data-head="${head}"]`);
    run = await runDone(page, run);
  }
  assert.equal(await page.getAttribute('#model-head-grid .model-knock[data-layer="0"][data-head="0"]', 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute('#model-head-grid .model-knock[data-layer="0"][data-head="1"]', 'aria-pressed'), 'false');
  assert.equal(await page.isDisabled('#model-restore'), false);
  const ablated = await apiEnglish(page, { text, heads: knocked });
  const compared = await listed(page);
  assert.ok(compared.length >= 10, 'the union of both top 10s');
  for (const t of compared) {
    assert.equal(Number(t.before), plain.next[t.id], `token ${t.id} before`);
    assert.equal(Number(t.after), ablated.next[t.id], `token ${t.id} after`);
  }
  const moves = compared.map((t) => Math.abs(Number(t.after) - Number(t.before)));
  assert.deepEqual(moves, [...moves].sort((a, b) => b - a), 'the biggest movers first');
  assert.ok(ablated.top.some((t, i) => t.probability !== plain.top[i].probability), 'the ablation moves the prediction');
  assert.match(await page.textContent('#model-ablated'), /L1 H1, L\d+ H\d+/);

  // Generation uses the ablated model.
  await generate(page, 16);
  const withAblation = await apiEnglish(page, { text, heads: knocked, maxTokens: 16 });
  assert.deepEqual(await generated(page), withAblation.generated);
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-generate-ablated.png'), fullPage: true });

  // Restore all: the unablated numbers exactly.
  await page.click('#model-restore');
  run = await runDone(page, run);
  const restored = await listed(page);
  assert.deepEqual(restored, unablated);
  assert.equal(await page.isDisabled('#model-restore'), true);
  assert.equal(await page.$$eval('#model-head-grid .model-knock[aria-pressed="true"]', (b) => b.length), 0);

  // Greedy generation equals the API's generate for the same prompt; each token's probability in its title.
  await generate(page, 30);
  const api = await apiEnglish(page, { text, heads: [], maxTokens: 30, rows: [[0, 0], [layers - 1, heads - 2]] });
  assert.deepEqual(await generated(page), api.generated);
  assert.match(await page.getAttribute('#model-gen-text .model-gen-chip', 'title'), /^probability \d+(\.\d+)?% \(how likely the model found it when it wrote it\)$/);
  assert.match(await page.textContent('#model-gen-strip .model-gen-caption'),
    /^New token 30, “.*” \(probability \d+(\.\d+)?%: how likely the model found it, the softmax of its logits at temperature 1\): /);
  assert.match(await page.textContent('#model-gen-info'), /^30 tokens in .* tokens\/s/);
  // Where the newest token looked: the strip drawn, the chosen head's row on the chips.
  assert.equal(await page.isVisible('#model-gen-strip canvas'), true);
  // The strip's rows: one per layer (its heads max-pooled), one per head of the chosen layer, or every layer × head.
  const strip = () => page.$eval('#model-gen-strip canvas', (c) => ({ rows: Number(c.dataset.rows), cols: Number(c.dataset.cols),
    height: c.getBoundingClientRect().height, label: c.getAttribute('aria-label') }));
  const t = api.n + 29;
  assert.equal(await page.inputValue('#model-gen-rows'), 'layers');
  let drawnStrip = await strip();
  assert.deepEqual([drawnStrip.rows, drawnStrip.cols, drawnStrip.height], [layers, t, layers * 10]);
  assert.match(drawnStrip.label, new RegExp(`one row per layer \\(${layers}\\), each position the brightest of the layer's ${heads} heads`));
  await page.selectOption('#model-gen-rows', 'all');
  drawnStrip = await strip();
  assert.deepEqual([drawnStrip.rows, drawnStrip.height], [layers * heads, layers * heads * 6]);
  await page.selectOption('#model-gen-rows', 'layer');
  drawnStrip = await strip();
  assert.deepEqual([drawnStrip.rows, drawnStrip.height], [heads, heads * 10]);
  assert.match(drawnStrip.label, /one row per head of layer 1 \(\d+\)/);
  await page.selectOption('#model-gen-rows', 'layers');
  const looks = await page.$$eval('#model-gen-text > [data-look]', (chips) => chips.map((c) => Number(c.dataset.look)));
  assert.equal(looks.length, api.n + 29);
  assert.ok(Math.abs(looks.reduce((a, b) => a + b, 0) - 1) < 1e-3, 'a softmax row');
  // The chosen head's whole generation (layer 1 head 1 first): a row per new token, the API's numbers.
  let map = await (await page.waitForFunction(drawnGenerationMap, 30, { timeout: 10000 })).jsonValue();
  assert.deepEqual([map.layer, map.head], [0, 0]);
  assertMapEquals(map, api.headRows[0], 'layer 1 head 1');
  assert.equal(map.rowLabels.length, 30);
  assert.match(map.caption, /^Layer 1, head 1: where each new token looked/);
  assert.match(map.label, /^Layer 1, head 1: where each new token looked .*: 30 new token rows by 59 position columns/);
  // Another head picked: its rows.
  await page.selectOption('#model-gen-head', `${layers - 1}:${heads - 2}`);
  map = await (await page.waitForFunction(drawnGenerationMap, 30, { timeout: 10000 })).jsonValue();
  assert.deepEqual([map.layer, map.head], [layers - 1, heads - 2]);
  assertMapEquals(map, api.headRows[1], `layer ${layers} head ${heads - 1}`);
  assert.match(map.caption, new RegExp(`^Layer ${layers}, head ${heads - 1}: `));
  await page.selectOption('#model-gen-head', '0:0');

  // Hover a token: its row.
  await page.focus('#model-gen-text .model-gen-chip[data-k="3"]');
  assert.match(await page.textContent('#model-gen-strip .model-gen-caption'), /^New token 4,/);
  assert.equal(await page.$$eval('#model-gen-text > [data-look]', (chips) => chips.length), api.n + 3);

  // Responsive while it writes: typing during a generation (the whole context) lands at once.
  const context = plain.config.context;
  const done = Number(await page.evaluate(() => document.body.dataset.modelGenerated));
  await page.fill('#model-gen-tokens', String(context - plain.n));
  await page.click('#model-gen-start');
  const t0 = Date.now();
  await page.type('#model-text', ' x', { delay: 0 });
  const typedIn = Date.now() - t0;
  assert.ok(typedIn < 2000, `typing took ${typedIn} ms`);
  assert.equal(await page.inputValue('#model-text'), `${text} x`);
  await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated) > b, done, { timeout: 30000 });
  assert.match(await page.textContent('#model-gen-info'), /context \(64\) is full/);

  // Stop right after Generate: the chunk in flight is dropped, nothing more is asked; the newest
  // Generate wins over one still running (only its tokens are drawn).
  await page.fill('#model-text', text);
  await page.fill('#model-gen-tokens', '30');
  let mark = Number(await page.evaluate(() => document.body.dataset.modelGenerated));
  await page.evaluate(() => {
    document.getElementById('model-gen-start').click();
    document.getElementById('model-gen-stop').click();
  });
  await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated) > b, mark, { timeout: 30000 });
  assert.match(await page.textContent('#model-gen-info'), /^0 tokens in .* · stopped$/);
  assert.equal((await generated(page)).length, 0);
  assert.equal(await page.isDisabled('#model-gen-stop'), true);
  mark = Number(await page.evaluate(() => document.body.dataset.modelGenerated));
  await page.evaluate(() => {
    document.getElementById('model-gen-start').click();
    document.getElementById('model-gen-start').click();
  });
  await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated) > b, mark, { timeout: 30000 });
  assert.deepEqual(await generated(page), api.generated);

  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('Your model: generation and knock-out screenshots (desktop, 375 px without sideways scroll, dark)', async () => {
  for (const [label, viewport, dark] of [['desktop', { width: 1280, height: 900 }, false], ['phone', { width: 375, height: 812 }, false],
    ['desktop-dark', { width: 1280, height: 900 }, true]]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(`${live.server.url}#tab=model`);
    if (dark) while (await page.evaluate(() => document.documentElement.dataset.theme ?? 'auto') !== 'dark') await page.click('#theme');
    await page.waitForSelector('#model-head-grid .model-knock', { timeout: 30000 });
    await page.waitForSelector('#model-next li');
    let run = Number(await page.evaluate(() => document.body.dataset.modelRun));
    await page.click('#model-example');
    run = await runDone(page, run);
    await page.click('#model-head-grid .model-knock[data-layer="0"][data-head="0"]');
    run = await runDone(page, run);
    await generate(page, 20);
    await page.waitForFunction(drawnGenerationMap, 20, { timeout: 10000 });
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(sideways, 0, `${label}: no sideways scroll`);
    // The heatmap inside the page (it may scroll in its own box), with its caption and label.
    const box = await page.evaluate(() => ({ right: document.querySelector('#model-gen-map .heatmap-scroll').getBoundingClientRect().right,
      width: innerWidth }));
    assert.ok(box.right <= box.width, `${label}: the heatmap's box ends at ${box.right} px in ${box.width}`);
    // The before → after list: no "before" tick crosses a token or its numbers.
    const crossings = await page.$$eval('#model-next li.model-next-compare', (items) => items.flatMap((li) => {
      const tick = li.querySelector('.model-next-bar-before').getBoundingClientRect();
      return [...li.querySelectorAll('.model-next-token, .model-next-change')].filter((text) => {
        const r = text.getBoundingClientRect();
        return tick.right > r.left && tick.left < r.right && tick.bottom > r.top && tick.top < r.bottom;
      }).map((text) => `${li.dataset.id}: ${text.textContent}`);
    }));
    assert.ok(await page.$('#model-next li.model-next-compare'), `${label}: the before → after list`);
    assert.deepEqual(crossings, [], `${label}: ticks over text`);
    await page.screenshot({ path: join(screenshotDir, `yourmodel-generate-${label}.png`), fullPage: true });
    // axe's WCAG A/AA rules with a head knocked out and a generation drawn.
    await page.addScriptTag({ content: AXE });
    const violations = await page.evaluate(async () => (await window.axe.run(document.querySelector('#model-view'),
      { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }))
      .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
    assert.deepEqual(violations, [], label);
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('Your model: the URL holds the text, the sampling settings, the seed and the knocked-out heads, restored on load', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  const hash = '#tab=model&modelText=the+dog+sat+on+the&genTokens=12&genTemperature=0.7&genTopK=5&genTopP=0.9&genSeed=7&knock=0.1%2C1.2';
  await page.goto(`${live.server.url}${hash}`);
  await page.waitForSelector('#model-head-grid .model-knock', { timeout: 30000 });
  await page.waitForSelector('body[data-model-ablated="2"]', { timeout: 30000 });
  assert.equal(await page.inputValue('#model-text'), 'the dog sat on the');
  assert.deepEqual(await Promise.all(['tokens', 'temperature', 'topk', 'topp', 'seed'].map((f) => page.inputValue(`#model-gen-${f}`))),
    ['12', '0.7', '5', '0.9', '7']);
  assert.deepEqual(await page.$$eval('#model-head-grid .model-knock[aria-pressed="true"]', (bs) => bs.map((b) => `${b.dataset.layer}.${b.dataset.head}`)),
    ['0.1', '1.2']);
  assert.ok(await page.$('#model-next li[data-before]'), 'the before → after list');

  // Sampled generation replays: the same seed, the same tokens; and it is one API generate call
  // with that seed, though the page asks for 8 tokens at a time (12 = 8 + 4; 20 = 8 + 8 + 4).
  const gen = async () => {
    const before = Number(await page.evaluate(() => document.body.dataset.modelGenerated ?? 0));
    await page.click('#model-gen-start');
    await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated ?? 0) > b, before, { timeout: 30000 });
    return page.$$eval('#model-gen-text .model-gen-chip', (chips) => chips.map((c) => Number(c.dataset.id)));
  };
  const first = await gen();
  assert.equal(first.length, 12);
  assert.deepEqual(await gen(), first);
  const knocked = [{ layer: 0, head: 1 }, { layer: 1, head: 2 }];
  const sampling = { temperature: 0.7, topK: 5, topP: 0.9, seed: 7 };
  const one = await apiEnglish(page, { text: 'the dog sat on the', heads: knocked, maxTokens: 12, sampling });
  assert.deepEqual(first, one.generated, "the page's 12 sampled tokens = one generate call");
  await page.fill('#model-gen-tokens', '20');
  const longer = await gen();
  const twenty = await apiEnglish(page, { text: 'the dog sat on the', heads: knocked, maxTokens: 20, sampling });
  assert.deepEqual(longer, twenty.generated, "the page's 20 sampled tokens = one generate call");
  assert.deepEqual(longer.slice(0, 12), first);
  // A flatter distribution (temperature 1.5, no top-k or top-p), where a chunk seeded otherwise
  // would part from the one call at its 9th token.
  await page.fill('#model-gen-temperature', '1.5');
  await page.fill('#model-gen-topk', '0');
  await page.fill('#model-gen-topp', '1');
  const flat = await gen();
  const flatApi = await apiEnglish(page, { text: 'the dog sat on the', heads: knocked, maxTokens: 20,
    sampling: { temperature: 1.5, topK: 0, topP: 1, seed: 7 } });
  assert.equal(flat.length, 20);
  assert.deepEqual(flat, flatApi.generated, "temperature 1.5: the page's 20 tokens = one generate call");
  await page.fill('#model-gen-temperature', '0.7');
  await page.fill('#model-gen-topk', '5');
  await page.fill('#model-gen-topp', '0.9');
  // The test can tell runs apart: another seed writes another run.
  const other = await apiEnglish(page, { text: 'the dog sat on the', heads: knocked, maxTokens: 20, sampling: { ...sampling, seed: 8 } });
  assert.notDeepEqual(other.generated, twenty.generated);

  // Changes go into the hash.
  await page.fill('#model-gen-seed', '9');
  await page.dispatchEvent('#model-gen-seed', 'change');
  await page.click('#model-head-grid .model-knock[data-layer="0"][data-head="1"]');
  await page.fill('#model-text', 'the cat');
  await page.waitForFunction(() => location.hash.includes('genSeed=9') && location.hash.includes('knock=1.2') &&
    location.hash.includes('modelText=the+cat'), null, { timeout: 5000 });
  assert.match(await page.evaluate(() => location.hash), /genTemperature=0\.7/);
  assert.deepEqual(problems(), []);
  await page.context().close();
});
