// Shared helpers for the node:test suites in tests/js/: loading the built module, an
// independent .safetensors reader (and a tiny writer for crafting bad files), and closeness
// checks that report where and by how much two arrays differ.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const MODULE_URL = process.env.ATTN_MODULE
  ? pathToFileURL(process.env.ATTN_MODULE)
  : new URL('../../dist/attention-lens.mjs', import.meta.url);
export const SINGLE_FILE_URL = new URL('../../dist/attention-lens.single.mjs', import.meta.url);
// The <attention-lens> element's module (wasm inlined, no trainer or checkpoint import).
export const EMBED_MODULE_URL = new URL('../../build/wasm-release/attention-lens.embed.mjs', import.meta.url);
export const DATA_DIR = fileURLToPath(new URL('../data/', import.meta.url));

let lensPromise = null;

/** The API object of dist/attention-lens.mjs, loaded once per test process. */
export function loadLens() {
  lensPromise ??= import(MODULE_URL.href).then((m) => m.loadAttentionLens());
  return lensPromise;
}

// ---- .safetensors -----------------------------------------------------------------------------

const DTYPES = {
  F32: Float32Array,
  F64: Float64Array,
  U8: Uint8Array,
};

/**
 * Parses .safetensors bytes: an 8-byte little-endian header length, a JSON header, then the
 * tensor data. Every tensor is copied into its own (aligned) typed array.
 * @returns {{tensors: Record<string, {dtype: string, shape: number[], data: Float32Array|Float64Array|Uint8Array}>, metadata: Record<string, string>}}
 */
export function parseSafetensors(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (u8.length < 8) throw new Error(`safetensors: ${u8.length} bytes, too short for a header`);
  const headerLength = Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true));
  if (8 + headerLength > u8.length) throw new Error('safetensors: header runs past the end');
  const header = JSON.parse(new TextDecoder('utf-8', { fatal: true })
    .decode(u8.subarray(8, 8 + headerLength)));
  const dataStart = 8 + headerLength;
  const tensors = {};
  let metadata = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = info;
      continue;
    }
    const Type = DTYPES[info.dtype];
    if (!Type) throw new Error(`safetensors: unsupported dtype ${info.dtype} for ${name}`);
    const [begin, end] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * Type.BYTES_PER_ELEMENT || dataStart + end > u8.length) {
      throw new Error(`safetensors: bad data_offsets for ${name}`);
    }
    // A copy into a fresh ArrayBuffer, so the typed array is aligned (Uint8Array's slice, not
    // Buffer's, which would return a view into Node's shared pool).
    const copy = Uint8Array.prototype.slice.call(u8, dataStart + begin, dataStart + end);
    tensors[name] = { dtype: info.dtype, shape: info.shape, data: new Type(copy.buffer) };
  }
  return { tensors, metadata };
}

/** readSafetensors(path): parseSafetensors of a file's bytes. */
export function readSafetensors(path) {
  return parseSafetensors(readFileSync(path));
}

/** The raw bytes of a file as a Uint8Array. */
export function readBytes(path) {
  return new Uint8Array(readFileSync(path));
}

/**
 * Minimal writer, for crafting files the tests need (extra or missing tensors).
 * tensors: {name: {dtype: 'F32'|'F64'|'U8', shape, data}}.
 */
export function writeSafetensors(tensors, metadata = undefined) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const parts = [];
  for (const [name, t] of Object.entries(tensors)) {
    const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8 !== 0) json += ' ';
  const jsonBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + jsonBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  let at = 8 + jsonBytes.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---- the malformed corpus (scripts/make-malformed-corpus.mjs) ---------------------------------

/** The layer every file of tests/data/malformed/ and tests/fuzz/seeds/valid-d4-* is meant for. */
export const CORPUS_LAYER = Object.freeze({ dModel: 4, heads: 2, bias: true });
export const MALFORMED_DIR = `${DATA_DIR}malformed/`;
export const FUZZ_SEED_DIR = fileURLToPath(new URL('../fuzz/seeds/', import.meta.url));

/**
 * The malformed files with the message each must give: [{ name, bytes, expected }] in the order
 * of expected.json. Fails if a .safetensors file in the folder is not listed there or a listed
 * file is missing.
 */
export function malformedCorpus() {
  const expected = JSON.parse(readFileSync(`${MALFORMED_DIR}expected.json`, 'utf8'));
  const files = readdirSync(MALFORMED_DIR).filter((f) => f.endsWith('.safetensors')).sort();
  assert.deepEqual(files, Object.keys(expected).sort(), 'tests/data/malformed/ and expected.json list the same files');
  return Object.entries(expected).map(([name, message]) => ({
    name, bytes: readBytes(MALFORMED_DIR + name), expected: message,
  }));
}

/** A RegExp matching `text` literally. */
export function literal(text) {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

/** Golden case names (tests/data/golden/<case>.safetensors, not *.weights.*), sorted. */
export function goldenCases() {
  return readdirSync(`${DATA_DIR}golden`)
    .filter((f) => f.endsWith('.safetensors') && !f.endsWith('.weights.safetensors'))
    .map((f) => f.slice(0, -'.safetensors'.length))
    .sort();
}

export function goldenPath(name) {
  return `${DATA_DIR}golden/${name}.safetensors`;
}

export function numpyPath(name) {
  return `${DATA_DIR}numpy/${name}.safetensors`;
}

// ---- comparisons ------------------------------------------------------------------------------

/**
 * Requires |got[i] - want[i]| <= atol + rtol * |want[i]| for every i and equal lengths.
 * Infinities must match exactly; a NaN anywhere fails. The message names the first offending
 * index and the largest absolute error.
 */
export function assertClose(got, want, { atol = 0, rtol = 0, what = 'values' } = {}) {
  assert.equal(got.length, want.length, `${what}: length ${got.length}, expected ${want.length}`);
  let bad = -1;
  let worst = 0;
  let worstAt = -1;
  for (let i = 0; i < got.length; ++i) {
    const g = Number(got[i]);
    const w = Number(want[i]);
    if (!Number.isFinite(g) || !Number.isFinite(w)) {
      if (!(g === w) && bad < 0) bad = i; // NaN !== NaN, so NaN always fails
      continue;
    }
    const err = Math.abs(g - w);
    if (err > worst) {
      worst = err;
      worstAt = i;
    }
    if (!(err <= atol + rtol * Math.abs(w)) && bad < 0) bad = i;
  }
  if (bad >= 0) {
    assert.fail(`${what}: index ${bad} got ${got[bad]} want ${want[bad]} ` +
      `(largest abs error ${worst} at index ${worstAt}; atol ${atol}, rtol ${rtol})`);
  }
}

/** Requires two float arrays to be identical bit for bit (same length, same bytes). */
export function assertBitIdentical(got, want, what = 'values') {
  assert.equal(got.length, want.length, `${what}: length ${got.length}, expected ${want.length}`);
  assert.equal(got.constructor, want.constructor, `${what}: array types differ`);
  const g = new Uint8Array(got.buffer, got.byteOffset, got.byteLength);
  const w = new Uint8Array(want.buffer, want.byteOffset, want.byteLength);
  for (let i = 0; i < g.length; ++i) {
    if (g[i] !== w[i]) {
      const index = Math.floor(i / got.BYTES_PER_ELEMENT);
      assert.fail(`${what}: differs at index ${index}: got ${got[index]} want ${want[index]}`);
    }
  }
}

/**
 * Requires fn() to throw an Error (name 'Error') whose message matches `pattern`; returns it.
 */
export function assertThrowsMessage(fn, pattern) {
  let error = null;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== null, `expected an Error matching ${pattern}, but nothing was thrown`);
  assert.ok(error instanceof Error, `expected an Error, got ${String(error)}`);
  assert.equal(error.name, 'Error', `expected a plain Error, got ${error.name}: ${error.message}`);
  assert.match(error.message, pattern);
  return error;
}

// ---- golden cases through the API -------------------------------------------------------------

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

// PyTorch parity tolerances, as tests/cpp/test_golden.cpp uses them.
export const OUTPUT_TOL = { atol: 2e-6, rtol: 2e-5 };
export const ATTENTION_TOL = { atol: 1e-6, rtol: 2e-5 };

/** Checks a forward result against a golden case's expected output and attention. */
export function assertMatchesGolden(result, c, label = c.name) {
  assertClose(result.output, c.expectedOutput, { ...OUTPUT_TOL, what: `${label} output` });
  assertClose(result.attention, c.expectedAttention, { ...ATTENTION_TOL, what: `${label} attention` });
}

/** mulberry32: a small seeded generator, uniform in [0, 1), so every run sees the same values. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic pseudo-random floats in [-1, 1) (a small LCG; no dependence on the module). */
export function lcgFloats(count, seed = 1) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}
