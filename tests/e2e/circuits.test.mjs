// The Circuits view in Chromium, on the shipped english model the page loads first: the induction
// preset's drawn numbers (the screen-reader tables, and the exported JSON bit for bit) equal the
// public API's in node — direct attribution, the logit lens (top token and its probability per
// cell), rollout at two layers, patching over heads (or, while the module has no m.patch, the
// message saying so); a head clicked shows its pattern; a checkpoint with GPT-2's vocabulary
// (random weights, loaded as files in Your model) takes the IOI preset's answers " Mary" / " John"
// as one token each and draws the API's attribution; the URL round-trips the prompts, answers,
// analysis and rollout layer (the view opened without prompts on the character model starts from the
// induction preset); a hostile link is ignored with a message and runs nothing; prompts of
// different lengths say so and switch patching off while the lens still draws; at 375 px nothing
// scrolls sideways; axe finds no violation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserFixture, openPage, screenshotDir, sticksOut } from './browser.mjs';
import { apiShipped, assertNear, attributionRows, cellNumber, circuitsState, circuitsTable, loadGpt2Files } from './circuits-fixture.mjs';

const live = browserFixture();
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

/** Opens the page at `hash` and waits for the Circuits view's first read (the english model loaded), or Your model's first load. */
async function openCircuits(hash, viewport) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
  await page.goto(`${live.server.url}${hash}`);
  await page.waitForFunction(() => Number(document.body.dataset.circuitsReads ?? 0) > 0 ||
    (!location.hash.includes('tab=circuits') && document.body.dataset.modelReady === 'true'), null, { timeout: 40000 });
  return { page, problems };
}

/** Does `act`, then waits for the analysis `kind` drawn after it (or its refusal): the view's state. */
async function drawnAfter(page, act, kind) {
  const before = await page.evaluate(circuitsState);
  await act();
  await page.waitForFunction(({ drawn, kind: k }) => (Number(document.body.dataset.circuitsDrawn ?? 0) > drawn && document.body.dataset.circuitsShown === k) ||
    (document.body.dataset.circuitsError === k && !document.getElementById('circuits-error').hidden), { drawn: before.drawn, kind }, { timeout: 40000 });
  return page.evaluate(circuitsState);
}

const choose = (page, kind) => () => page.check(`input[name="circuits-show"][value="${kind}"]`);

test('Circuits: the induction preset draws the API\'s attribution, logit lens, rollout and patching; a head opens its pattern', async () => {
  const { page, problems } = await openCircuits('#tab=circuits&circuitShow=lens');
  let state = await drawnAfter(page, () => page.click('#circuits-preset-induction'), 'heads');
  assert.equal(state.show, 'heads', 'the preset opens on patching the heads');
  assert.equal(state.clean.length, 15);
  assert.equal(state.clean, state.clean.slice(0, 8) + state.clean.slice(0, 7), '8 random tokens, then all but the last again');
  assert.equal(state.corrupted.slice(0, 8), state.clean.slice(0, 8), 'the same first half');
  assert.match(state.lengths, /^15 tokens each · 7 positions differ/);
  const api = await apiShipped('english', { clean: state.clean, corrupted: state.corrupted, answers: [state.a, state.b] });
  assert.equal(api.n, 15);

  // Patching over heads: the API's effect (or, without m.patch in this build, the view says so).
  if (api.patch) {
    assert.equal(state.error, '', 'the page patches as the API does');
    const drawn = await page.waitForFunction(circuitsTable);
    const table = await drawn.jsonValue();
    table.cells.forEach((row, l) => row.forEach((text, h) => assertNear(Number(text), api.patch.heads.effect[l * api.heads + h], `heads L${l + 1} H${h + 1}`)));
    // The residual stream (layers × positions, labelled by the clean tokens) and whole sublayers.
    await drawnAfter(page, choose(page, 'residual'), 'residual');
    const residual = await (await page.waitForFunction(circuitsTable)).jsonValue();
    assert.equal(residual.colLabels.length, api.n);
    residual.cells.forEach((row, l) => row.forEach((text, p) => assertNear(Number(text), api.patch.residual.effect[l * api.n + p], `residual L${l + 1} position ${p}`)));
    await drawnAfter(page, choose(page, 'layers'), 'layers');
    const layers = await (await page.waitForFunction(circuitsTable)).jsonValue();
    assert.deepEqual(layers.rowLabels, ['attention', 'MLP']);
    layers.cells.forEach((row, r) => row.forEach((text, l) => assertNear(Number(text), api.patch.layers.effect[r === 0 ? 'attention' : 'mlp'][l],
      `${layers.rowLabels[r]} L${l + 1}`)));
    const metric = await page.evaluate(() => ({ ...document.getElementById('circuits-metric').dataset }));
    assert.deepEqual([Number(metric.clean), Number(metric.corrupted)], [api.patch.layers.clean, api.patch.layers.corrupted]);
  } else {
    assert.match(state.error, /activation patching \(m\.patch\) is not in this build/);
  }

  // Direct attribution: the table to its rounding, the exported JSON exactly.
  state = await drawnAfter(page, choose(page, 'attribution'), 'attribution');
  let table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  assert.deepEqual(table.rowLabels, ['L1', 'L2']);
  assert.deepEqual(table.colLabels, ['H1', 'H2', 'H3', 'H4', 'bias', 'MLP']);
  const want = attributionRows(api);
  table.cells.forEach((row, l) => row.forEach((text, c) => assertNear(Number(text), want[l][c], `attribution ${table.rowLabels[l]} ${table.colLabels[c]}`)));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export="circuits-attribution-json"]')]);
  const json = JSON.parse(readFileSync(await download.path(), 'utf8'));
  assert.deepEqual(json.data, want, 'the exported JSON holds the API\'s float32 values');
  assert.deepEqual([json.total, json.embed, json.constant], [api.attribution.total, api.attribution.embed, api.attribution.constant]);
  assert.deepEqual(json.answers.map((a) => a.id), api.answers);
  const bars = await page.$$eval('#circuits-bars li', (items) => items.map((li) => Number(li.dataset.value)));
  const parts = [api.attribution.embed, api.attribution.constant, ...want.flat()].sort((x, y) => Math.abs(y) - Math.abs(x));
  assert.deepEqual(bars, parts.slice(0, bars.length), 'the bars: the largest parts, largest first');

  // A head's cell opens its attention pattern on the clean prompt (the API's forward).
  await page.click('#circuits-map canvas', { position: await page.evaluate(() => {
    const c = document.querySelector('#circuits-map canvas').dataset;
    return { x: Number(c.left) + 3.5 * Number(c.cell), y: Number(c.top) + 1.5 * Number(c.cell) }; // L2 H4
  }) });
  await page.waitForFunction(() => document.body.dataset.circuitsHead === '1.3');
  const head = await (await page.waitForFunction(() => {
    const f = document.querySelector('#circuits-head-map figure');
    return f?.dataset.table === 'ready' && [...f.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)));
  })).jsonValue();
  const pattern = await page.evaluate(async (ids) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const m = await (await loadAttentionLens()).trainedModel('english');
    const a = Array.from(m.forward(Int32Array.from(ids), { n: ids.length }).attention[1]);
    m.dispose();
    return a;
  }, api.ids);
  head.forEach((row, q) => row.forEach((v, k) => assertNear(v, pattern[(3 * api.n + q) * api.n + k], `head L2 H4 (${q}, ${k})`)));

  // The logit lens: each cell's top token and its probability.
  state = await drawnAfter(page, choose(page, 'lens'), 'lens');
  table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  assert.deepEqual(table.rowLabels, ['embed', 'after L1', 'after L2']);
  const { lens } = api;
  assert.equal(lens.rows, 3);
  table.cells.forEach((row, r) => row.forEach((text, p) => {
    const i = (r * api.n + p) * lens.topK;
    assertNear(cellNumber(text), lens.probs[i], `lens ${table.rowLabels[r]} position ${p}`);
    const token = api.vocabulary[lens.ids[i]];
    assert.equal(text.split(' · ')[0], token === ' ' ? '␣' : token, `lens ${table.rowLabels[r]} position ${p}: the top token`);
  }));
  // Focus a cell: its top 5 and answer a's rank, as the API says.
  await page.focus('#circuits-map canvas');
  await page.keyboard.press('ArrowDown');
  const detail = await page.textContent('#circuits-detail');
  const rank = lens.token.ranks[1 * api.n + 0];
  assert.match(detail, new RegExp(`^after L1, position 1 .*answer a “${state.a}”: rank ${rank + 1}, `), detail);

  // Rollout after layer 1, then after layer 2 (the slider: drawn again, nothing recomputed).
  await drawnAfter(page, choose(page, 'rollout'), 'rollout');
  for (const layer of [0, 1]) {
    if (layer === 1) {
      await page.evaluate(() => {
        const s = document.getElementById('circuits-rollout-layer');
        s.value = '1';
        s.dispatchEvent(new Event('input', { bubbles: true }));
      });
      await page.waitForFunction(() => /after layer 2/.test(document.querySelector('#circuits-map figcaption')?.textContent ?? ''));
    }
    table = await (await page.waitForFunction(circuitsTable)).jsonValue();
    table.cells.forEach((row, i) => row.forEach((text, j) => assertNear(Number(text), api.rollout[(layer * api.n + i) * api.n + j],
      `rollout after layer ${layer + 1} (${i}, ${j})`)));
  }
  await page.screenshot({ path: join(screenshotDir, 'circuits-rollout.png'), fullPage: true });
  // The head's "Open in the walkthrough": the shipped model's layer and head on the clean prompt.
  await page.click('#circuits-head-walkthrough');
  await page.waitForFunction(() => !document.getElementById('walkthrough-view').hidden && /[#&]head=3(&|$)/.test(location.hash));
  const hash = new URLSearchParams(await page.evaluate(() => location.hash.slice(1)));
  assert.deepEqual([hash.get('tab'), hash.get('layer'), hash.get('head'), hash.get('text')], [null, '1', '3', state.clean]);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('Circuits: with GPT-2\'s vocabulary the IOI preset\'s answers are one token each and the drawn attribution is the API\'s', async () => {
  const { page, problems } = await openCircuits('#tab=model');
  const { weights, config, vocab, merges } = await loadGpt2Files(page, { layers: 2, heads: 2, d: 8, vocab: 50257, context: 32 });
  await page.click('#tab-circuits');
  await page.waitForFunction(() => document.getElementById('circuits-model').textContent.startsWith('model.safetensors: 2 layers × 2 heads'));
  await page.waitForFunction(() => !document.getElementById('circuits-preset-ioi').disabled);
  let state = await drawnAfter(page, () => page.click('#circuits-preset-ioi'), 'heads');
  assert.equal(state.clean, 'When Mary and John went to the store, John gave a drink to');
  assert.match(state.aInfo, /^“ Mary” · token id 5335 · typed$/);
  assert.match(state.bInfo, /^“ John” · token id 1757 · typed$/);
  assert.match(state.lengths, /^14 tokens each · 1 position differs/);
  state = await drawnAfter(page, choose(page, 'attribution'), 'attribution');
  const api = await page.evaluate(async ({ weights: w, config: c, vocab: v, merges: mg, text }) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const m = await (await loadAttentionLens()).loadCheckpoint({ weights: new Blob([Uint8Array.from(w)]), config: c, tokenizer: { vocab: v, merges: mg } });
    const d = m.attribute(m.tokenize(text).ids, { answers: [5335, 1757] });
    m.dispose();
    return { heads: Array.from(d.heads), bias: Array.from(d.attentionBias), mlp: Array.from(d.mlp) };
  }, { weights: Array.from(weights), config, vocab, merges, text: state.clean });
  const table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  table.cells.forEach((row, l) => row.forEach((text, c) => assertNear(Number(text), c < 2 ? api.heads[l * 2 + c] : c === 2 ? api.bias[l] : api.mlp[l],
    `IOI attribution L${l + 1} ${table.colLabels[c]}`)));
  await page.screenshot({ path: join(screenshotDir, 'circuits-ioi.png'), fullPage: true });
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('Circuits opened on the character model starts from the induction preset, not from IOI prompts it cannot answer', async () => {
  const { page, problems } = await openCircuits('#tab=circuits');
  await page.waitForFunction(() => document.body.dataset.circuitsShown === 'heads' ||
    !document.getElementById('circuits-error').hidden, null, { timeout: 40000 });
  const state = await page.evaluate(circuitsState);
  assert.equal(state.error, '', 'no refusal: the answers are two different tokens');
  assert.equal(state.show, 'heads');
  assert.equal(state.clean, state.clean.slice(0, 8) + state.clean.slice(0, 7), 'the induction preset\'s prompt');
  assert.notEqual(state.a, state.b);
  assert.match(await page.textContent('#circuits-preset-note'), /^Induction: seeded random tokens/);
  await page.waitForFunction(() => location.hash.includes('circuitClean='), null, { timeout: 10000 }); // the preset's prompts in the link
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('Circuits: the prompts, answers, analysis and rollout layer round-trip through the URL', async () => {
  const hash = '#tab=circuits&circuitClean=the+cat+sat+on+the+mat&circuitCorrupt=the+dog+sat+on+the+mat&circuitA=a&circuitB=o' +
    '&circuitShow=rollout&circuitLayer=1';
  const { page, problems } = await openCircuits(hash);
  await page.waitForFunction(() => document.body.dataset.circuitsShown === 'rollout');
  let state = await page.evaluate(circuitsState);
  assert.deepEqual([state.clean, state.corrupted, state.a, state.b, state.show], ['the cat sat on the mat', 'the dog sat on the mat', 'a', 'o', 'rollout']);
  assert.match(await page.textContent('#circuits-map figcaption'), /after layer 2/);
  assert.equal(await page.inputValue('#circuits-rollout-layer'), '1');
  // Changed here: the URL follows.
  await page.fill('#circuits-answer-b', 'e');
  await page.check('input[name="circuits-show"][value="lens"]');
  await page.fill('#circuits-clean', 'the cat sat on a mat');
  await page.waitForFunction(() => location.hash.includes('circuitB=e') && location.hash.includes('circuitShow=lens') &&
    location.hash.includes('circuitClean=the+cat+sat+on+a+mat'));
  const url = page.url();
  // The same link opened afresh shows the same inputs.
  const again = await openCircuits(new URL(url).hash);
  await again.page.waitForFunction(() => document.body.dataset.circuitsShown === 'lens');
  state = await again.page.evaluate(circuitsState);
  assert.deepEqual([state.clean, state.corrupted, state.a, state.b, state.show], ['the cat sat on a mat', 'the dog sat on the mat', 'a', 'e', 'lens']);
  assert.deepEqual([...problems(), ...again.problems()], []);
  await page.context().close();
  await again.page.context().close();
});

test('Circuits: a hostile link is ignored with a readable message and nothing in it runs or becomes HTML', async () => {
  const evil = '<img src=x onerror="window.__pwned=1">';
  const hash = `#tab=circuits&circuitShow=${encodeURIComponent(evil)}&circuitClean=${encodeURIComponent(evil)}&circuitA=${encodeURIComponent('<b>x</b>')}` +
    `&circuitLayer=${encodeURIComponent('1;alert(1)')}`;
  const { page } = await openCircuits(hash);
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  await page.waitForFunction(() => Number(document.body.dataset.circuitsDrawn ?? 0) > 0 || document.body.dataset.circuitsError);
  const seen = await page.evaluate(() => ({ pwned: window.__pwned ?? null, images: document.querySelectorAll('img').length,
    bold: document.querySelectorAll('#circuits-view b').length, notice: document.getElementById('notice').textContent,
    clean: document.getElementById('circuits-clean').value, a: document.getElementById('circuits-answer-a').value,
    aInfo: document.getElementById('circuits-answer-a-info').textContent, show: document.querySelector('input[name="circuits-show"]:checked').value }));
  assert.equal(seen.pwned, null);
  assert.equal(seen.images, 0);
  assert.equal(seen.bold, 0);
  assert.match(seen.notice, /Ignored in the link: circuitShow, circuitLayer\./);
  assert.equal(seen.clean, evil, 'the prompt is text');
  assert.equal(seen.a, '<b>x</b>');
  assert.match(seen.aInfo, /^“<b>x<\/b>” is 8 tokens for this model/);
  assert.equal(seen.show, 'heads', 'the default analysis');
  assert.deepEqual(dialogs, []);
  await page.context().close();
});

test('Circuits: prompts of different lengths say so, patching is off with the reason, the logit lens still draws', async () => {
  const { page, problems } = await openCircuits('#tab=circuits&circuitClean=the+cat+sat&circuitCorrupt=the+cat&circuitShow=heads');
  const state = await page.evaluate(circuitsState);
  assert.match(state.lengths, /^The prompts differ in length: the clean one is 11 tokens, the corrupted one 7\. /);
  await page.waitForFunction(() => !document.getElementById('circuits-error').hidden);
  assert.match(await page.textContent('#circuits-error'), /^Patching needs prompts of the same length \(clean 11 tokens, corrupted 7\)\.$/);
  const lens = await drawnAfter(page, choose(page, 'lens'), 'lens');
  assert.equal(lens.error, '');
  const table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  assert.equal(table.colLabels.length, 11);
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('Circuits at 375 px: nothing scrolls sideways, with each analysis drawn; axe finds no violation', async () => {
  const { page, problems } = await openCircuits('#tab=circuits&circuitShow=attribution', { width: 375, height: 800 });
  await drawnAfter(page, () => page.click('#circuits-preset-induction'), 'heads');
  for (const kind of ['attribution', 'lens', 'rollout']) {
    await drawnAfter(page, choose(page, kind), kind);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `${kind}: the page scrolls sideways by ${wide} px`);
    assert.deepEqual(await page.evaluate(sticksOut, '#circuits-view'), [], kind);
    if (kind === 'attribution') await page.screenshot({ path: join(screenshotDir, 'circuits-375.png'), fullPage: true });
  }
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => (await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }))
    .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  assert.deepEqual(violations, []);
  assert.deepEqual(problems(), []);
  await page.context().close();
});
