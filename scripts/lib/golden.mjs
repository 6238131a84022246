// The built module (dist/attention-lens.mjs, or ATTN_MODULE), loaded once, and PyTorch's golden
// cases (tests/data/golden/) through its API: shared by tests/js/ and
// scripts/measure/parity-report.mjs.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readSafetensors } from './safetensors.mjs';

export const MODULE_URL = process.env.ATTN_MODULE
  ? pathToFileURL(process.env.ATTN_MODULE)
  : new URL('../../dist/attention-lens.mjs', import.meta.url);
const GOLDEN_DIR = fileURLToPath(new URL('../../tests/data/golden/', import.meta.url));

let lensPromise = null;

/**
 * The API object of dist/attention-lens.mjs, loaded once per test process; with ATTN_THREADS=n
 * in the environment, with threads: n (the threaded build: npm test runs tests/js/ both ways).
 */
export function loadLens() {
  const threads = process.env.ATTN_THREADS ? Number(process.env.ATTN_THREADS) : undefined;
  lensPromise ??= import(MODULE_URL.href).then((m) => m.loadAttentionLens(threads ? { threads } : {}));
  return lensPromise;
}

// ---- golden cases ------------------------------------------------------------------------------

/** Golden case names (tests/data/golden/<case>.safetensors, not *.weights.*), sorted. */
export function goldenCases() {
  return readdirSync(GOLDEN_DIR)
    .filter((f) => f.endsWith('.safetensors') && !f.endsWith('.weights.safetensors'))
    .map((f) => f.slice(0, -'.safetensors'.length))
    .sort();
}

export function goldenPath(name) {
  return `${GOLDEN_DIR}${name}.safetensors`;
}

/** Everything a golden case file holds, in the shapes the API takes. */
export function loadGoldenCase(name) {
  const { tensors: t, metadata } = readSafetensors(goldenPath(name));
  const [n, dModel] = t.x.shape;
  const c = {
    name,
    n,
    dModel,
    heads: Number(metadata.heads),
    bias: metadata.bias === 'true',
    mask: metadata.mask,
    x: t.x.data,
    kv: t.kv?.data,
    kvN: t.kv ? t.kv.shape[0] : n,
    keyPadding: t.key_padding_mask?.data,
    weights: {
      inProjWeight: t.in_proj_weight.data,
      outProjWeight: t['out_proj.weight'].data,
    },
    expectedOutput: t.expected_output.data,
    expectedAttention: t.expected_attention.data,
    expectedAttentionShape: t.expected_attention.shape,
  };
  if (c.bias) {
    c.weights.inProjBias = t.in_proj_bias.data;
    c.weights.outProjBias = t['out_proj.bias'].data;
  }
  assert.ok(['none', 'causal'].includes(c.mask), `${name}: unexpected mask ${c.mask}`);
  assert.ok(c.bias || metadata.bias === 'false', `${name}: bias metadata ${metadata.bias}`);
  return c;
}

/** forward() options for a golden case (extra options merged in). */
export function goldenForwardOptions(c, extra = {}) {
  const options = { n: c.n, mask: c.mask, ...extra };
  if (c.kv) {
    options.kv = c.kv;
    options.kvN = c.kvN;
  }
  if (c.keyPadding) options.keyPadding = c.keyPadding;
  return options;
}

/** A layer for a golden case with the case's weights set. */
export function goldenLayer(lens, c) {
  const layer = lens.createLayer({ dModel: c.dModel, heads: c.heads, bias: c.bias, positional: 'none' });
  layer.setWeights(c.weights);
  return layer;
}
