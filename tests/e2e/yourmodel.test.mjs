// The page's "Your model" view in Chromium: pick a small GPT-2 checkpoint (model.safetensors +
// config.json + vocab.json + merges.txt, made here: the checkpoints of tests/data/gpt2 have
// vocabularies below the 256 byte tokens a byte-level BPE needs), see the progress end, the size
// and memory, every head drawn as the JS API computes it in the same browser, the top 10 next
// tokens as the softmax of the API's logits, greedy Generate writing the API's generate tokens (and
// with a head knocked out, the API's ablated generate), the head finder's table; a config.json that
// disagrees shows the API's message as text and the loaded model stays; a head opens the
// walkthrough tab. A sharded Mistral dropped as files (its shards in any order with
// model.safetensors.index.json, config.json and tokenizer.json; or the shards alone, ordered by
// name): drawn as the API computes, its heads grouped by the K/V head they read; a missing shard or
// a refused config is said, and the model stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserFixture, cutSelects, tableNumbers, openPage, screenshotDir } from './browser.mjs';
import { gpt2SizedCheckpoint, gpt2Tokenizer, smallGpt2Files } from '../js/checkpoint-support.mjs';
import { apiFilesCheckpoint, assertHeadsDrawn, drawnGroups, expectedGroups, loadFeedbackPlace, recordLoadLines, shardedMistral,
  tilesCropped } from './hub-fixture.mjs';

const live = browserFixture();
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

// 2 layers × 2 heads, d_model 16, context 64; vocabulary: GPT-2's 256 byte tokens and its first
// 4 merges ('Ġt', 'Ġa', 'he', 'in').
const SIZES = { layers: 2, heads: 2, d: 16, vocab: 260, context: 64 };
const { weights: WEIGHTS, config: CONFIG, vocab: VOCAB, merges: MERGES } = smallGpt2Files(SIZES);

const file = (name, content) => ({ name, mimeType: name.endsWith('.safetensors') ? 'application/octet-stream' : 'application/json',
  buffer: Buffer.from(typeof content === 'string' ? content : content instanceof Uint8Array ? content : JSON.stringify(content)) });
const FILES = [file('model.safetensors', WEIGHTS), file('config.json', CONFIG), file('vocab.json', VOCAB), file('merges.txt', MERGES)];

/** The numbers drawn in a head's heatmap (its screen-reader table), row by row. */
const tileNumbers = (page, layer, head) =>
  tableNumbers(page, `#model-head-grid .model-tile[data-layer="${layer}"][data-head="${head}"] figure`);

test('Your model: load a checkpoint, every head and the next tokens match the API, a bad config keeps the model', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  assert.equal(await page.locator('#model-view').isVisible(), true);
  assert.equal(await page.locator('#walkthrough-view').isVisible(), false);

  await page.evaluate(recordLoadLines);
  await page.setInputFiles('#model-files', FILES);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  await page.waitForSelector('#model-finder tbody tr');
  assert.equal(await page.locator('#model-progress').isHidden(), true, 'the progress bar ends');
  // Its phases, each with its line beside the files: the weights read into the core, then the first run packs them.
  const lines = await page.evaluate(() => window.loadLines);
  assert.ok(lines.includes('Preparing weights: reading the weights into the WebAssembly core…'), lines.join(' | '));
  assert.ok(lines.includes('Preparing weights: packing the weights for its first run…'), lines.join(' | '));
  assert.equal(lines.at(-1), '', 'the line cleared once loaded');
  assert.equal(await page.inputValue('#model-text'), 'When Mary and John went to the store, John gave a drink to');
  const status = await page.textContent('#model-status');
  assert.match(status, /model\.safetensors: .* 2 layers × 2 heads · d_model 16 · 260 tokens · context 64 · wasm memory/);
  assert.equal(Number(await page.getAttribute('#model-status', 'data-file-bytes')), WEIGHTS.length);

  // The JS API in the same browser, on the same files.
  const api = await page.evaluate(async ({ weights, config, vocab, merges, text }) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const lens = await loadAttentionLens();
    const gpt = await lens.loadCheckpoint({ weights: new Blob([Uint8Array.from(weights)]), config, tokenizer: { vocab, merges } });
    const { tokens, ids } = gpt.tokenize(text);
    const n = ids.length;
    const { logits, attention } = gpt.forward(ids, { n });
    const row = Array.from(logits.subarray((n - 1) * config.vocab_size));
    const out = { tokens, n, row, attention: attention.map((a) => Array.from(a)) };
    // Greedy generation and the same with layer 2 head 1 knocked out (the page's Generate, below).
    out.generated = Array.from(gpt.generate(ids, { maxTokens: 10, temperature: 0 }).ids);
    gpt.ablate([{ layer: 1, head: 0 }]);
    out.ablated = Array.from(gpt.generate(ids, { maxTokens: 10, temperature: 0 }).ids);
    gpt.dispose();
    return out;
  }, { weights: Array.from(WEIGHTS), config: CONFIG, vocab: VOCAB, merges: MERGES, text: await page.inputValue('#model-text') });

  assert.equal(await page.textContent('#model-text-info'), `${api.n} tokens`);
  // Each tile holds its whole square heatmap (no scrollbar), one colour legend above the grid.
  const grid = await page.evaluate(tilesCropped);
  assert.deepEqual(grid, { tiles: 4, cropped: [], legends: 1, tileLegends: 0 });
  for (let layer = 0; layer < 2; ++layer) {
    for (let head = 0; head < 2; ++head) {
      const drawn = await tileNumbers(page, layer, head);
      assert.equal(drawn.length, api.n);
      let worst = 0;
      for (let q = 0; q < api.n; ++q) {
        for (let k = 0; k < api.n; ++k) {
          const want = api.attention[layer][(head * api.n + q) * api.n + k];
          // The table shows 4 decimals (4 significant digits below 1e-3).
          worst = Math.max(worst, Math.abs(drawn[q][k] - want) / (5.1e-5 + 1e-3 * Math.abs(want)));
        }
      }
      assert.ok(worst <= 1, `layer ${layer} head ${head}: a drawn number is ${worst}× off the table's rounding`);
    }
  }

  // The top 10: the highest logits in order, the softmax's probabilities (float64 here).
  const max = Math.max(...api.row);
  const sum = api.row.reduce((s, x) => s + Math.exp(x - max), 0);
  const order = api.row.map((_, i) => i).sort((a, b) => api.row[b] - api.row[a] || a - b).slice(0, 10);
  const listed = await page.$$eval('#model-next li', (items) => items.map((li) => ({ id: Number(li.dataset.id),
    probability: Number(li.dataset.probability), text: li.querySelector('.model-next-token').textContent })));
  assert.deepEqual(listed.map((t) => t.id), order);
  for (const t of listed) assert.ok(Math.abs(t.probability - Math.exp(api.row[t.id] - max) / sum) < 1e-6);
  assert.ok(listed.every((t) => t.text.length > 0));

  // Generate (greedy, 10 tokens) writes what the API's generate gives, and with a head knocked out.
  const generate = async () => {
    const mark = Number(await page.evaluate(() => document.body.dataset.modelGenerated ?? 0));
    await page.fill('#model-gen-tokens', '10');
    await page.fill('#model-gen-temperature', '0');
    await page.click('#model-gen-start');
    await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated ?? 0) > b, mark, { timeout: 30000 });
    return page.$$eval('#model-gen-text .model-gen-chip', (chips) => chips.map((c) => Number(c.dataset.id)));
  };
  assert.deepEqual(await generate(), api.generated);
  await page.click('#model-head-grid .model-knock[data-layer="1"][data-head="0"]');
  await page.waitForSelector('body[data-model-ablated="1"]');
  assert.deepEqual(await generate(), api.ablated);
  await page.click('#model-restore');
  await page.waitForSelector('body[data-model-ablated="0"]');

  // The head finder: every head once, sorted by induction; a row highlights its head.
  const rows = await page.$$eval('#model-finder tbody tr', (trs) => trs.map((tr) => ({
    layer: Number(tr.dataset.layer), head: Number(tr.dataset.head), induction: Number(tr.cells[1].textContent) })));
  assert.equal(rows.length, 4);
  assert.equal(new Set(rows.map((r) => `${r.layer}.${r.head}`)).size, 4);
  for (let i = 1; i < rows.length; ++i) assert.ok(rows[i].induction <= rows[i - 1].induction);
  await page.click(`#model-finder tbody tr:nth-child(2) button`);
  const picked = rows[1];
  assert.equal(await page.getAttribute(`#model-head-grid .model-tile[data-layer="${picked.layer}"][data-head="${picked.head}"]`, 'class'),
    'train-tile model-tile highlighted');
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-loaded.png'), fullPage: true });
  // axe's WCAG A/AA rules on the loaded view (as tests/e2e/a11y.test.mjs does for the others).
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => (await window.axe.run(document.querySelector('#model-view'),
    { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }))
    .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  assert.deepEqual(violations, []);

  // Typing re-runs the model.
  const runs = Number(await page.getAttribute('body', 'data-model-run'));
  await page.fill('#model-text', 'the cat sat');
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun) > r, runs);
  // 'the' → t·he, ' cat' → Ġ·c·a·t, ' sat' → Ġ·s·a·t (only 4 merges): 10 tokens.
  assert.equal(await page.$$eval('#model-tokens .chip', (c) => c.length), 10);
  assert.match(await page.textContent('#model-text-info'), /^10 tokens$/);
  const before = await tileNumbers(page, 1, 1);

  // A config.json that disagrees: the API's message, as text; the model and the drawing stay.
  await page.setInputFiles('#model-files', [file('model.safetensors', WEIGHTS), file('config.json', { ...CONFIG, n_embd: 32 })]);
  await page.waitForSelector('#model-error:not([hidden])');
  const error = await page.textContent('#model-error');
  assert.match(error, /Could not load the checkpoint: the checkpoint's tensor 'wte.weight' has shape \[\d+, 16\], config\.json \(n_embd 32/);
  assert.equal(await page.$$eval('#model-error *', (children) => children.length), 0, 'text, not HTML');
  assert.equal(await page.textContent('#model-load-status'), 'Kept model.safetensors.');
  assert.match(await page.textContent('#model-status'), /^model\.safetensors: /, 'the loaded model, named as before');
  // The error beside the files it is about, within a screen.
  const place = await page.evaluate(loadFeedbackPlace);
  assert.ok(place.errorBottom - place.filesTop <= place.height, `the error ends ${place.errorBottom - place.filesTop} px below the files`);
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1');
  assert.deepEqual(await tileNumbers(page, 1, 1), before);
  await page.fill('#model-text', 'the cat sat on');
  await page.waitForFunction((r) => Number(document.body.dataset.modelRun) > r + 1, runs);
  assert.match(await page.textContent('#model-text-info'), /^13 tokens$/, 'the kept model still runs');

  // Dropped files go the same way: a file that is not a checkpoint's, or weights without config.json.
  const dropped = (names) => page.evaluate((list) => {
    const data = new DataTransfer();
    for (const name of list) data.items.add(new File(['{}'], name));
    document.querySelector('#model-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, names);
  await dropped(['model.bin', 'config.json']);
  await page.waitForFunction(() => document.querySelector('#model-error').textContent.startsWith('model.bin'));
  assert.equal(await page.textContent('#model-error'), 'model.bin is not a checkpoint file: drop model.safetensors (or its shards with ' +
    'model.safetensors.index.json), config.json and optionally tokenizer.json or vocab.json + merges.txt — or one .gguf file');
  await dropped(['model.safetensors']);
  await page.waitForFunction(() => document.querySelector('#model-error').textContent.startsWith('Found'));
  assert.equal(await page.textContent('#model-error'), 'Found model.safetensors: a checkpoint needs its weights (model.safetensors, ' +
    'or every shard) and config.json (dropped together), or is one .gguf file');
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1');

  // A head's larger view from the keyboard (Enter on its tile): the whole heatmap with its tokens,
  // the API's numbers; Escape gives the focus back to the tile. Then the walkthrough from it.
  await page.focus('#model-head-grid .model-tile[data-layer="1"][data-head="0"] canvas');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#model-head-dialog[open]');
  assert.equal(await page.textContent('#model-head-title'), 'Layer 2, head 1');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'model-head-walkthrough');
  const large = await tableNumbers(page, '#model-head-map figure');
  assert.deepEqual(large, await tileNumbers(page, 1, 0), 'the same numbers as its tile');
  assert.equal(large.length, 13);
  assert.deepEqual(await page.$$eval('#model-head-map tbody th', (ths) => ths.map((th) => th.textContent)),
    await page.$$eval('#model-tokens .chip', (chips) => chips.map((c) => c.textContent)), 'its rows named by the tokens');
  // axe's WCAG A/AA rules on the open dialog.
  const dialogViolations = await page.evaluate(async () => (await window.axe.run(document.querySelector('#model-head-dialog'),
    { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }))
    .violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  assert.deepEqual(dialogViolations, []);
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-head-view.png') });
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('#model-head-dialog').open);
  assert.equal(await page.evaluate(() => document.activeElement?.closest('.model-tile')?.dataset.head), '0', 'the focus back on the tile');
  await page.click('#model-head-grid .model-tile[data-layer="1"][data-head="0"] canvas');
  await page.waitForSelector('#model-head-dialog[open]');
  await page.click('#model-head-next');
  assert.equal(await page.textContent('#model-head-title'), 'Layer 2, head 2');
  await page.click('#model-head-prev');
  await page.click('#model-head-walkthrough');
  await page.waitForSelector('#tab-walkthrough[aria-selected="true"]');
  assert.equal(await page.locator('#walkthrough-view').isVisible(), true);
  assert.deepEqual(problems(), []);
});

test('Your model: a GPT-2-sized vocabulary without tokenizer files gets GPT-2\'s tokenizer and token texts', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.fill('#model-text', 'Hello world');
  const sizes = { layers: 1, heads: 2, d: 8, vocab: 50257, context: 16 };
  const { weights, config } = gpt2SizedCheckpoint(sizes);
  await page.setInputFiles('#model-files', [file('model.safetensors', weights), file('config.json', config)]);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  assert.deepEqual(await page.$$eval('#model-tokens .chip', (c) => c.map((chip) => chip.textContent)), ['Hello', ' world']);
  const listed = await page.$$eval('#model-next li', (items) => items.map((li) => ({ id: Number(li.dataset.id),
    text: li.querySelector('.model-next-token').textContent })));
  assert.equal(listed.length, 10);
  const texts = Object.fromEntries(Object.entries(gpt2Tokenizer().vocab).map(([token, id]) => [id, token]));
  let checked = 0;
  for (const { id, text } of listed) {
    // An ASCII vocab entry, with GPT-2's 'Ġ' for a leading space, is that text.
    const entry = texts[id];
    if (/^Ġ?[\x21-\x7e]+$/.test(entry)) {
      assert.equal(text, entry.replace(/^Ġ/, ' '), `token ${id}`);
      ++checked;
    }
  }
  assert.ok(checked > 0);
  assert.equal(await page.locator('#model-finder tbody tr').count(), 2);
  assert.deepEqual(problems(), []);
});

test('Your model: a sharded Llama-family checkpoint from files, ordered by its index; a missing shard and a refused config keep the model', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  await page.waitForSelector('body[data-model-name="english"]');
  const mistral = shardedMistral();
  const [first, second] = mistral.names.map((name, i) => file(name, mistral.shards[i]));
  const total = mistral.shards.reduce((sum, s) => sum + s.length, 0);
  const rest = [file('config.json', mistral.config), file('tokenizer.json', mistral.tokenizer), file('tokenizer_config.json', { add_bos_token: true })];

  // The shards in the wrong order with the index (and a companion file, skipped): read in the index's order.
  await page.setInputFiles('#model-files', [second, file('model.safetensors.index.json', mistral.index), first, ...rest]);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  assert.equal(await page.locator('#model-error').isHidden(), true, await page.textContent('#model-error'));
  assert.match(await page.textContent('#model-status'),
    /^model-00001-of-00002\.safetensors \+ 1 more shard: .* 3 layers × 4 heads · d_model 64 · 80 tokens · context 64 · wasm memory/);
  assert.equal(Number(await page.getAttribute('#model-status', 'data-file-bytes')), total);
  assert.equal(await page.textContent('#model-facts'),
    'Mistral · 3 layers · 4 query heads sharing 2 K/V heads · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 10000) · sliding window 5');
  const text = await page.inputValue('#model-text');
  const api = await page.evaluate(apiFilesCheckpoint, { weights: mistral.shards.map((s) => Array.from(s)), config: mistral.config,
    tokenizer: mistral.tokenizer, text });
  assert.equal(api.family, 'mistral');
  assert.equal(await page.textContent('#model-text-info'), `${api.n} tokens`);
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), mistral.sizes, api);
  assert.deepEqual((await page.evaluate(drawnGroups)).map((layer) => layer.map(({ canvases, ...g }) => g)), expectedGroups(mistral.sizes));
  // Each group is a labelled group; each heatmap says which K/V head its query head reads.
  const groups = await page.evaluate(drawnGroups);
  assert.deepEqual(groups[0].map((g) => g.canvases.map((c) => c.split(':')[0])), [
    ['Layer 1, head 1 (reads K/V head 1)', 'Layer 1, head 2 (reads K/V head 1)'],
    ['Layer 1, head 3 (reads K/V head 2)', 'Layer 1, head 4 (reads K/V head 2)']]);
  assert.equal(await page.locator('#model-next li').count(), 10);
  await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length === 12);
  // The finder's head is outlined inside its group.
  await page.click('#model-finder tbody tr:nth-child(1) button');
  assert.equal(await page.locator('#model-head-grid .head-group .model-tile.highlighted').count(), 1);
  const before = await tileNumbers(page, 2, 3);

  // A shard named by the index is missing: said before anything is read; the model stays.
  await page.setInputFiles('#model-files', [file('model.safetensors.index.json', mistral.index), second, ...rest]);
  await page.waitForFunction(() => !document.querySelector('#model-error').hidden);
  assert.equal(await page.textContent('#model-error'),
    'model.safetensors.index.json names 2 shards; model-00001-of-00002.safetensors is missing: drop every shard with the index');
  // No index: by name, and a gap in the numbered names is said too.
  await page.setInputFiles('#model-files', [second, ...rest]);
  await page.waitForFunction(() => document.querySelector('#model-error').textContent.endsWith('missing: drop every shard'));
  assert.equal(await page.textContent('#model-error'), 'model-00001-of-00002.safetensors is missing: drop every shard');
  assert.equal(await page.getAttribute('body', 'data-model-loads'), '1');

  // A config the core refuses (hidden_act gelu), by name: the Mistral and its drawing stay.
  await page.setInputFiles('#model-files', [first, second, file('config.json', { ...mistral.config, hidden_act: 'gelu' }), rest[1]]);
  await page.waitForFunction(() => /hidden_act/.test(document.querySelector('#model-error').textContent));
  assert.match(await page.textContent('#model-error'), /^Could not load the checkpoint: config\.json's hidden_act is 'gelu'; supported: silu\b/);
  await page.waitForSelector('body[data-model-loading="false"]');
  assert.equal(await page.textContent('#model-load-status'), 'Kept model-00001-of-00002.safetensors + 1 more shard.');
  assert.deepEqual(await tileNumbers(page, 2, 3), before);

  // The shards alone, in any order, without the index: ordered by name; the same heads.
  await page.setInputFiles('#model-files', [second, first, ...rest]);
  await page.waitForSelector('body[data-model-loads="2"]', { timeout: 30000 });
  await assertHeadsDrawn((layer, head) => tileNumbers(page, layer, head), mistral.sizes, api);
  await page.screenshot({ path: join(screenshotDir, 'yourmodel-shards.png'), fullPage: true });

  // Layer 2, head 3 (it reads K/V head 2) opens in the walkthrough: the Mistral's own layer —
  // two K/V heads, rotate-half RoPE, its sliding window of 5 — drawn as the API computes it.
  await page.click('#model-head-grid .model-tile[data-layer="1"][data-head="2"] canvas');
  await page.click('#model-head-walkthrough');
  await page.waitForSelector('#walkthrough-view:not([hidden])');
  await page.waitForFunction(() => document.querySelector('#walkthrough').dataset.model === 'opened-layer');
  await page.waitForFunction(() => [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready') &&
    document.querySelector('#matrices figure') !== null);
  assert.equal(await page.locator('#error').isHidden(), true, await page.textContent('#error'));
  assert.equal(await page.textContent('#model-badge'), 'Your model (Mistral checkpoint), layer 2 of 3 · sliding window 5, BPE tokens · not in the link');
  assert.equal(await page.textContent('#dk'), '(d_k = 16)');
  assert.equal(await page.inputValue('#mask'), 'sliding-window');
  assert.equal(await page.inputValue('#window'), '5');
  const drawn = await page.evaluate(() => {
    const slot = document.querySelector('#matrices .matrix-slot');
    return { step: slot.dataset.step, head: Number(slot.dataset.head),
      values: [...slot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))) };
  });
  const n = api.n;
  const want = api.attention[1].slice(2 * n * n, 3 * n * n);
  assert.deepEqual([drawn.step, drawn.head, drawn.values.length], ['weights', 2, n]);
  drawn.values.flat().forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-4 + 1e-3 * Math.abs(want[i]), `cell ${i}: drawn ${v}, API ${want[i]}`));
  await page.screenshot({ path: join(screenshotDir, 'walkthrough-mistral-gqa.png'), fullPage: true });
  // Every head grouped by the K/V head it reads, as in the Your model view; the greyed menus whole.
  const walkGroups = await page.$$eval('#heads-view .head-group', (groups) => groups.map((g) => ({
    label: document.getElementById(g.getAttribute('aria-labelledby'))?.textContent, role: g.getAttribute('role'),
    heads: [...g.querySelectorAll('.head-button')].map((b) => b.textContent) })));
  assert.deepEqual(walkGroups, [{ label: 'K/V head 1 · heads 1–2', role: 'group', heads: ['Head 1', 'Head 2'] },
    { label: 'K/V head 2 · heads 3–4', role: 'group', heads: ['Head 3', 'Head 4'] }]);
  assert.deepEqual(await page.$$eval('#heads-view .head-group .heatmap-scroll', (frames) => frames.filter((f) => f.scrollWidth > f.clientWidth)
    .length), 0, 'no grouped tile scrolls');
  assert.equal(await page.$eval('#tokenizer', (s) => s.selectedOptions[0].textContent), "the model's own (BPE)");
  assert.deepEqual(await page.evaluate(cutSelects), [], 'no greyed menu cuts its text');
  // The layer's own steps: its RMSNorm input, Q/K/V with shared K/V heads, rotate-half RoPE, its window.
  const stageText = async (id) => {
    await page.click(`#stage-list [data-stage="${id}"]`);
    await page.waitForFunction((s) => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === s, id);
    return `${await page.textContent('#stage-title')}: ${await page.textContent('#stage-text')}`;
  };
  assert.equal(await page.textContent('#stage-list [data-stage="embedding"]'), '1. Input');
  assert.match(await stageText('embedding'), /^The layer's input: .*RMSNorm \(x · rsqrt/);
  assert.match(await stageText('qkv'), /4 query heads share 2 key\/value heads/);
  assert.match(await stageText('rope'), /rotate_half.*θ base 10000/);
  assert.match(await stageText('masked'), /query i sees only keys i − 5 < j ≤ i/);
  assert.deepEqual(problems(), []);
});
