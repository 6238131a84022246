// Bad input throws a JavaScript Error whose message names the problem, and the module stays
// usable afterwards (docs/javascript-api.md, errors). The tests in this file share one module instance
// and one golden layer on purpose: the last tests check that all the failures before them
// left both intact.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { readFileSync } from 'node:fs';

import {
  assertClose, assertMatchesGolden, assertThrowsMessage, DATA_DIR, goldenForwardOptions, goldenLayer,
  loadGoldenCase, loadLens, MALFORMED_DIR, MODULE_URL, OUTPUT_TOL, readBytes, writeSafetensors,
} from './support.mjs';

const lens = await loadLens();
const golden = loadGoldenCase('causal_bias'); // dModel 32, 4 heads, n 6, causal, bias
const layer = goldenLayer(lens, golden);
const x = golden.x;
const d = golden.dModel;
const valid = goldenForwardOptions(golden);
const withX = (values) => Float32Array.from(x).map((v, i) => values(v, i));

// The golden layer's weights as a state_dict file, and variants of it.
const stateDict = {
  in_proj_weight: { dtype: 'F32', shape: [3 * d, d], data: golden.weights.inProjWeight },
  in_proj_bias: { dtype: 'F32', shape: [3 * d], data: golden.weights.inProjBias },
  'out_proj.weight': { dtype: 'F32', shape: [d, d], data: golden.weights.outProjWeight },
  'out_proj.bias': { dtype: 'F32', shape: [d], data: golden.weights.outProjBias },
};
const goodFile = writeSafetensors(stateDict, { format: 'pt' });
const { 'out_proj.bias': _dropped, ...withoutOutBias } = stateDict;
const badJson = new TextEncoder().encode('{"in_proj_weight": [1, 2 this is not JSON');
const badHeader = new Uint8Array(8 + badJson.length);
new DataView(badHeader.buffer).setBigUint64(0, BigInt(badJson.length), true);
badHeader.set(badJson, 8);

// Layers for the size limits (created here so that their creation is not what is tested).
const oneWide = lens.createLayer({ dModel: 1, heads: 1 });
const eightHeads = lens.createLayer({ dModel: 8, heads: 8 });
const fourHeads = lens.createLayer({ dModel: 4, heads: 4 });
const selfBiasNoBias = lens.createLayer({ dModel: 24, heads: 3, bias: false });
const disposed = lens.createLayer({ dModel: 8, heads: 2 });
disposed.dispose();
disposed.dispose(); // twice is harmless

const CASES = [
  // ---- createLayer ----
  ['heads not dividing dModel', () => lens.createLayer({ dModel: 10, heads: 4 }),
    /heads must divide dModel.*10 is not divisible by 4.*possible head counts: 1, 2, 5, 10/],
  ['dModel 0', () => lens.createLayer({ dModel: 0, heads: 1 }), /dModel must be an integer from 1 .*got 0/],
  ['a negative dModel', () => lens.createLayer({ dModel: -8 }), /dModel must be an integer.*got -8/],
  ['a non-integer heads', () => lens.createLayer({ heads: 2.5 }), /heads must be an integer.*got 2\.5/],
  ['a NaN seed', () => lens.createLayer({ seed: NaN }), /seed must be an integer.*got NaN/],
  ['a negative headDim', () => lens.createLayer({ headDim: -1 }), /headDim must be an integer.*got -1/],
  ['a dModel given as a string', () => lens.createLayer({ dModel: '8' }), /dModel must be an integer.*got "8"/],
  ['dModel above the core limit', () => lens.createLayer({ dModel: 5000, heads: 1 }),
    /dModel must be between 1 and 4096, got 5000/],
  ['heads above the core limit', () => lens.createLayer({ dModel: 512, heads: 512 }),
    /heads must be between 1 and 256, got 512/],
  ['headDim above the core limit', () => lens.createLayer({ dModel: 8, heads: 2, headDim: 5000 }),
    /headDim must be at most 4096, got 5000/],
  ['an unknown config key', () => lens.createLayer({ dModle: 8 }),
    /unknown createLayer options key 'dModle'; expected one of: dModel/],
  ['an unknown positional', () => lens.createLayer({ positional: 'fourier' }),
    /unknown positional encoding 'fourier': expected 'none', 'sinusoidal'/],
  ['RoPE with an odd d_k', () => lens.createLayer({ dModel: 9, heads: 3, positional: 'rope' }),
    /RoPE .*d_k must be even; d_k = 3/],
  ['a non-boolean bias', () => lens.createLayer({ bias: 'yes' }), /bias must be true or false, got "yes"/],
  ['a config that is not an object', () => lens.createLayer(null), /createLayer expects an options object, got null/],
  // ---- forward: options and shapes ----
  ['an unknown mask', () => layer.forward(x, { ...valid, mask: 'diagonal' }),
    /unknown mask 'diagonal': expected 'none', 'causal', 'sliding-window' or 'prefix-lm'/],
  ['an unknown forward option', () => layer.forward(x, { ...valid, causal: true }),
    /unknown forward options key 'causal'/],
  ['x of the wrong length', () => layer.forward(x.subarray(1), valid),
    /x has 191 values, expected n \* dModel = 6 \* 32 = 192/],
  ['n = 0', () => layer.forward(x, { ...valid, n: 0 }), /n must be at least 1 .*got 0/],
  ['a negative n', () => layer.forward(x, { ...valid, n: -6 }), /n must be an integer.*got -6/],
  ['a non-integer n', () => layer.forward(x, { ...valid, n: 1.5 }), /n must be an integer.*got 1\.5/],
  ['a missing x', () => layer.forward(undefined, valid), /x is required/],
  ['x that is not numbers', () => layer.forward('abc', valid), /x must be a Float32Array or an array of numbers, got "abc"/],
  ['kv of the wrong length', () => layer.forward(x, { ...valid, kv: new Float32Array(3 * d - 1), kvN: 3 }),
    /kv has 95 values, expected kvN \* dModel = 3 \* 32 = 96/],
  ['kvN = 0 with a kv', () => layer.forward(x, { ...valid, kv: new Float32Array(d), kvN: 0 }),
    /kvN must be at least 1 for cross-attention, got 0/],
  ['keyPadding of the wrong length', () => layer.forward(x, { ...valid, keyPadding: [0, 0, 1] }),
    /keyPadding has 3 entries, expected one per key: 6/],
  ['keyPadding that is not flags', () => layer.forward(x, { ...valid, keyPadding: 'yes' }),
    /keyPadding must be a Uint8Array or an array of 0\/1 flags/],
  ['cellMask of the wrong length', () => layer.forward(x, { ...valid, cellMask: new Uint8Array(35) }),
    /cell mask has 35 entries, expected n \* kvN = 6 \* 6 = 36/],
  ['sliding-window without window', () => layer.forward(x, { ...valid, mask: 'sliding-window' }),
    /mask 'sliding-window' needs window >= 1/],
  ['a negative window', () => layer.forward(x, { ...valid, mask: 'sliding-window', window: -1 }),
    /window must be an integer.*got -1/],
  ['a non-boolean weights option', () => layer.forward(x, { ...valid, weights: 'no' }),
    /weights must be true or false, got "no"/],
  ['non-finite x (NaN)', () => layer.forward(withX((v, i) => (i === 7 ? NaN : v)), valid),
    /x\[7\] is NaN: values must be finite/],
  ['non-finite kv (Infinity)', () => layer.forward(x, { ...valid, kv: new Float32Array(d).fill(Infinity), kvN: 1 }),
    /kv\[0\] is infinite: values must be finite/],
  ['finite x too large for float32', () => layer.forward(withX(() => 1e30), valid),
    /values too large for float32: the attention scores Q·Kᵀ could reach [\d.e+]+, more than the limit of 1e\+37/],
  // ---- forward: too large ----
  ['n above the token limit', () => oneWide.forward(new Float32Array(100000), { n: 100000 }),
    /n = 100000 exceeds the limit of 65536 tokens/],
  ['kvN above the token limit', () => oneWide.forward(new Float32Array(4), { n: 4, kv: new Float32Array(70000), kvN: 70000 }),
    /kvN = 70000 exceeds the limit of 65536 tokens/],
  ['n · kvN above the score limit', () => oneWide.forward(new Float32Array(10000), { n: 10000 }),
    /n \* kvN = 100000000 attention scores per head exceed the limit of 67108864/],
  ['heads · n · kvN above the weights limit', () => eightHeads.forward(new Float32Array(8 * 4096), { n: 4096 }),
    /heads \* n \* kvN = 134217728 attention weights exceed the limit of 67108864; pass weights: false/],
  ['a trace above the trace limit', () => fourHeads.forward(new Float32Array(4 * 1100), { n: 1100, trace: true }),
    /a trace of heads \* n \* kvN = 4840000 cells per step exceeds the limit of 4194304.*trace: false/],
  // ---- weights ----
  ['non-finite weights (NaN)', () => layer.setWeights({ ...golden.weights,
    inProjWeight: Float32Array.from(golden.weights.inProjWeight, (v, i) => (i === 5 ? NaN : v)) }),
  /in_proj_weight\[5\] is NaN: values must be finite/],
  ['non-finite weights (Infinity)', () => layer.setWeights({ ...golden.weights,
    outProjBias: new Float32Array(d).fill(-Infinity) }), /out_proj\.bias\[0\] is infinite/],
  ['weights of the wrong length', () => layer.setWeights({ ...golden.weights, inProjWeight: new Float32Array(10) }),
    /in_proj_weight has 10 values, expected \[96, 32\] = 3072/],
  ['out_proj.weight of the wrong length', () => layer.setWeights({ ...golden.weights, outProjWeight: new Float32Array(d * d + 1) }),
    /out_proj\.weight has 1025 values, expected \[32, 32\] = 1024/],
  ['missing weights', () => layer.setWeights({ inProjWeight: golden.weights.inProjWeight }),
    /outProjWeight is required/],
  ['a bias for a layer without bias', () => selfBiasNoBias.setWeights({
    inProjWeight: new Float32Array(72 * 24), outProjWeight: new Float32Array(24 * 24), inProjBias: new Float32Array(72) }),
  /in_proj_bias was given, but the layer was created with bias: false/],
  ['an unknown weights key', () => layer.setWeights({ ...golden.weights, outBias: [] }), /unknown setWeights key 'outBias'/],
  // ---- .safetensors ----
  ['a file too short for a header length', () => layer.loadSafetensors(goodFile.slice(0, 5)),
    /safetensors: file is 5 bytes long, too short for the 8-byte header length/],
  ['a file truncated inside its header', () => layer.loadSafetensors(goodFile.slice(0, 60)),
    /safetensors: header length says \d+ bytes but the file has only 52 after the length field/],
  ['a file truncated inside its data', () => layer.loadSafetensors(goodFile.slice(0, goodFile.length - 1)),
    /safetensors: tensor 'out_proj\.bias' has data_offsets \[\d+, \d+\] past the end of the data buffer/],
  ['a garbage header', () => layer.loadSafetensors(badHeader), /safetensors: invalid JSON header at byte \d+/],
  ['random bytes', () => layer.loadSafetensors(new Uint8Array(64).map((_, i) => (i * 37 + 11) & 255)),
    /safetensors: header length says \d+ bytes but the file has only 56/],
  ['an extra tensor', () => layer.loadSafetensors(writeSafetensors({ ...stateDict,
    'encoder.weight': { dtype: 'F32', shape: [2], data: new Float32Array(2) } })),
  /unexpected tensor 'encoder\.weight' in the weights file.*takes exactly: in_proj_weight, in_proj_bias, out_proj\.weight, out_proj\.bias/],
  ['a missing tensor', () => layer.loadSafetensors(writeSafetensors(withoutOutBias)),
    /the weights file has no tensor 'out_proj\.bias'/],
  ['a PyTorch file with biases for a layer without', () => selfBiasNoBias.loadSafetensors(
    readBytes(`${DATA_DIR}golden/self_bias.weights.safetensors`)), /unexpected tensor 'in_proj_bias'.*bias: false/],
  ['a PyTorch file of another shape', () => layer.loadSafetensors(
    readBytes(`${DATA_DIR}golden/self_bias.weights.safetensors`)),
  /tensor 'in_proj_weight' has shape \[72, 24\], expected \[96, 32\] for dModel 32 and 4 heads/],
  ['a tensor of the wrong dtype', () => layer.loadSafetensors(writeSafetensors({ ...stateDict,
    'out_proj.bias': { dtype: 'F64', shape: [d], data: new Float64Array(d) } })),
  /safetensors: tensor 'out_proj\.bias' is F64, expected F32/],
  ['a string instead of bytes', () => layer.loadSafetensors('weights.safetensors'),
    /loadSafetensors expects a Uint8Array or ArrayBuffer, got "weights\.safetensors"/],
  // ---- a disposed layer ----
  ['forward after dispose()', () => disposed.forward(new Float32Array(16), { n: 2 }), /this layer was disposed/],
  ['setWeights after dispose()', () => disposed.setWeights({ inProjWeight: [] }), /this layer was disposed/],
  ['getWeights after dispose()', () => disposed.getWeights(), /this layer was disposed/],
  ['loadSafetensors after dispose()', () => disposed.loadSafetensors(goodFile), /this layer was disposed/],
  ['saveSafetensors after dispose()', () => disposed.saveSafetensors(), /this layer was disposed/],
  ['embed after dispose()', () => disposed.embed([1]), /this layer was disposed/],
  ['explain after dispose()', () => disposed.explain({ step: 'scores', head: 0, row: 0, col: 0 }),
    /this layer was disposed/],
  // ---- tokenizer, embeddings, generator ----
  ['a token id outside the vocabulary', () => layer.embed([3, 70000]),
    /token id 70000 at position 1 is outside the vocabulary \[0, 65536\)/],
  ['an unknown tokenizer mode', () => lens.tokenize('x', { mode: 'bpe' }), /unknown tokenizer 'bpe': expected 'word' or 'char'/],
  ['tokenizing a non-string', () => lens.tokenize(5), /text must be a string, got 5/],
  ['a negative numpyRandn seed', () => lens.numpyRandn(-1, 5), /seed must be an integer from 0 to 4294967295, got -1/],
  ['a non-integer numpyRandn count', () => lens.numpyRandn(1, 2.5), /count must be an integer.*got 2\.5/],
];

for (const [what, fn, pattern] of CASES) {
  test(`${what} throws an Error naming the problem`, () => {
    assertThrowsMessage(fn, pattern);
  });
}

test('models and trainers: a config out of bounds, another config\'s checkpoint, a diverging lr', () => {
  assertThrowsMessage(() => lens.createModel({ vocab: 28, layers: 9 }), /layers must be between 1 and 4, got 9/);
  assertThrowsMessage(() => lens.createModel({ vocab: 1 }), /vocab must be between 2 and 512, got 1/);
  assertThrowsMessage(() => lens.createModel({ context: 2000 }), /context must be between 1 and 1024, got 2000/);
  const model = lens.createModel({ vocab: 28, context: 12, dModel: 16, heads: 2, layers: 1, seed: 2 });
  const wider = lens.createModel({ vocab: 28, context: 12, dModel: 32, heads: 2, layers: 1 });
  assertThrowsMessage(() => model.loadSafetensors(wider.saveSafetensors()),
    /the checkpoint's tensor 'embed\.weight' has shape \[28, 32\], this model needs \[28, 16\] \(another config\?\)/);
  assertThrowsMessage(() => model.loadSafetensors(goodFile), /tensor 'in_proj_weight' .* is not a parameter of this model/);
  const trainer = lens.createTrainer(model, { task: 'copy', lr: 1e30, clip: 0, batch: 4, heldOut: 8 });
  assertThrowsMessage(() => trainer.step(50), /^diverged at step \d+: .*; lower the learning rate/);
  const before = model.parameters();
  assert.ok(Object.values(before).every((v) => v.every(Number.isFinite)), 'the last good weights are finite');
  assertThrowsMessage(() => trainer.step(50), /diverged at step/);
  for (const [name, values] of Object.entries(model.parameters())) {
    assert.ok(values.every(Number.isFinite), `${name}: finite after a second divergence`);
  }
  assert.equal(model.forward(Int32Array.from([0, 1, 26, 0, 1])).logits.length, 5 * 28);
  wider.dispose();
  model.dispose();
});

test('after every failure above, the module and the golden layer still give PyTorch\'s answers', () => {
  // Failed setWeights / loadSafetensors calls left the weights as they were.
  assertMatchesGolden(layer.forward(x, valid), golden, 'causal_bias after the errors');
  // A fresh layer works as well.
  const fresh = goldenLayer(lens, golden);
  try {
    assertMatchesGolden(fresh.forward(x, valid), golden, 'causal_bias in a new layer');
  } finally {
    fresh.dispose();
  }
  // And the layers used for the size limits are usable at sensible sizes.
  assert.equal(oneWide.forward(new Float32Array(100).fill(1), { n: 100 }).output.length, 100);
  assert.equal(eightHeads.forward(new Float32Array(8 * 64), { n: 64 }).attention.length, 8 * 64 * 64);
});

// Every kind of bad input the API must refuse (issue 5), by the CASES that exercise it.
const KINDS = [
  ['n = 0', /^n = 0$/],
  ['n beyond the memory budget', /^n above the token limit$/],
  ['kvN beyond the memory budget', /^kvN above the token limit$/],
  ['n · kvN beyond the memory budget', /score limit|weights limit|trace limit/],
  ['heads not dividing dModel', /^heads not dividing dModel$/],
  ['an array of the wrong length', /of the wrong length$/],
  ['non-finite inputs', /^non-finite (x|kv)/],
  ['non-finite weights', /^non-finite weights/],
  ['inputs too large for float32', /too large for float32/],
  ['a key-padding vector of the wrong length', /^keyPadding of the wrong length$/],
  ['an unknown mask name', /^an unknown mask$/],
  ['an unknown encoding name', /^an unknown positional$/],
  ['a malformed or mismatched file', /file|header|bytes|tensor/],
  ['a layer used after dispose()', /after dispose\(\)$/],
];

test('1000 invalid calls of every kind, each with its message, then a valid one: still correct', () => {
  for (const [kind, names] of KINDS) {
    assert.ok(CASES.some(([what]) => names.test(what)), `the mix has a case of ${kind}`);
  }
  for (let i = 0; i < 1000; ++i) {
    const [, fn, pattern] = CASES[i % CASES.length]; // all of them, 13 or 14 times each
    assertThrowsMessage(fn, pattern);
  }
  assertMatchesGolden(layer.forward(x, valid), golden, 'causal_bias after 1000 invalid calls');
  assertMatchesGolden(layer.forward(x, { ...valid, trace: true }), golden, 'causal_bias traced');
  assertClose(layer.forward(x, { ...valid, weights: false }).output, golden.expectedOutput,
    { ...OUTPUT_TOL, what: 'causal_bias output, weights: false' });
});

// ---- the limits docs/javascript-api.md states --------------------------------------------------

/** A .safetensors file whose header is `header` (no data). */
function headerOnly(header) {
  const json = new TextEncoder().encode(header);
  const bytes = new Uint8Array(8 + json.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  return bytes;
}

test('docs/javascript-api.md states exactly the limits the core enforces', () => {
  const readme = readFileSync(new URL('../../docs/javascript-api.md', import.meta.url), 'utf8');
  const start = readme.indexOf('**Limits (the memory budget of one call).**');
  assert.ok(start >= 0, 'docs/javascript-api.md has a limits section');
  const section = readme.slice(start, readme.indexOf('The wasm heap starts', start));
  const stated = new Set(section.match(/\d+(?:\.\d+)?(?:e[+-]?\d+)?/g).map(Number));
  const tensors = Array.from({ length: 1025 }, (_, i) => `"t${i}":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`);
  const limits = [
    ['dModel', () => lens.createLayer({ dModel: 5000, heads: 1 }), /between 1 and (\d+)/],
    ['headDim', () => lens.createLayer({ dModel: 8, heads: 2, headDim: 5000 }), /at most (\d+)/],
    ['heads', () => lens.createLayer({ dModel: 512, heads: 512 }), /between 1 and (\d+)/],
    ['n', () => oneWide.forward(new Float32Array(100000), { n: 100000 }), /limit of (\d+) tokens/],
    ['kvN', () => oneWide.forward(new Float32Array(4), { n: 4, kv: new Float32Array(70000), kvN: 70000 }),
      /limit of (\d+) tokens/],
    ['n · kvN', () => oneWide.forward(new Float32Array(10000), { n: 10000 }), /limit of (\d+)/],
    ['heads · n · kvN', () => eightHeads.forward(new Float32Array(8 * 4096), { n: 4096 }), /limit of (\d+)/],
    ['trace', () => fourHeads.forward(new Float32Array(4 * 1100), { n: 1100, trace: true }), /limit of (\d+)/],
    ['preview side', () => fourHeads.forward(new Float32Array(4 * 4), { n: 4, preview: 70000 }), /at most (\d+) cells/],
    ['preview cells', () => eightHeads.forward(new Float32Array(8 * 4096), { n: 4096, weights: false, preview: 4096 }),
      /limit of (\d+)/],
    ['float32', () => layer.forward(withX(() => 1e30), valid), /limit of ([\d.e+]+)/],
    ['file bytes', () => layer.loadSafetensors(readBytes(`${MALFORMED_DIR}shape-over-size-limit.safetensors`)),
      /limit of (\d+) bytes/],
    ['header bytes', () => layer.loadSafetensors(headerOnly(`{}${' '.repeat(1 << 20)}`)), /limit of (\d+) bytes/],
    ['tensors', () => layer.loadSafetensors(headerOnly(`{${tensors.join(',')}}`)), /more than (\d+) tensors/],
    ['rank', () => layer.loadSafetensors(readBytes(`${MALFORMED_DIR}shape-rank-9.safetensors`)), /limit of (\d+)/],
    ['name bytes', () => layer.loadSafetensors(readBytes(`${MALFORMED_DIR}name-too-long.safetensors`)),
      /limit of (\d+) bytes/],
  ];
  for (const [what, fn, pattern] of limits) {
    const limit = Number(assertThrowsMessage(fn, pattern).message.match(pattern)[1]);
    assert.ok(stated.has(limit), `docs/javascript-api.md states the ${what} limit, ${limit}`);
  }
  assertMatchesGolden(layer.forward(x, valid), golden, 'causal_bias after the limits');
});

// ---- sizes that wrap 32-bit arithmetic, and sources that are not there -------------------------

test('n · kvN of 2^32 or more is rejected with the size-limit message, not a wasm trap',
  async () => {
    // A module of its own: after the trap every later call on that instance fails too.
    const { loadAttentionLens } = await import(MODULE_URL.href);
    const own = await loadAttentionLens();
    const tiny = own.createLayer({ dModel: 1, heads: 1 });
    assertThrowsMessage(() => tiny.forward(new Float32Array(65536), { n: 65536 }),
      /n \* kvN = \d+ attention scores per head exceed the limit of 67108864/);
    const ok = own.createLayer({ dModel: 8, heads: 2 });
    assert.equal(ok.forward(new Float32Array(16), { n: 2 }).output.length, 16);
  });

test('an empty kv is an error, not a silent switch to self-attention',
  () => {
    assertThrowsMessage(() => layer.forward(x, { ...valid, kv: new Float32Array(0), kvN: 3 }),
      /kv has 0 values, expected kvN \* dModel/);
    assertThrowsMessage(() => layer.forward(x, { ...valid, kv: new Float32Array(0) }),
      /kvN must be at least 1 for cross-attention/);
    assertThrowsMessage(() => layer.forward(x, { ...valid, kvN: 3 }), /kvN was given without kv/);
  });

test('arrays of the wrong kind and bad token ids get readable errors', () => {
  assertThrowsMessage(() => layer.forward(new BigInt64Array(4)), /x must be a Float32Array/);
  assertThrowsMessage(() => layer.forward(new DataView(new ArrayBuffer(8))), /a DataView of 8 bytes/);
  assertThrowsMessage(() => layer.embed([1.7]), /ids\[0\] must be an integer from 0 to 4294967295, got 1.7/);
  assertThrowsMessage(() => layer.embed([3, -1]), /ids\[1\] must be an integer/);
});
