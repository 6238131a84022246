// Shared helpers for the node:test suites in tests/js/: loading the built module, an
// independent .safetensors reader (and a tiny writer for crafting bad files), and closeness
// checks that report where and by how much two arrays differ. The module's loader, the
// .safetensors reader and writer and the golden cases are scripts/lib/'s (re-exported here),
// shared with scripts/measure/parity-report.mjs.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { goldenForwardOptions, goldenLayer, loadGoldenCase } from '../../scripts/lib/golden.mjs';

export { parseSafetensors, readSafetensors, splitSafetensors, writeSafetensors } from '../../scripts/lib/safetensors.mjs';
export { lcgFloats } from '../../scripts/lib/gpt2-checkpoint.mjs';
export {
  goldenCases, goldenForwardOptions, goldenLayer, goldenPath, loadGoldenCase, loadLens, MODULE_URL,
} from '../../scripts/lib/golden.mjs';

export const SINGLE_FILE_URL = new URL('../../dist/attention-lens.single.mjs', import.meta.url);
// The <attention-lens> element's module (wasm inlined, no trainer or checkpoint import).
export const EMBED_MODULE_URL = new URL('../../build/wasm-release/attention-lens.embed.mjs', import.meta.url);
export const DATA_DIR = fileURLToPath(new URL('../data/', import.meta.url));

// ---- .safetensors -----------------------------------------------------------------------------

/** The raw bytes of a file as a Uint8Array. */
export function readBytes(path) {
  return new Uint8Array(readFileSync(path));
}

// ---- the malformed corpus (scripts/data/make-malformed-corpus.mjs) ---------------------------------

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

// PyTorch parity tolerances, as tests/cpp/test_golden.cpp uses them.
export const OUTPUT_TOL = { atol: 2e-6, rtol: 2e-5 };
export const ATTENTION_TOL = { atol: 1e-6, rtol: 2e-5 };

/** Checks a forward result against a golden case's expected output and attention. */
export function assertMatchesGolden(result, c, label = c.name) {
  assertClose(result.output, c.expectedOutput, { ...OUTPUT_TOL, what: `${label} output` });
  assertClose(result.attention, c.expectedAttention, { ...ATTENTION_TOL, what: `${label} attention` });
}

/**
 * Golden case `name` traced through the same layer built by two modules (`wantLens`, the normal
 * build; `gotLens`, another build of it): `got` matches the golden data (`label` names the build)
 * and its output and attention equal `want`'s bit for bit. `check({ a, b, c, want, got })` adds the
 * caller's own comparisons (a, b: the two layers; c: the case) before both layers are disposed.
 */
export function compareGoldenBuilds(wantLens, gotLens, name, label, check) {
  const c = loadGoldenCase(name);
  const [a, b] = [goldenLayer(wantLens, c), goldenLayer(gotLens, c)];
  try {
    const want = a.forward(c.x, goldenForwardOptions(c, { trace: true }));
    const got = b.forward(c.x, goldenForwardOptions(c, { trace: true }));
    assertMatchesGolden(got, c, `${name} (${label})`);
    assertBitIdentical(got.output, want.output, `${name} output`);
    assertBitIdentical(got.attention, want.attention, `${name} attention`);
    check({ a, b, c, want, got });
  } finally {
    a.dispose();
    b.dispose();
  }
}

/** Runs body(model) on lens's shipped trained model `name`, disposed afterwards; returns what body returns. */
export async function withTrainedModel(lens, name, body) {
  const model = await lens.trainedModel(name);
  try {
    return await body(model);
  } finally {
    model.dispose();
  }
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

/**
 * 1 to 16 random code points from a few ranges, drawn with next() (e.g. mulberry32's): ASCII,
 * white space U+0009–U+000D, Latin-1 and beyond (U+00A0–U+01FF), the BMP below the surrogates,
 * astral planes 1 and 2. For the tokenizer tests' seeded strings.
 */
export function randomCodePoints(next) {
  const length = 1 + Math.floor(next() * 16);
  let text = '';
  for (let i = 0; i < length; ++i) {
    const r = next();
    let cp;
    if (r < 0.4) cp = 0x20 + Math.floor(next() * 0x5f);
    else if (r < 0.55) cp = 0x09 + Math.floor(next() * 5);
    else if (r < 0.7) cp = 0xa0 + Math.floor(next() * 0x160);
    else if (r < 0.9) cp = Math.floor(next() * 0xd800);
    else cp = 0x10000 + Math.floor(next() * 0x20000);
    text += String.fromCodePoint(cp);
  }
  return text;
}

