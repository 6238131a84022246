// The Circuits view's share of the browser tests (tests/e2e/circuits.test.mjs in Chromium, and the
// engines' check in engines/model-checks.mjs): what the view draws, read from its screen-reader
// table, and the same analyses computed by the public JS API in node on the same shipped model.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gpt2SizedCheckpoint, gpt2Tokenizer } from '../js/checkpoint-support.mjs';

const dist = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist');

/** In the page: the Circuits map's table, once built: { rowLabels, colLabels, cells: [[text]] }; else null. */
export function circuitsTable() {
  const figure = document.querySelector('#circuits-map figure');
  if (figure?.dataset.table !== 'ready' || document.querySelector('#circuits-map').hidden) return null;
  const text = (e) => e.textContent;
  return { rowLabels: [...figure.querySelectorAll('tbody th')].map(text), colLabels: [...figure.querySelectorAll('thead th')].slice(1).map(text),
    cells: [...figure.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map(text)) };
}

/** In the page: the Circuits view's facts (body data-*) and inputs. */
export function circuitsState() {
  const q = (id) => document.getElementById(id);
  return { drawn: Number(document.body.dataset.circuitsDrawn ?? 0), shown: document.body.dataset.circuitsShown ?? '',
    running: document.body.dataset.circuitsRunning ?? '', error: q('circuits-error').hidden ? '' : q('circuits-error').textContent,
    clean: q('circuits-clean').value, corrupted: q('circuits-corrupt').value, a: q('circuits-answer-a').value, b: q('circuits-answer-b').value,
    aInfo: q('circuits-answer-a-info').textContent, bInfo: q('circuits-answer-b-info').textContent, lengths: q('circuits-lengths').textContent,
    show: document.querySelector('input[name="circuits-show"]:checked')?.value ?? '', status: q('circuits-status').textContent };
}

/** A drawn cell's number: the table's text (the logit lens's 'token · 0.1234': its number). */
export const cellNumber = (text) => Number(text.split(' · ').at(-1));

/** Drawn to the table's 4 decimals (4 significant digits below 1e-3) against the API's value. */
export function assertNear(drawn, want, where) {
  assert.ok(Math.abs(drawn - want) <= 5.1e-5 + 1e-3 * Math.abs(want), `${where}: drawn ${drawn}, API ${want}`);
}

/**
 * The public API in node on the shipped model `name`: the prompts read as the page reads them
 * (in the model's alphabet, unknown characters mapped), each answer as its one token, and the
 * analyses: { ids, n, layers, heads, answers, attribution, lens, rollout, patch (null without m.patch) }.
 */
export async function apiShipped(name, { clean, corrupted, answers }) {
  const { loadAttentionLens } = await import(pathToFileURL(join(dist, 'attention-lens.mjs')).href);
  const lens = await loadAttentionLens();
  const m = await lens.trainedModel(name);
  try {
    const read = (text) => m.tokenize(text, { unknown: 'map' }).ids;
    const ids = read(clean);
    const ab = answers.map((t) => {
      const one = read(t);
      assert.equal(one.length, 1, `the answer “${t}” is one token`);
      return one[0];
    });
    const out = { ids: Array.from(ids), n: ids.length, layers: m.config.layers, heads: m.config.heads, answers: ab,
      attribution: m.attribute(ids, { answers: ab }), lens: m.logitLens(ids, { topK: 5, token: ab[0] }), rollout: m.rollout(ids),
      vocabulary: m.vocabulary, patch: null };
    if (typeof m.patch === 'function') {
      const other = read(corrupted);
      out.patch = Object.fromEntries(['heads', 'residual', 'layers'].map((over) => [over, m.patch({ clean: ids, corrupted: other, answers: ab, over })]));
    }
    return out;
  } finally {
    m.dispose();
  }
}

/** The API's attribution as the page lays it out: layers × (heads, attention bias, MLP). */
export function attributionRows(api) {
  const { layers, heads, attribution: d } = api;
  return Array.from({ length: layers }, (_, l) => [...Array.from(d.heads.subarray(l * heads, (l + 1) * heads)), d.attentionBias[l], d.mlp[l]]);
}

/**
 * Loads a random GPT-2-shaped checkpoint of `sizes` ({ layers, heads, d, vocab, context }) with GPT-2's
 * tokenizer as files in the page's Your model tab (the page is on it, its first model loaded); waits
 * for the load. Returns the checkpoint's { weights, config, vocab, merges }.
 */
export async function loadGpt2Files(page, sizes) {
  const { weights, config } = gpt2SizedCheckpoint(sizes);
  const { vocab, merges } = gpt2Tokenizer();
  await page.setInputFiles('#model-files', [
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(weights) },
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
    { name: 'vocab.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(vocab)) },
    { name: 'merges.txt', mimeType: 'text/plain', buffer: Buffer.from(merges) }]);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 40000 });
  return { weights, config, vocab, merges };
}
