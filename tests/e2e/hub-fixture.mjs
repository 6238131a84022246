// The small GPT-2-family repo the browser tests load by Hub id from the local stand-in of the Hub
// (tests/hub/stand-in.mjs; no test reaches the internet), and the comparison of the Your model
// view's drawn heads with the JS API's attention: shared by tests/e2e/hub.test.mjs (Chromium,
// playwright) and tests/e2e/engines/checks.mjs (Chromium, Firefox and WebKit, scripts/lib/drivers.mjs).
import assert from 'node:assert/strict';
import { smallGpt2Files } from '../js/checkpoint-support.mjs';
import { startStandIn } from '../hub/stand-in.mjs';

/** 2 layers × 2 heads, d_model 16, context 64, GPT-2's 256 byte tokens and its first 4 merges. */
export const SMALL_GPT2 = Object.freeze({ layers: 2, heads: 2, d: 16, vocab: 260, context: 64 });
/** The id the stand-in serves SMALL_GPT2 under. */
export const SMALL_ID = 'org/small';

/** Starts the stand-in with SMALL_ID's config.json, vocab.json, merges.txt and model.safetensors. */
export function startSmallHub() {
  const { config, vocab, merges, weights } = smallGpt2Files(SMALL_GPT2);
  return startStandIn({ [SMALL_ID]: { 'config.json': config, 'vocab.json': vocab, 'merges.txt': merges, 'model.safetensors': weights } });
}

/** The figure of the Your model view's heatmap of `layer`, `head` (its screen-reader table: heatmapTable). */
export const headFigure = (layer, head) => `#model-head-grid .model-tile[data-layer="${layer}"][data-head="${head}"] figure`;

/**
 * Every head drawn equals `api.attention` ([layer][head·n·n]) to the table's rounding;
 * `drawnHead(layer, head)` resolves to the numbers the page draws for it, row by row.
 */
export async function assertHeadsDrawn(drawnHead, { layers, heads }, api) {
  for (let layer = 0; layer < layers; ++layer) {
    for (let head = 0; head < heads; ++head) {
      const drawn = await drawnHead(layer, head);
      assert.equal(drawn.length, api.n, `layer ${layer} head ${head}: ${drawn.length} rows drawn, ${api.n} tokens`);
      drawn.forEach((row, q) => row.forEach((v, k) => {
        const want = api.attention[layer][(head * api.n + q) * api.n + k];
        // The table shows 4 decimals (4 significant digits below 1e-3).
        assert.ok(Math.abs(v - want) <= 5.1e-5 + 1e-3 * Math.abs(want), `layer ${layer} head ${head} (${q}, ${k}): drawn ${v}, API ${want}`);
      }));
    }
  }
}

/**
 * In the page: the public API's lens.loadCheckpoint({ hub, endpoint }) on `text`, each layer's
 * attention ({ n, attention: [layer][head·n·n] }).
 */
export async function apiHubCheckpoint({ hub, endpoint, text }) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens();
  const gpt = await lens.loadCheckpoint({ hub, endpoint });
  const { ids } = gpt.tokenize(text);
  const { attention } = gpt.forward(ids, { n: ids.length });
  const out = { n: ids.length, attention: attention.map((a) => Array.from(a)) };
  gpt.dispose();
  return out;
}
