// The Your model view's share of the engine-neutral page checks (checks.mjs's engineSuite calls
// modelChecks with its engine, servers and helpers): a GPT-2-family checkpoint from files and by Hub
// id from the local stand-in of the Hub (its redirect to a second origin, the weights by Range), the
// Llama family (a sharded Mistral, a BF16 Qwen2, a Llama 3 from files), a .gguf file picked alone
// (its config and tokenizer from its metadata), each head drawn as the JS API
// computes it; greedy Generate as the API's m.generate and where the newest token looked; GPT-2
// small's 12 heads each whole in its tile, the load's phases, line, bar and errors within a screen of
// the control that started it, Cancel neither an alert nor a lost focus; a link changed while a Hub
// model stays loaded (its generation leaves with its text, hub= stays in the URL). The Circuits view's
// direct attribution on the shipped english model draws what the JS API computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heatmapTable } from '../browser.mjs';
import { apiHubCheckpoint, assertHeadsDrawn, drawnGroups, expectedGroups, expectedLayerTags, familyId, headFigure, loadFeedbackPlace,
  recordLoadLines, SMALL_GPT2, SMALL_ID, tilesCropped, TWELVE_HEADS, TWELVE_ID } from '../hub-fixture.mjs';
import { assertAsAccurate, familyGolden, llamaGolden, smallGpt2Files } from '../../js/checkpoint-support.mjs';
import { apiShipped, assertNear, attributionRows, circuitsTable } from '../circuits-fixture.mjs';
import { llamaQ8WithTokenizer } from '../../js/gguf-support.mjs';

/** The family cases the engines' stand-in serves (checks.mjs adds familyRepos of these): Gemma 3's local/global layers, Pythia in F16. */
export const ENGINE_FAMILY_CASES = ['gemma3-bf16', 'pythia-f16'];

// A GPT-2-family checkpoint small enough to send through WebDriver: 2 layers × 2 heads,
// d_model 16, context 64, GPT-2's 256 byte tokens and its first 4 merges (SMALL_GPT2, the one the
// stand-in of the Hub serves; as the Chromium suite's tests/e2e/yourmodel.test.mjs).
function gpt2Files() {
  const { weights, config, vocab, merges } = smallGpt2Files(SMALL_GPT2);
  return asFiles({ 'model.safetensors': weights, 'config.json': config, 'vocab.json': vocab, 'merges.txt': merges });
}

/** Files for pickFiles and apiCheckpoint: { name: bytes | text | object (as JSON) } → [{ name, type, base64 }]. */
export function asFiles(contents) {
  return Object.entries(contents).map(([name, content]) => {
    const bytes = content instanceof Uint8Array ? content : Buffer.from(typeof content === 'string' ? content : JSON.stringify(content));
    const type = name.endsWith('.json') ? 'application/json' : name.endsWith('.txt') ? 'text/plain' : 'application/octet-stream';
    return { name, type, base64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
  });
}

/** Picks `files` ({ name, type, base64 }) in the file input `selector`, as a reader's picker does. */
export function pickFiles({ selector, files }) {
  const list = new DataTransfer();
  for (const f of files) {
    const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
    list.items.add(new File([bytes], f.name, { type: f.type }));
  }
  const input = document.querySelector(selector);
  input.files = list.files;
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

/**
 * The public API in the page on the same files (model.safetensors, config.json, and tokenizer.json
 * or vocab.json + merges.txt): the family and each layer's attention for `text`.
 */
async function apiCheckpoint({ files, text }) {
  const bytes = (name) => Uint8Array.from(atob(files.find((f) => f.name === name).base64), (c) => c.charCodeAt(0));
  const json = (name) => JSON.parse(new TextDecoder().decode(bytes(name)));
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const tokenizer = files.some((f) => f.name === 'tokenizer.json') ? json('tokenizer.json')
    : { vocab: json('vocab.json'), merges: new TextDecoder().decode(bytes('merges.txt')) };
  const gpt = await lens.loadCheckpoint({ weights: new Blob([bytes('model.safetensors')]), config: json('config.json'), tokenizer });
  const { ids } = gpt.tokenize(text);
  const { attention } = gpt.forward(ids, { n: ids.length });
  const out = { n: ids.length, family: gpt.family, attention: attention.map((a) => Array.from(a)) };
  gpt.dispose();
  return out;
}

/** The public API in the page on a picked .gguf file's bytes (no config: its metadata holds it): its formats and each layer's attention for `text`. */
async function apiGgufFile({ file, text }) {
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const m = await lens.loadCheckpoint({ weights: new Blob([Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0))]) });
  const { ids } = m.tokenize(text);
  const { attention } = m.forward(ids, { n: ids.length });
  const out = { n: ids.length, formats: { ...m.weights.formats }, attention: attention.map((a) => Array.from(a)) };
  m.dispose();
  return out;
}

/** The public API in the page on a golden checkpoint's files (model.safetensors, config.json): its forward of `ids`. */
async function apiGoldenForward({ files, ids }) {
  const bytes = (name) => Uint8Array.from(atob(files.find((f) => f.name === name).base64), (c) => c.charCodeAt(0));
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const m = await lens.loadCheckpoint({ weights: new Blob([bytes('model.safetensors')]),
    config: JSON.parse(new TextDecoder().decode(bytes('config.json'))) });
  const { logits, attention } = m.forward(Int32Array.from(ids), { n: ids.length });
  const out = { family: m.family, logits: Array.from(logits), attention: attention.map((a) => Array.from(a)) };
  m.dispose();
  return out;
}

/** In the page: once the Your model view's load `loads` has ended (counted, or refused), what it shows; else null. */
function modelLoadEnded(loads) {
  const error = document.querySelector('#model-error');
  return (document.body.dataset.modelLoads === String(loads) || !error.hidden) && {
    loads: document.body.dataset.modelLoads, error: error.hidden ? null : error.textContent,
    status: document.querySelector('#model-status').textContent, facts: document.querySelector('#model-facts').textContent,
  };
}

/** The public API in the page: the english model's greedy generate after `text` (read with unknown: 'map'): ids, and each step's rows of layer 0 head 0. */
async function apiEnglishGenerate({ text, maxTokens }) {
  const { loadAttentionLens } = await import('/attention-lens.mjs');
  const lens = await loadAttentionLens();
  const model = await lens.trainedModel('english');
  const { ids } = model.tokenize(text, { unknown: 'map' });
  const g = model.generate(ids, { maxTokens, temperature: 0 });
  const { heads, layers } = model.config;
  const out = { n: ids.length, layers, heads, ids: Array.from(g.ids), rows: g.steps.map((step) => {
    const t = step.attention[0].length / heads;
    return Array.from(step.attention[0].subarray(0, t)); // layer 0, head 0: [t]
  }) };
  model.dispose();
  return out;
}

/** In the page: Your model's generation as drawn, once the first generation ended and its heatmap's table (`rows` rows) is built; else null. */
function generationDrawn(rows) {
  const host = document.querySelector('#model-gen-map');
  const figure = host?.querySelector('figure');
  if (document.body.dataset.modelGenerated === undefined || host.hidden || host.dataset.rows !== String(rows) ||
    figure?.dataset.table !== 'ready') return null;
  const canvas = document.querySelector('#model-gen-strip canvas');
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  return { ids: [...document.querySelectorAll('#model-gen-text .model-gen-chip')].map((c) => Number(c.dataset.id)),
    head: document.querySelector('#model-gen-head').value, stripHidden: document.querySelector('#model-gen-strip').hidden,
    strip: { rows: Number(canvas.dataset.rows), cols: Number(canvas.dataset.cols), height: Math.round(canvas.getBoundingClientRect().height),
      colours: colours.size, label: canvas.getAttribute('aria-label') },
    looks: [...document.querySelectorAll('#model-gen-text > [data-look]')].map((c) => Number(c.dataset.look)),
    // A cell not written yet as null (WebDriver's JSON has no NaN).
    map: [...figure.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')]
      .map((td) => (td.textContent === 'not written yet' ? null : Number(td.textContent)))),
    info: document.querySelector('#model-gen-info').textContent,
    overflow: document.documentElement.scrollWidth - innerWidth };
}

/** `drawnHead(layer, head)` for assertHeadsDrawn: the numbers the Your model view draws for a head. */
// How long a check waits for a model's load, the worker's first start included, and what it draws: Firefox
// and WebKit on a 2-core machine shared with other suites have taken more than 30 s for the Your model view's
// first model (the same checks take 3–8 s alone); a real failure still ends in a message saying what the page lacked.
const MODEL_WAIT = 60000;

const drawnHead = (page) => (layer, head) => page.waitFor(heatmapTable, headFigure(layer, head), 10000, `layer ${layer} head ${head} drawn`);

/**
 * Registers the Your model view's checks for `engineName`: `live` (checks.mjs's servers, stand-in and
 * stall server), withPage(body, viewport), shot(name) (a screenshot's path), clean(page, options).
 */
export function modelChecks(engineName, { live, withPage, shot, clean }) {
  test(`${engineName}: Your model loads a GPT-2-family checkpoint, and every head draws what the JS API computes`, () => withPage(async (page) => {
    await page.goto(`${live.strict.url}#tab=model`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true', null, MODEL_WAIT, 'the Your model view');
    const files = gpt2Files();
    await page.evaluate(pickFiles, { selector: '#model-files', files });
    await page.waitFor(() => document.body.dataset.modelLoads === '1', null, MODEL_WAIT, 'the checkpoint to load');
    assert.match(await page.evaluate(() => document.querySelector('#model-status').textContent),
      /model\.safetensors: .* 2 layers × 2 heads · d_model 16 · 260 tokens · context 64/);
    const text = await page.evaluate(() => document.querySelector('#model-text').value);
    const api = await page.evaluate(apiCheckpoint, { files, text });
    await assertHeadsDrawn(drawnHead(page), SMALL_GPT2, api);
    await page.screenshot(shot('yourmodel'));
    await clean(page);
  }));

  test(`${engineName}: Your model loads a .gguf file picked alone (a Q8_0 Llama, its tokenizer in its metadata): its format said, every head drawn as the JS API computes it`, () => withPage(async (page) => {
    await page.goto(`${live.strict.url}#tab=model`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true', null, MODEL_WAIT, 'the Your model view');
    const files = asFiles({ 'tiny-Q8_0.gguf': llamaQ8WithTokenizer() });
    await page.evaluate(pickFiles, { selector: '#model-files', files });
    const ended = await page.waitFor(() => (document.body.dataset.modelLoads === '1' || !document.querySelector('#model-error').hidden) &&
      { loads: document.body.dataset.modelLoads, error: document.querySelector('#model-error').hidden ? null : document.querySelector('#model-error').textContent },
    null, MODEL_WAIT, 'the .gguf file to load');
    assert.deepEqual(ended, { loads: '1', error: null });
    assert.match(await page.evaluate(() => document.querySelector('#model-status').textContent),
      /^tiny-Q8_0\.gguf: GGUF, Q8_0 × 16, F32 × 5 tensors · .* 2 layers × 4 heads · d_model 64 · 96 tokens · context 64/);
    const text = await page.evaluate(() => document.querySelector('#model-text').value);
    const api = await page.evaluate(apiGgufFile, { file: files[0], text });
    assert.deepEqual(api.formats, { Q8_0: 16, F32: 5 });
    await assertHeadsDrawn(drawnHead(page), { layers: 2, heads: 4 }, api);
    await clean(page);
  }));

  test(`${engineName}: Your model loads a GPT-2-family repo by Hub id from the stand-in (its redirect to a second origin, the weights by Range) under the strict CSP, and every head draws what the JS API computes`, () => withPage(async (page) => {
    const { hub, hubbed } = live;
    hub.reset();
    await page.goto(`${hubbed.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true', null, MODEL_WAIT, 'the Your model view');
    const shipped = await page.evaluate(() => ({ ...document.body.dataset }));
    assert.deepEqual([shipped.modelSource, shipped.modelName, shipped.modelLoads], ['shipped', 'english', undefined], 'the english model first');
    assert.deepEqual(hub.requests, [], 'the Hub is not asked before a model is picked');
    await page.fill('#model-hub-id', SMALL_ID);
    await page.click('#model-hub-load');
    const ended = await page.waitFor(() => (document.body.dataset.modelLoads === '1' || !document.querySelector('#model-error').hidden) &&
      { loads: document.body.dataset.modelLoads, error: document.querySelector('#model-error').hidden ? null : document.querySelector('#model-error').textContent },
    null, MODEL_WAIT, 'the repo to load');
    assert.deepEqual(ended, { loads: '1', error: null }, `the load of ${SMALL_ID}`);
    const loaded = await page.evaluate(() => ({ ...document.body.dataset, status: document.querySelector('#model-status').textContent }));
    assert.deepEqual([loaded.modelSource, loaded.modelName], ['hub', SMALL_ID]);
    assert.ok(loaded.status.startsWith(`${SMALL_ID} from ${hub.endpoint}: 2 layers × 2 heads · d_model 16 · 260 tokens · context 64 · wasm memory`), loaded.status);
    // The view's load (in its worker): the Hub's 302 to the second origin, the weights read there by Range.
    const seen = hub.requests.map(({ server, method, path, range, status }) => ({ server, method, path, range, status }));
    const weights = `/${SMALL_ID}/resolve/main/model.safetensors`;
    assert.ok(seen.some((r) => r.server === 'hub' && r.method === 'GET' && r.path === weights && r.status === 302), JSON.stringify(seen));
    const ranges = seen.filter((r) => r.server === 'storage' && r.method === 'GET' && r.path === `/lfs/${SMALL_ID}/main/model.safetensors`);
    assert.ok(ranges.length >= 1 && ranges.every((r) => r.status === 206 && /^bytes=\d+-\d+$/.test(r.range)), JSON.stringify(seen));
    assert.equal(hub.count('hub', `/${SMALL_ID}/resolve/main/config.json`, 'GET'), 1);
    const text = await page.evaluate(() => document.querySelector('#model-text').value);
    const api = await page.evaluate(apiHubCheckpoint, { hub: SMALL_ID, endpoint: hub.endpoint, text });
    await assertHeadsDrawn(drawnHead(page), SMALL_GPT2, api);
    await page.screenshot(shot('yourmodel-hub'));
    await clean(page, { allow: [hub.endpoint, hub.storage] });
  }));

  test(`${engineName}: Your model loads a Gemma-3-shaped and a Pythia-shaped repo by Hub id from the stand-in with their tokenizers: every head drawn as the JS API computes it, Gemma's local and global layers tagged as the golden windows say, the API within PyTorch's golden rule`, () => withPage(async (page) => {
    const { hub, hubbed } = live;
    await page.goto(`${hubbed.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
    // The view ready: the first model's load ended (Load is disabled while a load runs).
    await page.waitFor(() => document.body.dataset.modelReady === 'true' && document.body.dataset.modelName === 'english' &&
      document.querySelectorAll('#model-hub-pick option').length > 1, null, MODEL_WAIT, 'the Your model view');
    const families = await page.evaluate(async () => {
      const { loadAttentionLens } = await import('/attention-lens.mjs');
      return (await loadAttentionLens()).catalog.families;
    });
    for (const name of ENGINE_FAMILY_CASES) {
      const golden = familyGolden(name);
      const id = familyId(name);
      await page.fill('#model-hub-id', id);
      await page.click('#model-hub-load');
      const start = `${id} from ${hub.endpoint}:`;
      const shown = await page.waitFor((s) => {
        const error = document.querySelector('#model-error');
        if (!error.hidden && error.textContent) return { error: error.textContent };
        const status = document.querySelector('#model-status').textContent;
        return status.startsWith(s) && document.querySelectorAll('#model-head-grid canvas').length > 0 &&
          { status, facts: document.querySelector('#model-facts').textContent };
      }, start, MODEL_WAIT, `the load of ${id}`).catch(async (error) => {
        // What the page showed instead: its status line, the id box and whether Load was enabled.
        const seen = await page.evaluate(() => ({ status: document.querySelector('#model-status').textContent,
          id: document.querySelector('#model-hub-id').value, loadDisabled: document.querySelector('#model-hub-load').disabled }));
        throw new Error(`${error.message}; the page showed ${JSON.stringify(seen)}`);
      });
      assert.equal(shown.error, undefined, `${name}: ${shown.error}`);
      const family = families.find((f) => f.name === golden.metadata.family);
      assert.ok(shown.facts.startsWith(`${family.displayName} · ${golden.config.num_hidden_layers} layers`), shown.facts);
      const text = await page.evaluate(() => document.querySelector('#model-text').value);
      const api = await page.evaluate(apiHubCheckpoint, { hub: id, endpoint: hub.endpoint, text });
      const sizes = { layers: golden.config.num_hidden_layers, heads: golden.config.num_attention_heads };
      await page.waitFor((n) => document.querySelector('#model-text-info').textContent.startsWith(`${n} tokens`), api.n, 10000, 'the run');
      await assertHeadsDrawn(drawnHead(page), sizes, api);
      const tags = await page.evaluate(() => [...document.querySelectorAll('#model-head-grid .head-layer-title')]
        .map((t) => t.querySelector('span')?.textContent ?? null));
      const want = expectedLayerTags(golden.metadata);
      assert.deepEqual(tags, want ?? tags.map(() => null), `${engineName}: ${name}'s layer tags`);
      await page.screenshot(shot(`yourmodel-${name}`));
      // PyTorch: the golden case through the API in this page, on the golden ids.
      const ids = Array.from(golden.expected.ids.data, Number);
      const ours = await page.evaluate(apiGoldenForward, { files: asFiles({ 'model.safetensors': golden.weights, 'config.json': golden.config }), ids });
      assert.equal(ours.family, golden.metadata.family);
      assertAsAccurate(ours.logits, golden.expected.logits32.data, golden.expected.logits64.data, `${engineName}: ${name} logits`);
      ours.attention.forEach((a, l) => assertAsAccurate(a, golden.expected[`attn32.${l}`].data, golden.expected[`attn64.${l}`].data,
        `${engineName}: ${name} layer ${l}'s attention`));
    }
    await clean(page, { allow: [hub.endpoint, hub.storage] });
  }));

  test(`${engineName}: Your model loads the Llama family — a sharded Mistral and a BF16 Qwen2 by Hub id from the stand-in, a Llama 3 from files — every head drawn as the JS API computes it, the K/V groups drawn and the family named; the API's Qwen2 in the page within PyTorch's golden rule`, () => withPage(async (page) => {
    const { hub, hubbed, llama } = live;
    hub.reset();
    await page.goto(`${hubbed.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true' && document.body.dataset.modelName === 'english', null, MODEL_WAIT,
      'the Your model view');
    const text = await page.evaluate(() => document.querySelector('#model-text').value);
    const groups = async () => (await page.evaluate(drawnGroups)).map((layer) => layer.map(({ canvases, ...g }) => g));
    let loads = 0;
    const loaded = async (what) => {
      const ended = await page.waitFor(modelLoadEnded, ++loads, MODEL_WAIT, `the load of ${what}`);
      assert.deepEqual([ended.loads, ended.error], [String(loads), null], `the load of ${what}`);
      return ended;
    };
    const byId = async (id) => {
      await page.fill('#model-hub-id', id);
      await page.click('#model-hub-load');
      return loaded(id);
    };
    const from = `from ${hub.endpoint}: `;

    // A sharded Mistral by id: model.safetensors is 404, then its index, then each shard (302 to the second origin, read by Range).
    let ended = await byId('org/mistral-sharded');
    assert.ok(ended.status.startsWith(`org/mistral-sharded ${from}3 layers × 4 heads · d_model 64 · 80 tokens · context 64 · wasm memory`), ended.status);
    assert.equal(ended.facts,
      'Mistral · 3 layers · 4 query heads sharing 2 K/V heads · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 10000) · sliding window 5');
    const seen = hub.requests.map(({ server, method, path, status }) => ({ server, method, path, status }));
    assert.ok(seen.some((r) => r.server === 'hub' && r.path === '/org/mistral-sharded/resolve/main/model.safetensors' && r.status === 404),
      JSON.stringify(seen));
    assert.equal(hub.count('hub', '/org/mistral-sharded/resolve/main/model.safetensors.index.json', 'GET'), 1);
    for (const name of llama.mistral.names) {
      assert.ok(seen.some((r) => r.server === 'hub' && r.path === `/org/mistral-sharded/resolve/main/${name}` && r.status === 302) &&
        seen.some((r) => r.server === 'storage' && r.path === `/lfs/org/mistral-sharded/main/${name}` && r.status === 206), `${name}: ${JSON.stringify(seen)}`);
    }
    const mistral = await page.evaluate(apiHubCheckpoint, { hub: 'org/mistral-sharded', endpoint: hub.endpoint, text });
    await assertHeadsDrawn(drawnHead(page), llama.mistral.sizes, mistral);
    assert.deepEqual(await groups(), expectedGroups(llama.mistral.sizes));

    // A Qwen2 in BF16 by id: one K/V head for its 4 query heads, one group per layer.
    ended = await byId('org/qwen2-bf16');
    assert.ok(ended.status.startsWith(`org/qwen2-bf16 ${from}2 layers × 4 heads · d_model 64 · 72 tokens · context 128 · wasm memory`), ended.status);
    assert.equal(ended.facts,
      'Qwen2 · 2 layers · 4 query heads sharing 1 K/V head · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 1000000) · tied embeddings');
    const qwen2 = await page.evaluate(apiHubCheckpoint, { hub: 'org/qwen2-bf16', endpoint: hub.endpoint, text });
    await assertHeadsDrawn(drawnHead(page), llama.qwen2.sizes, qwen2);
    assert.deepEqual(await groups(), expectedGroups(llama.qwen2.sizes));
    await page.screenshot(shot('yourmodel-llama-hub'));

    // A Llama 3 (rope_scaling 'llama3', head dim 24) from files: every head its own K/V head, no groups.
    const files = asFiles({ 'model.safetensors': llama.llama3.weights, 'config.json': llama.llama3.config, 'tokenizer.json': llama.llama3.tokenizer });
    await page.evaluate(pickFiles, { selector: '#model-files', files });
    ended = await loaded('the Llama 3 files');
    assert.match(ended.status, /^model\.safetensors: .* 2 layers × 4 heads · d_model 64 · 64 tokens · context 64 · wasm memory/);
    assert.equal(ended.facts,
      'Llama · 2 layers · 4 heads · head dim 24 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 500000, Llama 3 scaling) · tied embeddings');
    const llama3 = await page.evaluate(apiCheckpoint, { files, text });
    assert.equal(llama3.family, 'llama');
    await assertHeadsDrawn(drawnHead(page), llama.llama3.sizes, llama3);
    assert.deepEqual(await groups(), [[], []], 'no K/V groups when every query head has its own');
    await page.screenshot(shot('yourmodel-llama-files'));

    // PyTorch: the golden Qwen2 in BF16 through the API in this page, on the golden ids: logits and
    // every layer's attention within 4× PyTorch float32's error from float64 (or 1e-6 of its norm).
    const golden = llamaGolden('qwen2-bf16');
    const ids = Array.from(golden.expected.ids.data, Number);
    const ours = await page.evaluate(apiGoldenForward, { files: asFiles({ 'model.safetensors': golden.weights, 'config.json': golden.config }), ids });
    assert.equal(ours.family, 'qwen2');
    assertAsAccurate(ours.logits, golden.expected.logits32.data, golden.expected.logits64.data, `${engineName}: qwen2-bf16 logits`);
    assert.equal(ours.attention.length, Number(golden.metadata.layers));
    ours.attention.forEach((a, l) => assertAsAccurate(a, golden.expected[`attn32.${l}`].data, golden.expected[`attn64.${l}`].data,
      `${engineName}: qwen2-bf16 layer ${l}'s attention`));
    await clean(page, { allow: [hub.endpoint, hub.storage] });
  }));

  test(`${engineName}: Your model's greedy Generate writes the API's m.generate tokens, and draws where the newest token looked as the API's last step gives it`, () => withPage(async (page) => {
    const text = 'the cat sat on the mat';
    const tokens = 6;
    await page.goto(`${live.strict.url}#tab=model&modelText=${encodeURIComponent(text)}`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true' && document.body.dataset.modelName === 'english' &&
      document.body.dataset.modelRun !== undefined, null, MODEL_WAIT, 'the english model and its run');
    const api = await page.evaluate(apiEnglishGenerate, { text, maxTokens: tokens });
    await page.fill('#model-gen-tokens', String(tokens));
    await page.click('#model-gen-start');
    const drawn = await page.waitFor(generationDrawn, tokens, MODEL_WAIT, 'the generation drawn');
    assert.deepEqual(drawn.ids, api.ids, 'the tokens are the API\'s greedy generate');
    // " · on N threads" where the page is cross-origin isolated and the engine gives SharedArrayBuffer
    assert.match(drawn.info, new RegExp(`^${tokens} tokens in .* tokens/s( · on \\d+ threads)?$`));
    // The strip: a row per layer (its heads max-pooled) over the t = n + tokens − 1 positions the last token's query saw.
    const t = api.n + tokens - 1;
    assert.equal(drawn.stripHidden, false);
    assert.deepEqual([drawn.strip.rows, drawn.strip.cols, drawn.strip.height], [api.layers, t, api.layers * 10]);
    assert.ok(drawn.strip.colours > 4, `the strip has ${drawn.strip.colours} colours`);
    assert.match(drawn.strip.label, new RegExp(`^Where new token ${tokens} \\(.*\\) looked: its attention over the ${t} tokens before it, ` +
      `one row per layer \\(${api.layers}\\)`));
    // The shown head (layer 1, head 1) on the chips: the API's last step row, to the 4 decimals drawn.
    assert.equal(drawn.head, '0:0');
    const last = api.rows[tokens - 1];
    assert.equal(drawn.looks.length, t);
    last.forEach((v, j) => assert.ok(Math.abs(drawn.looks[j] - v) <= 5.1e-5, `position ${j}: drawn ${drawn.looks[j]}, API ${v}`));
    // Its heatmap of the whole generation: each step's row, the rest not written yet.
    assert.equal(drawn.map.length, tokens);
    api.rows.forEach((row, k) => {
      assert.equal(drawn.map[k].length, t, `row ${k}`);
      row.forEach((v, j) => assert.ok(Math.abs(drawn.map[k][j] - v) <= 5.1e-5 + 1e-3 * Math.abs(v), `[${k}][${j}]: drawn ${drawn.map[k][j]}, API ${v}`));
      assert.ok(drawn.map[k].slice(row.length).every((v) => v === null), `row ${k} after its ${row.length} positions: not written yet`);
    });
    assert.ok(drawn.overflow <= 0, `the page is ${drawn.overflow}px wider than the window`);
    await page.screenshot(shot('yourmodel-generate'), { fullPage: true });
    await clean(page);
  }));

  test(`${engineName}: Your model at 1280 × 900 and 375 × 800: GPT-2 small's 12 heads each whole in its tile, the load's phases, line, bar and errors within a screen of the id box or the files, a cancel neither an alert nor a lost focus`, async () => {
    for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
      await withPage(async (page) => {
        const { hub, hubbed, stall } = live;
        const where = `${viewport.width} × ${viewport.height}`;
        await page.goto(`${hubbed.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
        await page.waitFor(() => document.body.dataset.modelReady === 'true' && document.body.dataset.modelName === 'english', null, MODEL_WAIT,
          'the Your model view');
        // By id: the line beside the id box names each phase, the weights' preparing included.
        await page.evaluate(recordLoadLines);
        await page.fill('#model-hub-id', TWELVE_ID);
        await page.click('#model-hub-load');
        const ended = await page.waitFor(modelLoadEnded, 1, MODEL_WAIT, `the load of ${TWELVE_ID}`);
        assert.equal(ended.error, null, where);
        const lines = await page.evaluate(() => window.loadLines);
        assert.ok(lines.includes(`Preparing weights: reading ${TWELVE_ID} into the WebAssembly core…`), `${where}: ${lines.join(' | ')}`);
        assert.ok(lines.includes(`Preparing weights: packing ${TWELVE_ID} for its first run…`), `${where}: ${lines.join(' | ')}`);
        assert.equal(lines.at(-1), '', `${where}: the line cleared once loaded`);
        // Every tile holds its whole square heatmap, scaled to the tile: no scrollbar; one legend for the grid.
        const tiles = TWELVE_HEADS.layers * TWELVE_HEADS.heads;
        await page.waitFor((count) => document.querySelectorAll('#model-head-grid canvas[data-cell]').length === count, tiles, 10000, 'the tiles');
        assert.deepEqual(await page.evaluate(tilesCropped), { tiles, cropped: [], legends: 1, tileLegends: 0 }, where);
        // A refusal: its error right under the id box.
        await page.fill('#model-hub-id', 'org/missing');
        await page.click('#model-hub-load');
        await page.waitFor(() => !document.querySelector('#model-error').hidden && document.body.dataset.modelLoading === 'false', null, MODEL_WAIT,
          'the refusal');
        let place = await page.evaluate(loadFeedbackPlace);
        assert.ok(place.errorBottom - place.idTop <= place.height, `${where}: the error ends ${place.errorBottom - place.idTop} px below the id box`);
        // A load that stays in flight: its line and bar under the id box; Cancel pressed from the keyboard.
        await page.fill('#model-hub-id', `${stall.origin}/org/slow`);
        await page.click('#model-hub-load');
        await page.waitFor(() => !document.querySelector('#model-cancel').hidden, null, 10000, 'Cancel');
        place = await page.evaluate(loadFeedbackPlace);
        assert.equal(place.errorBottom, null, `${where}: the last error cleared`);
        assert.ok(place.lineBottom - place.idTop <= place.height && place.barBottom - place.idTop <= place.height,
          `${where}: the line ends ${place.lineBottom - place.idTop} px and the bar ${place.barBottom - place.idTop} px below the id box`);
        await page.evaluate(() => document.querySelector('#model-cancel').focus());
        await page.press('Enter');
        const cancelled = await page.waitFor(() => document.body.dataset.modelLoading === 'false' && {
          line: document.querySelector('#model-load-status').textContent,
          alerts: [...document.querySelectorAll('[role="alert"]')].filter((e) => !e.closest('[hidden]') && e.textContent).map((e) => e.textContent),
          focus: document.activeElement?.id ?? null }, null, 10000, 'the cancel');
        assert.deepEqual(cancelled, { line: `Cancelled. Kept ${TWELVE_ID}.`, alerts: [], focus: 'model-hub-load' }, where);
        // Files: a refusal beside the files.
        await page.evaluate(pickFiles, { selector: '#model-files', files: asFiles({ 'model.bin': new Uint8Array(8), 'config.json': {} }) });
        await page.waitFor(() => document.querySelector('#model-error').textContent.startsWith('model.bin'), null, 10000, 'the files refused');
        place = await page.evaluate(loadFeedbackPlace);
        assert.ok(place.errorBottom - place.filesTop <= place.height, `${where}: the error ends ${place.errorBottom - place.filesTop} px below the files`);
        assert.equal(await page.evaluate(() => document.querySelector('#model-load-status').textContent), '', `${where}: the cancel's line gone`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
        assert.ok(overflow <= 0, `${where}: the page is ${overflow} px wider than the window`);
        await page.screenshot(shot(`yourmodel-twelve-${viewport.width}`), { fullPage: true });
        await clean(page, { allow: [hub.endpoint, hub.storage, stall.origin] });
      }, viewport);
    }
  });

  test(`${engineName}: a link changed while a Hub model stays loaded: the generation written after the old text leaves, and hub= stays in the URL`, () => withPage(async (page) => {
    const { hub, hubbed } = live;
    const base = `#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`;
    await page.goto(`${hubbed.url}${base}`);
    await page.waitFor(() => document.body.dataset.modelReady === 'true' && document.body.dataset.modelName === 'english', null, MODEL_WAIT,
      'the Your model view');
    await page.fill('#model-hub-id', SMALL_ID);
    await page.click('#model-hub-load');
    assert.equal((await page.waitFor(modelLoadEnded, 1, MODEL_WAIT, `the load of ${SMALL_ID}`)).error, null);
    await page.waitFor(() => /[#&]hub=org%2Fsmall(&|$)/.test(location.hash), null, 5000, 'hub= in the URL');
    await page.fill('#model-gen-tokens', '4');
    await page.click('#model-gen-start');
    await page.waitFor(() => document.body.dataset.modelGenerated !== undefined && document.querySelectorAll('#model-gen-text .model-gen-chip').length === 4 &&
      !document.querySelector('#model-gen-strip').hidden, null, MODEL_WAIT, 'the generation');
    const infoBefore = await page.evaluate(() => document.querySelector('#model-text-info').textContent);
    // The hash changed by hand: another text and no hub. The generation (written after the old text) leaves; the
    // model stays, and the URL names it again.
    await page.evaluate((hash) => {
      location.hash = hash;
    }, `${base}&modelText=${encodeURIComponent('the end')}`);
    const after = await page.waitFor(() => document.querySelector('#model-text').value === 'the end' &&
      /[#&]hub=org%2Fsmall(&|$)/.test(location.hash) && {
      strip: document.querySelector('#model-gen-strip').hidden, map: document.querySelector('#model-gen-map').hidden,
      chips: document.querySelectorAll('#model-gen-text > *').length, info: document.querySelector('#model-gen-info').textContent,
      model: document.body.dataset.modelName, error: document.querySelector('#model-error').hidden ? null : document.querySelector('#model-error').textContent,
    }, null, 10000, 'the new text and hub= back in the URL');
    assert.deepEqual(after, { strip: true, map: true, chips: 0, info: '', model: SMALL_ID, error: null });
    await page.waitFor((was) => /^\d+ tokens$/.test(document.querySelector('#model-text-info').textContent) &&
      document.querySelector('#model-text-info').textContent !== was, infoBefore, 10000, 'the new text run');
    await clean(page, { allow: [hub.endpoint, hub.storage] });
  }));

  test(`${engineName}: the Circuits view's direct attribution (the induction preset's prompts on the english model) draws what the JS API computes`, () => withPage(async (page) => {
    const inputs = { clean: 'hpcvgufthpcvguf', corrupted: 'hpcvguftirxwjmb', answers: ['t', 'e'] };
    await page.goto(`${live.strict.url}#tab=circuits&circuitShow=attribution&circuitClean=${inputs.clean}&circuitCorrupt=${inputs.corrupted}` +
      `&circuitA=${inputs.answers[0]}&circuitB=${inputs.answers[1]}`);
    const table = await page.waitFor(circuitsTable, null, MODEL_WAIT, 'the attribution drawn');
    const want = attributionRows(await apiShipped('english', inputs));
    assert.deepEqual(table.colLabels, ['H1', 'H2', 'H3', 'H4', 'bias', 'MLP']);
    assert.equal(table.cells.length, want.length);
    table.cells.forEach((row, l) => row.forEach((text, c) => assertNear(Number(text), want[l][c], `L${l + 1} ${table.colLabels[c]}`)));
    await page.screenshot(shot('circuits'));
    await clean(page);
  }));
}
