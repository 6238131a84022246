// The training benchmark's shared set-up: the standard config, its readable vocabulary, the
// initial parameters and the induction batches, generated once and deterministically, and the
// .safetensors files every peer (JS and Python) reads them from (see tests/bench/README.md).
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../js/support.mjs';

// The standard config of issue 11, item 7 (names as in docs/API.md's createModel).
export const CONFIG = Object.freeze({
  vocab: 32,
  context: 64,
  dModel: 64,
  heads: 4,
  layers: 2,
  positional: 'learned',
  layerNorm: true, // pre-LN in every block and a final LN
  mlp: false,
  tied: false,
  bias: true,
  batch: 32,
});
export const OPTIMIZER = Object.freeze({
  lr: 1e-3,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0.01,
  clip: 1.0,
});
export const LN_EPS = 1e-5;

// 32 readable characters: a person can type a probe. Token id = index in this string.
export const VOCAB_CHARS = 'abcdefghijklmnopqrstuvwxyz .,;!?';

// Induction: 32 random tokens, then the same 32 again. The target at position t is the token at
// t + 1, kept only where t + 1 lies in the repeat after its first token (t = 32 … 62), which an
// induction head can predict from the first half; every other target is -1 (ignored).
export const HALF = CONFIG.context / 2;

// Batches: a pool the steps cycle through (step s uses batch s % BATCHES); the cross-check runs
// steps 0, 1, 2 from the initial parameters.
export const BATCHES = 8;
export const SEED = 1;

/** The parameter names and shapes in PyTorch style (docs/API.md), in a fixed order. */
export function parameterShapes(config = CONFIG) {
  const { vocab: V, context: T, dModel: C, layers: L } = config;
  const shapes = [['embed.weight', [V, C]], ['pos.weight', [T, C]]];
  for (let l = 0; l < L; l++) {
    const p = `layers.${l}.`;
    shapes.push(
      [`${p}ln1.weight`, [C]],
      [`${p}ln1.bias`, [C]],
      [`${p}attn.in_proj_weight`, [3 * C, C]],
      [`${p}attn.in_proj_bias`, [3 * C]],
      [`${p}attn.out_proj.weight`, [C, C]],
      [`${p}attn.out_proj.bias`, [C]],
    );
  }
  shapes.push(['ln_f.weight', [C]], ['ln_f.bias', [C]], ['unembed.weight', [V, C]]);
  return shapes;
}

/**
 * Initial parameters, uniform in ranges that give a trainable start: linear weights ±1/√fan_in,
 * small non-zero biases and LayerNorm shifts (so their gradients are exercised), LayerNorm
 * scales near 1. Returns { [name]: Float32Array }.
 */
export function initialParameters(config = CONFIG, seed = SEED) {
  const random = mulberry32(seed);
  const uniform = (count, lo, hi) => Float32Array.from({ length: count }, () => lo + (hi - lo) * random());
  const params = {};
  for (const [name, shape] of parameterShapes(config)) {
    const count = shape.reduce((a, b) => a * b, 1);
    const fanIn = shape[shape.length - 1];
    let values;
    if (name === 'embed.weight') values = uniform(count, -1, 1);
    else if (name === 'pos.weight') values = uniform(count, -0.5, 0.5);
    else if (name.endsWith('ln1.weight') || name === 'ln_f.weight') values = uniform(count, 0.9, 1.1);
    else if (name.endsWith('.bias')) values = uniform(count, -0.05, 0.05);
    else values = uniform(count, -1 / Math.sqrt(fanIn), 1 / Math.sqrt(fanIn));
    params[name] = values;
  }
  return params;
}

/** `count` induction batches: { ids, targets }, each Int32Array [count, batch, context]. */
export function inductionBatches(count = BATCHES, config = CONFIG, seed = SEED) {
  const random = mulberry32(seed * 7919 + 17);
  const { batch: B, context: T, vocab: V } = config;
  const half = T / 2;
  const ids = new Int32Array(count * B * T);
  const targets = new Int32Array(count * B * T).fill(-1);
  for (let s = 0; s < count * B; s++) {
    const row = s * T;
    for (let t = 0; t < half; t++) {
      const token = Math.floor(random() * V);
      ids[row + t] = token;
      ids[row + half + t] = token;
    }
    for (let t = half; t < T - 1; t++) targets[row + t] = ids[row + t + 1];
  }
  return { ids, targets };
}

// ---- .safetensors ----------------------------------------------------------------------------

const DTYPES = { F32: Float32Array, I32: Int32Array };
const dtypeOf = (array) => Object.keys(DTYPES).find((k) => array instanceof DTYPES[k]);

/** Bytes of a .safetensors file from { name: { shape, data } } (F32 or I32) and string metadata. */
export function encodeSafetensors(tensors, metadata = {}) {
  const header = { __metadata__: metadata };
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype: dtypeOf(data), shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // the data starts 8-byte aligned
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const { data } of Object.values(tensors)) {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    at += data.byteLength;
  }
  return out;
}

/** Parses .safetensors bytes (F32 / I32 only): { tensors: { name: { shape, data } }, metadata }. */
export function decodeSafetensors(bytes) {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [start, end] = entry.data_offsets;
    const raw = bytes.slice(8 + length + start, 8 + length + end); // a copy: aligned
    tensors[name] = { shape: entry.shape, data: new DTYPES[entry.dtype](raw.buffer) };
  }
  return { tensors, metadata: header.__metadata__ ?? {} };
}

// ---- the files every peer reads ---------------------------------------------------------------

/**
 * Writes (or rewrites: a few ms) build/bench/train-params.safetensors (the initial parameters,
 * PyTorch names: what a model's loadSafetensors reads) and build/bench/train-batches.safetensors
 * (ids and targets, I32 [BATCHES, batch, context]; the config and optimizer as JSON metadata).
 * Returns { dir, paramsFile, batchesFile }.
 */
export function writeSetup(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const params = initialParameters();
  const shapes = new Map(parameterShapes());
  const paramTensors = Object.fromEntries(
    Object.entries(params).map(([name, data]) => [name, { shape: shapes.get(name), data }]),
  );
  const { ids, targets } = inductionBatches();
  const shape = [BATCHES, CONFIG.batch, CONFIG.context];
  const metadata = {
    config: JSON.stringify(CONFIG),
    optimizer: JSON.stringify(OPTIMIZER),
    vocab: VOCAB_CHARS,
    lnEps: String(LN_EPS),
  };
  const paramsFile = path.join(dir, 'train-params.safetensors');
  const batchesFile = path.join(dir, 'train-batches.safetensors');
  fs.writeFileSync(paramsFile, encodeSafetensors(paramTensors, metadata));
  fs.writeFileSync(batchesFile, encodeSafetensors({ ids: { shape, data: ids }, targets: { shape, data: targets } }, metadata));
  return { dir, paramsFile, batchesFile };
}

/** Reads the files writeSetup wrote: { params: { name: Float32Array }, ids, targets, config, optimizer }. */
export function readSetup({ paramsFile, batchesFile }) {
  const p = decodeSafetensors(new Uint8Array(fs.readFileSync(paramsFile)));
  const b = decodeSafetensors(new Uint8Array(fs.readFileSync(batchesFile)));
  const params = Object.fromEntries(Object.entries(p.tensors).map(([name, t]) => [name, t.data]));
  return {
    params,
    ids: b.tensors.ids.data,
    targets: b.tensors.targets.data,
    config: JSON.parse(b.metadata.config),
    optimizer: JSON.parse(b.metadata.optimizer),
  };
}

/** Batch `index` (mod the pool) of a setup: { ids, targets } views, [batch * context] each. */
export function batchOf(setup, index) {
  const size = setup.config.batch * setup.config.context;
  const at = (index % BATCHES) * size;
  return { ids: setup.ids.subarray(at, at + size), targets: setup.targets.subarray(at, at + size) };
}
