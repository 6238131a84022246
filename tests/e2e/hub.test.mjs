// The "Your model" view never empty and a Hub model one click away, in Chromium, against the local
// stand-in of the Hub (scripts/lib/hub-stand-in.mjs; no test reaches the internet): the page opened at
// #tab=model&hubEndpoint=<stand-in> shows the shipped english model drawn as the JS API computes
// it, without any action and without a request to the Hub; a small GPT-2 repo typed in the id box
// loads and its heads equal lens.loadCheckpoint({ hub, endpoint })'s attention in the same page;
// an unknown repo shows the API's "was not found" and the model stays; a load held by a server
// that never answers is cancelled and the model stays. The Llama family by id: a sharded Mistral
// (its index, each shard), a Qwen2 in BF16 and a random Llama with SmolLM2's head layout, drawn as
// the API computes, their heads grouped by the K/V head they read, the facts line; a config the
// core refuses (rope_scaling 'yarn') keeps the model; at 1280 and 375 px (screenshots
// yourmodel-gqa-*.png; no sideways scroll) with axe's WCAG A/AA rules. The Hub model's id in the
// link: a repo loaded by id puts hub=org/name in the URL, and that URL opened in a fresh page loads
// the same model (no shipped model first); a revision other than main goes along (hubRevision);
// a link's id that is not org/name is ignored and said so as text, one the stand-in does not have
// gives the API's message and the shipped model. Served under STRICT_CSP with
// the stand-in's origins added to connect-src (strictCspAlso: a test-only extension).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchBrowser, openPage, screenshotDir, serveDist, tableNumbers } from './browser.mjs';
import { apiHubCheckpoint, assertHeadsDrawn, drawnGroups, expectedGroups, headFigure, loadFeedbackPlace, qwen2Bf16, randomLlama, recordLoadLines,
  shardedMistral, SMALL_GPT2, SMALL_ID, startSmallHub, startStall, tilesCropped } from './hub-fixture.mjs';
import { strictCspAlso } from '../../scripts/lib/csp.mjs';
import { smallGpt2Files } from '../js/checkpoint-support.mjs';
import { formatBytes } from '../../web/shared/format.js';
import { HUB_MODELS, hubGroups, hubModelLine, hubOptionLabel, whyNotLoadable } from '../../web/shared/hub-models.js';

// The Llama family's repos: a sharded Mistral (its index, two shards), a Qwen2 in BF16, a random
// Llama with SmolLM2's head layout (9 query heads, 3 K/V heads), and a config the core refuses.
const MISTRAL = shardedMistral();
const QWEN2 = qwen2Bf16();
const SMOL = randomLlama();
const BIN_LLAMA = {
  config: JSON.parse(readFileSync(fileURLToPath(new URL('../data/llama/llama-bf16.config.json', import.meta.url)), 'utf8')),
  bin: readFileSync(fileURLToPath(new URL('../data/torch/models/llama-bf16.bin', import.meta.url))),
  safetensors: readFileSync(fileURLToPath(new URL('../data/llama/llama-bf16.safetensors', import.meta.url))),
};
const LLAMA_REPOS = {
  'org/mistral-sharded': { 'config.json': MISTRAL.config, 'tokenizer.json': MISTRAL.tokenizer, 'model.safetensors.index.json': MISTRAL.index,
    ...Object.fromEntries(MISTRAL.names.map((name, i) => [name, MISTRAL.shards[i]])) },
  'org/qwen2-bf16': { 'config.json': QWEN2.config, 'tokenizer.json': QWEN2.tokenizer, 'model.safetensors': QWEN2.weights },
  'org/qwen2-bf16@v2': { 'config.json': QWEN2.config, 'tokenizer.json': QWEN2.tokenizer, 'model.safetensors': QWEN2.weights },
  'org/smol-shaped': { 'config.json': SMOL.config, 'tokenizer.json': SMOL.tokenizer, 'model.safetensors': SMOL.weights },
  // pytorch_model.bin only (torch.save of tests/data/llama/llama-bf16: q/k/v views of one storage,
  // a non-contiguous o_proj), and the same model as model.safetensors
  'org/llama-bin': { 'config.json': BIN_LLAMA.config, 'pytorch_model.bin': BIN_LLAMA.bin },
  'org/llama-safetensors': { 'config.json': BIN_LLAMA.config, 'model.safetensors': BIN_LLAMA.safetensors },
  'org/yarn': { 'config.json': { ...SMOL.config, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 16 } },
    'tokenizer.json': SMOL.tokenizer, 'model.safetensors': SMOL.weights },
};
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

let hub;
let stall; // a server that never answers: { origin, requests, close }
let server;
let chrome;

before(async () => {
  hub = await startSmallHub(LLAMA_REPOS);
  stall = await startStall();
  [server, chrome] = await Promise.all([serveDist({ csp: strictCspAlso([hub.endpoint, hub.storage, stall.origin]) }), launchBrowser()]);
});
after(async () => {
  await chrome?.close();
  server?.stop();
  await hub?.close();
  await stall?.close();
});

/** The numbers drawn in a head's heatmap (its screen-reader table), row by row. */
const tileNumbers = (page, layer, head) => tableNumbers(page, headFigure(layer, head));

/** The page's problems, less the stand-in's requests and the refusals it answers with on purpose. */
const realProblems = (problems) => problems().filter((p) => ![hub.endpoint, hub.storage, stall.origin].some((o) => p.includes(`left the origin: ${o}`)) &&
  !/Failed to load resource: the server responded with a status of (401|404)/.test(p));

test('Your model opens on the shipped english model, loads a Hub repo by id, keeps it on a refusal and a cancel', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  const cspViolations = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });

  // The shipped english model, loaded and drawn without any action; nothing asked of the Hub.
  assert.equal(await page.getAttribute('body', 'data-model-source'), 'shipped');
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'english');
  assert.match(await page.textContent('#model-status'), /^english \(English characters .*\), shipped with the page: .* 2 layers × 4 heads · d_model 64 · 48 tokens/);
  assert.equal(await page.getAttribute('#model-trained button[data-name="english"]', 'aria-pressed'), 'true');
  const text = await page.inputValue('#model-text');
  const english = await page.evaluate(async (typed) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const lens = await loadAttentionLens();
    const model = await lens.trainedModel('english');
    const { ids, note } = model.tokenize(typed, { unknown: 'map' });
    const { attention } = model.forward(ids, { n: ids.length });
    const top = model.nextTokens(10).map((t) => ({ id: t.id, text: Array.from(model.vocabulary)[t.id] }));
    return { n: ids.length, note, attention: attention.map((a) => Array.from(a)), top };
  }, text);
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), { layers: 2, heads: 4 }, english);
  assert.equal(await page.textContent('#model-text-info'), `${english.n} tokens · ${english.note}`);
  const next = await page.$$eval('#model-next li', (items) => items.map((li) => ({ id: Number(li.dataset.id),
    text: li.querySelector('.model-next-token').textContent })));
  assert.deepEqual(next.map((t) => t.id), english.top.map((t) => t.id));
  assert.ok(next.every((t) => t.text.length > 0 && !t.text.startsWith('#')), JSON.stringify(next));
  await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length === 8);
  assert.equal(hub.requests.length, 0, 'the Hub is not asked before a model is picked');

  // The Hub list: what fits the tab enabled, the others disabled and saying why: their parameters
  // in memory against the core's limit, lens.catalog.limits' in this page.
  const limit = await page.evaluate(async () => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const { families, parameterBytes, limits } = (await loadAttentionLens()).catalog;
    return { families, parameterBytes, maxParameterBytes: limits.maxCheckpointParameterBytes };
  });
  // One menu, grouped by family (the core's display names), each option 'name · size' (and in a
  // word why not, for one the tab cannot load); choosing one puts its id in the id box and its facts
  // line under the menu, and Load is disabled for one the tab cannot load.
  const groups = await page.$$eval('#model-hub-pick optgroup', (gs) => gs.map((g) => ({ label: g.label,
    options: [...g.querySelectorAll('option')].map((o) => [o.value, o.textContent]) })));
  assert.deepEqual(groups, hubGroups(limit).map(({ label, entries }) => ({ label, options: entries.map((m) => [m.id, hubOptionLabel(m, limit)]) })));
  const listed = [];
  for (const m of HUB_MODELS) {
    await page.selectOption('#model-hub-pick', m.id);
    listed.push({ id: await page.inputValue('#model-hub-id'), disabled: await page.isDisabled('#model-hub-load'),
      line: await page.textContent('#model-hub-line'), revisions: await page.locator('#model-hub-revision').isVisible() });
  }
  assert.deepEqual(listed, HUB_MODELS.map((m) => ({ id: m.id, disabled: whyNotLoadable(m, limit) !== null, line: hubModelLine(m, limit),
    revisions: Boolean(m.revisions) })));
  assert.ok(listed.filter((m) => !m.disabled).length >= 3, 'gpt2, distilgpt2 and SmolLM2-135M at least');
  for (const m of listed.filter((e) => e.disabled)) {
    assert.match(m.line, /· (needs \d\.\d+ GB as (float32|BF16); the tab's limit is \d\.\d+ GB|not read yet: .+)$/);
  }
  assert.equal(listed.find((m) => m.id === 'HuggingFaceTB/SmolLM2-135M').line, 'HuggingFaceTB/SmolLM2-135M · 269 MB · Llama · 135 M parameters');

  // A small GPT-2 repo by id, from the stand-in: its heads are lens.loadCheckpoint({ hub, endpoint })'s.
  await page.fill('#model-hub-id', SMALL_ID);
  // An id not listed: the menu back on its first line, no facts line, Load enabled.
  assert.deepEqual([await page.inputValue('#model-hub-pick'), await page.locator('#model-hub-line').isHidden(),
    await page.isDisabled('#model-hub-load')], ['', true, false]);
  await page.click('#model-hub-load');
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('body', 'data-model-source'), 'hub');
  assert.match(await page.textContent('#model-status'),
    new RegExp(`^org/small from ${hub.endpoint.replaceAll('.', '\\.')}: 2 layers × 2 heads · d_model 16 · 260 tokens · context 64 · wasm memory`));
  assert.equal(await page.locator('#model-progress').isHidden(), true);
  assert.equal(await page.locator('#model-cancel').isHidden(), true);
  assert.equal(hub.count('hub', '/org/small/resolve/main/config.json'), 1);
  const api = await page.evaluate(apiHubCheckpoint, { hub: SMALL_ID, endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), SMALL_GPT2, api);
  await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length === 4);
  const before = await tileNumbers(page, 1, 1);

  // An unknown repo: the API's message as text; the model and the drawing stay.
  await page.fill('#model-hub-id', 'org/missing');
  await page.click('#model-hub-load');
  await page.waitForSelector('#model-error:not([hidden])');
  await page.waitForSelector('body[data-model-loading="false"]');
  assert.match(await page.textContent('#model-error'),
    /^Could not load org\/missing: repository 'org\/missing' was not found on http:\/\/127\.0\.0\.1:\d+ \(or it is private\)$/);
  assert.equal(await page.$$eval('#model-error *', (children) => children.length), 0, 'text, not HTML');
  assert.equal(await page.textContent('#model-load-status'), 'Kept org/small.');
  assert.match(await page.textContent('#model-status'), /^org\/small from /, 'the loaded model, named as before');
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1');
  assert.deepEqual(await tileNumbers(page, 1, 1), before);

  // A load that stays in flight (a repo URL on a server that never answers), cancelled from the
  // keyboard: news, not an error (no alert), and the focus back on Load.
  await page.fill('#model-hub-id', `${stall.origin}/org/slow`);
  await page.click('#model-hub-load');
  await page.waitForSelector('#model-cancel:not([hidden])');
  assert.equal(await page.isDisabled('#model-hub-load'), true, 'no second load while one runs');
  await page.waitForFunction(() => /^Loading http:.*\/org\/slow…$/.test(document.querySelector('#model-load-status').textContent));
  assert.equal(await page.locator('#model-error').isHidden(), true, 'the last error cleared');
  const deadline = Date.now() + 10000;
  while (stall.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(stall.requests, ['/org/slow/resolve/main/config.json']);
  await page.focus('#model-cancel');
  await page.keyboard.press('Enter');
  await page.waitForSelector('body[data-model-loading="false"]');
  assert.equal(await page.textContent('#model-load-status'), 'Cancelled. Kept org/small.');
  assert.equal(await page.locator('#model-error').isHidden(), true, 'a cancel is not an error');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'model-hub-load', 'the focus back on Load');
  assert.match(await page.textContent('#model-status'), /^org\/small from /);
  assert.equal(await page.locator('#model-cancel').isHidden(), true);
  assert.equal(await page.isDisabled('#model-hub-load'), false);
  assert.deepEqual(await tileNumbers(page, 1, 1), before);
  const runs = Number(await page.getAttribute('body', 'data-model-run'));
  await page.fill('#model-text', 'the cat sat');
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun) > r, runs);
  assert.match(await page.textContent('#model-text-info'), /^10 tokens$/, 'the kept model still runs');
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-hub.png'), fullPage: true });

  // The other shipped model, one click away.
  await page.click('#model-trained button[data-name="induction"]');
  await page.waitForSelector('body[data-model-name="induction"]');
  assert.match(await page.textContent('#model-status'), /^induction \(Induction heads \(2 layers\)\), shipped with the page/);
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1', 'shipped models are not counted as checkpoint loads');

  assert.deepEqual(cspViolations, []);
  assert.deepEqual(realProblems(problems), []);
});

/** Loads `id` by the id box and waits for the load to end (loaded or refused). */
async function loadById(page, id) {
  const loads = Number(await page.getAttribute('body', 'data-model-loads') ?? 0);
  await page.fill('#model-hub-id', id);
  await page.click('#model-hub-load');
  await page.waitForFunction((l) => document.body.dataset.modelLoading === 'false' &&
    (Number(document.body.dataset.modelLoads ?? 0) > l || !document.querySelector('#model-error').hidden), loads, { timeout: 30000 });
}

test('the Llama family by id: a sharded Mistral and a Qwen2 drawn as the API computes, heads grouped by the K/V head they read, a refused config keeps the model', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-name="english"]');
  // A shipped model shares nothing: no groups, its facts from its config.
  assert.equal(await page.locator('#model-head-grid .head-group').count(), 0);
  assert.equal(await page.textContent('#model-facts'), '2 layers · 4 heads · head dim 16 · LayerNorm · GELU · learned positions');
  const text = await page.inputValue('#model-text');

  // A sharded Mistral: model.safetensors is 404, then the index, then each shard (302, Range).
  hub.reset();
  await loadById(page, 'org/mistral-sharded');
  assert.equal(await page.locator('#model-error').isHidden(), true, await page.textContent('#model-error'));
  assert.match(await page.textContent('#model-status'),
    new RegExp(`^org/mistral-sharded from ${hub.endpoint.replaceAll('.', '\\.')}: 3 layers × 4 heads · d_model 64 · 80 tokens · context 64 · wasm memory`));
  assert.equal(await page.textContent('#model-facts'),
    'Mistral · 3 layers · 4 query heads sharing 2 K/V heads · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 10000) · sliding window 5');
  assert.equal(hub.count('hub', '/org/mistral-sharded/resolve/main/model.safetensors.index.json', 'GET'), 1);
  for (const name of MISTRAL.names) assert.ok(hub.count('storage', `/org/mistral-sharded/main/${name}`) >= 1, name);
  const mistral = await page.evaluate(apiHubCheckpoint, { hub: 'org/mistral-sharded', endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), MISTRAL.sizes, mistral);
  assert.deepEqual((await page.evaluate(drawnGroups)).map((layer) => layer.map(({ canvases, ...g }) => g)), expectedGroups(MISTRAL.sizes));
  const groups = await page.evaluate(drawnGroups);
  assert.match(groups[2][1].canvases[0], /^Layer 3, head 3 \(reads K\/V head 2\): /);
  await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length === 12);
  assert.equal(await page.locator('#model-next li').count(), 10);

  // A Qwen2 in BF16, one K/V head for all 4 query heads (multi-query): one group per layer.
  await loadById(page, 'org/qwen2-bf16');
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '2');
  assert.equal(await page.textContent('#model-facts'),
    'Qwen2 · 2 layers · 4 query heads sharing 1 K/V head · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 1000000) · tied embeddings');
  const qwen2 = await page.evaluate(apiHubCheckpoint, { hub: 'org/qwen2-bf16', endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), QWEN2.sizes, qwen2);
  assert.deepEqual((await page.evaluate(drawnGroups)).map((layer) => layer.map(({ canvases, ...g }) => g)), expectedGroups(QWEN2.sizes));
  const before = await tileNumbers(page, 1, 3);

  // rope_scaling 'yarn': the core's message, by name; the Qwen2 and its drawing stay.
  await loadById(page, 'org/yarn');
  assert.match(await page.textContent('#model-error'), /^Could not load org\/yarn: config\.json's rope_scaling has type 'yarn'; supported: /);
  assert.equal(await page.$$eval('#model-error *', (children) => children.length), 0, 'text, not HTML');
  assert.equal(await page.textContent('#model-load-status'), 'Kept org/qwen2-bf16.');
  assert.match(await page.textContent('#model-facts'), /^Qwen2 · 2 layers/);
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '2');
  assert.deepEqual(await tileNumbers(page, 1, 3), before);
  assert.equal(await page.locator('#model-head-grid .head-group').count(), 2);

  // SmolLM2's layout (9 query heads, 3 K/V heads): three groups of three in each layer's row.
  await loadById(page, 'org/smol-shaped');
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '3');
  assert.equal(await page.textContent('#model-facts'),
    'Llama · 3 layers · 9 query heads sharing 3 K/V heads · head dim 8 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 100000) · tied embeddings');
  assert.deepEqual((await page.evaluate(drawnGroups)).map((layer) => layer.map(({ canvases, ...g }) => g)), expectedGroups(SMOL.sizes));
  const smol = await page.evaluate(apiHubCheckpoint, { hub: 'org/smol-shaped', endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), SMOL.sizes, smol);
  // At 1280 px the three groups sit side by side, their tiles in one row (the layer's 9 heads on one line).
  const rows = await page.$$eval('#model-head-grid .head-layer:first-child .model-tile', (tiles) => [...new Set(tiles.map((t) => Math.round(t.getBoundingClientRect().top)))]);
  assert.equal(rows.length, 1, `the first layer's tiles on ${rows.length} lines`);
  // Every tile holds its whole square heatmap, scaled to the tile (no scrollbar); one legend above the grid.
  assert.deepEqual(await page.evaluate(tilesCropped), { tiles: 27, cropped: [], legends: 1, tileLegends: 0 });
  // The memory line says why the heap is larger than what is in use.
  assert.match(await page.textContent('#model-status'), /· wasm memory [\d.]+ [kMG]B in use \(heap [\d.]+ [kMG]B: memory freed is kept for reuse\)$/);
  await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length === 27);
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-gqa-desktop.png'), fullPage: true });
  await page.locator('#model-head-grid').screenshot({ path: join(screenshotDir, 'yourmodel-gqa-grid-desktop.png') });
  // axe's WCAG A/AA rules on the view with its groups (evaluated by the driver: the strict CSP
  // refuses an inline script), on a short text (27 screen-reader tables of 52 × 52 take axe long).
  const runs = Number(await page.getAttribute('body', 'data-model-run'));
  await page.fill('#model-text', 'the cat sat');
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun) > r, runs);
  await page.evaluate(AXE);
  const axe = () => page.evaluate(async () => (await window.axe.run(document.querySelector('#model-view'),
    { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }))
    .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  assert.deepEqual(await axe(), []);

  // A 375 px phone: no sideways scroll, each group a row of its own, every tile inside the page.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.waitForTimeout(300);
  const phone = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth,
    outside: [...document.querySelectorAll('#model-head-grid .model-tile, #model-head-grid .head-group')]
      .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5).length }));
  assert.ok(phone.scroll <= phone.inner, `the page is ${phone.scroll} px wide in a ${phone.inner} px viewport`);
  assert.equal(phone.outside, 0);
  await page.waitForFunction(() => document.querySelector('#model-head-grid canvas').dataset.cell !== undefined);
  assert.deepEqual(await page.evaluate(tilesCropped), { tiles: 27, cropped: [], legends: 1, tileLegends: 0 }, 'at 375 px');
  // The head finder's names ("L3 · H7") stay on one line.
  const wrapped = await page.$$eval('#model-finder tbody button', (buttons) => buttons.filter((b) => b.getClientRects().length > 1 ||
    b.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(b).fontSize)).map((b) => b.textContent));
  assert.deepEqual(wrapped, []);
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-gqa-phone.png'), fullPage: true });
  await page.locator('#model-head-grid').screenshot({ path: join(screenshotDir, 'yourmodel-gqa-grid-phone.png') });
  assert.deepEqual(await axe(), []);
  assert.deepEqual(realProblems(problems), []);
});

/** The bytes the stand-in serves for a file's content (as scripts/lib/hub-stand-in.mjs's bytesOf). */
const servedBytes = (content) => (typeof content === 'string' ? Buffer.byteLength(content)
  : content instanceof Uint8Array ? content.byteLength : Buffer.byteLength(JSON.stringify(content)));

test('the Hub files this browser keeps: listed after a load, a second load reads no network, Remove forgets them', async () => {
  const { config, vocab, merges, weights } = smallGpt2Files(SMALL_GPT2);
  const total = [config, vocab, merges, weights].reduce((sum, content) => sum + servedBytes(content), 0);
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-name="english"]');
  const kept = () => page.$$eval('#model-cache-list li', (items) => items.map((li) => ({ repo: li.dataset.repo, bytes: Number(li.dataset.bytes),
    line: li.querySelector('.model-cache-line').textContent, remove: li.querySelector('button').textContent })));
  const refreshed = async (action) => {
    const count = Number(await page.getAttribute('body', 'data-model-cache') ?? 0);
    await action();
    await page.waitForFunction((c) => Number(document.body.dataset.modelCache) > c, count, { timeout: 30000 });
  };
  const loadSmall = async (loads) => {
    await refreshed(async () => {
      await page.fill('#model-hub-id', SMALL_ID);
      await page.click('#model-hub-load');
      await page.waitForSelector(`body[data-model-loads="${loads}"]`, { timeout: 30000 });
    });
    assert.equal(await page.getAttribute('body', 'data-model-name'), SMALL_ID);
  };

  // Nothing kept yet: one muted line, no list, no Remove all.
  await page.waitForFunction(() => document.body.dataset.modelCache !== undefined);
  assert.deepEqual(await kept(), []);
  assert.equal(await page.textContent('#model-cache-none'), 'No Hub files kept in this browser.');
  assert.equal(await page.locator('#model-cache-none').isVisible(), true);
  assert.equal(await page.locator('#model-cache-clear').isHidden(), true);

  // The first load fetches from the stand-in and leaves org/small listed with its files' total size.
  hub.reset();
  await loadSmall(1);
  assert.ok(hub.requests.length > 0, 'the first load asks the stand-in');
  assert.deepEqual(await kept(), [{ repo: SMALL_ID, bytes: total, line: `${SMALL_ID} @ main · ${formatBytes(total)} kept · 4 files`, remove: 'Remove' }]);
  assert.equal(await page.getAttribute('#model-cache-list li button', 'aria-label'), `Remove ${SMALL_ID}`);
  assert.equal(await page.locator('#model-cache-none').isHidden(), true);
  assert.equal(await page.locator('#model-cache-clear').isVisible(), true);
  await page.locator('#model-cache').screenshot({ path: join(screenshotDir, 'yourmodel-hub-cache.png') });

  // A second load reads the kept files: no request reaches the stand-in.
  hub.reset();
  await loadSmall(2);
  assert.deepEqual(hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`), []);
  assert.equal((await kept()).length, 1);

  // Remove: the list empties (the muted line back); a third load asks the stand-in again.
  await refreshed(() => page.click('#model-cache-list li button'));
  assert.deepEqual(await kept(), []);
  assert.equal(await page.locator('#model-cache-none').isVisible(), true);
  hub.reset();
  await loadSmall(3);
  assert.equal(hub.count('hub', '/org/small/resolve/main/config.json'), 1);
  assert.ok(hub.requests.some((r) => r.path.endsWith('/model.safetensors')), 'the weights are fetched again');
  assert.deepEqual((await kept()).map((e) => e.bytes), [total]);

  // Remove all.
  await refreshed(() => page.click('#model-cache-clear'));
  assert.deepEqual(await kept(), []);
  assert.equal(await page.locator('#model-cache-clear').isHidden(), true);
  assert.deepEqual(realProblems(problems), []);
});

test('a hubEndpoint that is not an http(s) URL is ignored, and said so', async () => {
  const { page } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent('javascript:alert(1)')}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.match(await page.textContent('body'), /Ignored in the link: hubEndpoint/);
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'english');
});

/** The URL hash once the page has written it (150 ms after a change) and `test` holds for it. */
async function hashWhen(page, test) {
  await page.waitForFunction(test, null, { timeout: 5000 });
  return page.evaluate(() => location.hash);
}

test("the Hub model's id in the link: loaded by id, the URL holds it; that URL in a fresh page loads the same model", async () => {
  const endpoint = encodeURIComponent(hub.endpoint);
  const first = await openPage(chrome.browser, server.url);
  let page = first.page;
  await page.goto(`${server.url}#tab=model&hubEndpoint=${endpoint}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-name="english"]');
  assert.doesNotMatch(await page.evaluate(() => location.hash), /[#&]hub=/, 'a shipped model: no hub in the link');
  await loadById(page, SMALL_ID);
  assert.equal(await page.getAttribute('body', 'data-model-name'), SMALL_ID);
  const hash = await hashWhen(page, () => /[#&]hub=org%2Fsmall(&|$)/.test(location.hash));
  assert.doesNotMatch(hash, /hubRevision=/, 'main is not written');
  const facts = await page.textContent('#model-facts');
  assert.match(facts, /^GPT-2 · 2 layers · 2 heads · head dim 8 · /);
  const status = await page.textContent('#model-status');
  assert.deepEqual(realProblems(first.problems), []);
  await page.context().close();

  // That URL in a fresh page: the same repo loads first (the shipped model never does), drawn as the API computes it.
  hub.reset();
  const fresh = await openPage(chrome.browser, server.url);
  page = fresh.page;
  const names = [];
  await page.exposeFunction('seenModel', (name) => names.push(name));
  await page.addInitScript(() => new MutationObserver(() => window.seenModel?.(document.body?.dataset.modelName ?? ''))
    .observe(document, { attributes: true, subtree: true, attributeFilter: ['data-model-name'] }));
  await page.goto(`${server.url}${hash}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('body', 'data-model-source'), 'hub');
  assert.equal(await page.getAttribute('body', 'data-model-name'), SMALL_ID);
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1');
  assert.equal(await page.textContent('#model-facts'), facts);
  assert.equal((await page.textContent('#model-status')).replace(/wasm memory .*/, ''), status.replace(/wasm memory .*/, ''));
  assert.equal(await page.inputValue('#model-hub-id'), SMALL_ID);
  assert.ok(names.includes(SMALL_ID) && !names.includes('english'), `models shown: ${names.join(', ')}`);
  assert.equal(hub.count('hub', '/org/small/resolve/main/config.json'), 1);
  const text = await page.inputValue('#model-text');
  const api = await page.evaluate(apiHubCheckpoint, { hub: SMALL_ID, endpoint: hub.endpoint, text });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), SMALL_GPT2, api);
  // A link opened later (hashchange) naming another repo: that repo loads, with the link's knocked-out head.
  await page.evaluate((next) => {
    location.hash = next;
  }, `#tab=model&hubEndpoint=${endpoint}&hub=org%2Fqwen2-bf16&knock=1.3`);
  await page.waitForSelector('body[data-model-name="org/qwen2-bf16"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-ablated="1"]', { timeout: 30000 });
  assert.match(await page.textContent('#model-facts'), /^Qwen2 · 2 layers/);
  assert.equal(await page.textContent('#model-ablated'), 'Knocked out (output zeroed): L2 H4');
  // A later link naming a repo the stand-in lacks: the API's message, the Qwen2 stays and the URL names it again; typing
  // does not ask for the missing repo again.
  await page.evaluate((next) => {
    location.hash = next;
  }, `#tab=model&hubEndpoint=${endpoint}&hub=org%2Fmissing&knock=1.3`);
  await page.waitForFunction(() => /^Could not load org\/missing: /.test(document.querySelector('#model-error').textContent), null, { timeout: 30000 });
  await page.waitForSelector('body[data-model-loading="false"]');
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'org/qwen2-bf16');
  await hashWhen(page, () => /[#&]hub=org%2Fqwen2-bf16(&|$)/.test(location.hash));
  const runs = Number(await page.getAttribute('body', 'data-model-run'));
  await page.fill('#model-text', 'the cat');
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun) > r, runs);
  assert.equal(hub.count('hub', '/org/missing/resolve/main/config.json'), 1);
  // Another model (a shipped one): the id leaves the link.
  await page.click('#model-trained button[data-name="english"]');
  await page.waitForSelector('body[data-model-name="english"]');
  await hashWhen(page, () => !/[#&]hub=/.test(location.hash));
  assert.deepEqual(realProblems(fresh.problems), []);
  await page.context().close();
});

test('a link with hub and hubRevision loads that revision; a bad id is ignored as text, a missing repo leaves the shipped model', async () => {
  const endpoint = encodeURIComponent(hub.endpoint);
  // A revision other than main: read from /resolve/v2/, kept in the link.
  hub.reset();
  let opened = await openPage(chrome.browser, server.url);
  let { page } = opened;
  await page.goto(`${server.url}#tab=model&hubEndpoint=${endpoint}&hub=org%2Fqwen2-bf16&hubRevision=v2`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'org/qwen2-bf16');
  assert.match(await page.textContent('#model-status'), new RegExp(`^org/qwen2-bf16 @ v2 from ${hub.endpoint.replaceAll('.', '\\.')}: 2 layers × 4 heads`));
  assert.match(await page.textContent('#model-facts'), /^Qwen2 · 2 layers · 4 query heads sharing 1 K\/V head/);
  assert.equal(hub.count('hub', '/org/qwen2-bf16/resolve/v2/config.json'), 1);
  assert.equal(hub.count('hub', '/org/qwen2-bf16/resolve/main/config.json'), 0);
  const hash = await hashWhen(page, () => location.hash.includes('hubRevision=v2'));
  assert.match(hash, /[#&]hub=org%2Fqwen2-bf16(&|$)/);
  assert.deepEqual(realProblems(opened.problems), []);
  await page.context().close();

  // An id that is not org/name (markup, a path, a URL): ignored, said so as text; the shipped model loads.
  for (const bad of ['<img src=x onerror="window.__pwned=1">/x', 'org/small/../other', 'https://example.com/org/small', 'org--x/y']) {
    opened = await openPage(chrome.browser, server.url);
    ({ page } = opened);
    await page.goto(`${server.url}#tab=model&hubEndpoint=${endpoint}&hub=${encodeURIComponent(bad)}`);
    await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
    assert.equal(await page.getAttribute('body', 'data-model-name'), 'english', bad);
    assert.equal(await page.textContent('#notice'),
      "Ignored in the link: hub (not a Hugging Face id org/name: letters, digits, '.', '_', '-').", bad);
    assert.equal(await page.$$eval('#notice *', (children) => children.length), 0, 'text, not HTML');
    assert.equal(await page.evaluate(() => window.__pwned ?? null), null);
    assert.equal(await page.locator('#model-error').isHidden(), true);
    await page.context().close();
  }

  // A well-formed id the stand-in does not have: the API's message (text), then the shipped model, the message kept.
  opened = await openPage(chrome.browser, server.url);
  ({ page } = opened);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${endpoint}&hub=org%2Fmissing`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('body', 'data-model-name'), 'english');
  assert.match(await page.textContent('#model-error'),
    /^Could not load org\/missing: repository 'org\/missing' was not found on http:\/\/127\.0\.0\.1:\d+ \(or it is private\)$/);
  assert.equal(await page.inputValue('#model-hub-id'), 'org/missing', 'the id box holds it, to try again');
  await hashWhen(page, () => !/[#&]hub=/.test(location.hash));
  assert.deepEqual(realProblems(opened.problems), []);
  await page.context().close();
});

test('a pytorch_model.bin repo by id in the page: the zip read by ranges through the redirect, equal to the same model from model.safetensors', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  hub.reset();
  const result = await page.evaluate(async ({ endpoint }) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const lens = await loadAttentionLens();
    const ids = Int32Array.from({ length: 8 }, (_, i) => (i * 7 + 3) % 96);
    const run = async (hub) => {
      const m = await lens.loadCheckpoint({ hub, endpoint, cache: false });
      const { logits, attention } = m.forward(ids);
      const out = { family: m.family, logits: Array.from(logits), attention: attention.map((a) => Array.from(a)) };
      m.dispose();
      return out;
    };
    const missing = await lens.loadCheckpoint({ hub: 'org/llama-bin', endpoint, revision: 'no-such' }).then(() => null, (e) => e.message);
    return { bin: await run('org/llama-bin'), safetensors: await run('org/llama-safetensors'), missing };
  }, { endpoint: hub.endpoint });
  assert.equal(result.bin.family, 'llama');
  assert.deepEqual(result.bin.logits, result.safetensors.logits, 'logits bit for bit');
  assert.deepEqual(result.bin.attention, result.safetensors.attention, 'attention bit for bit');
  assert.match(result.missing, /revision 'no-such' was not found in 'org\/llama-bin'/);
  const bin = hub.requests.filter((r) => r.server === 'storage' && r.path.endsWith('/org/llama-bin/main/pytorch_model.bin'));
  assert.ok(bin.length >= 2 && bin.every((r) => r.status === 206), JSON.stringify(bin));
  assert.deepEqual(realProblems(problems), []);
  await page.close();
});
