// GGUF (v3) files of SmolLM2-shaped Llama models from seeded random weights, for the generation bench
// against wllama (wllama-bench.mjs) and its test (tests/js/gguf-writer.test.mjs), and of a
// Qwen2.5-1.5B-shaped one for the page's keystroke measurement (scripts/measure/measure-model-page.mjs
// --gguf 1.5b): the tensors as
// llama.cpp's converter names them, each format's types chosen by llama.cpp's rules
// (src/llama-quant.cpp: llama_tensor_get_type, tensor_type_fallback), the quantizers following
// ggml's quantize_row_*_ref (ggml/src/ggml-quants.c) in float32 arithmetic, and a byte-level BPE
// vocabulary (tokenizer.ggml.model 'gpt2', pre-tokenizer 'gpt-2') whose every token decodes to
// ASCII, so any greedy output is valid UTF-8 (wllama's completion fails on invalid UTF-8).
//
// Every quantizer returns its blocks and its own reconstruction: the values its chosen scales and
// quants stand for, computed as ggml's dequantize_row_* computes them (the test checks that an
// independent dequantizer of the blocks gives these bits).
//
// Formats (llama.cpp's file types): F32; F16 (2-D weights, norms F32); Q8_0; Q4_0; Q4_K_M (the
// mix: Q4_K, attn_v and ffn_down Q6_K on use_more_bits layers, the tied embedding Q6_K; rows whose
// width is not a multiple of 256 fall back: Q4_K → Q5_0, Q6_K → Q8_0 — SmolLM2's d_model 576 and 960
// are such widths, so its Q4_K_M is mostly Q5_0 and Q8_0, with K-quants in ffn_down only; the
// 1.5B shape's 1536 and 8960 are whole 256-blocks: real Q4_K and Q6_K throughout).
//
// A tensor is generated, quantized and written a few million values at a time (its seeded stream
// continued chunk to chunk: the same values as whole), so writing a 1 GB file holds tens of MB.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { concatArrays } from './bytes.mjs';

const F = Math.fround;

// ---- the shapes --------------------------------------------------------------------------------

// HuggingFaceTB/SmolLM2-135M and -360M's config.json (hidden_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, intermediate_size, vocab_size, rope_theta, rms_norm_eps,
// max_position_embeddings; tie_word_embeddings true).
export const SHAPES = {
  '135m': { name: 'SmolLM2-135M', hidden: 576, layers: 30, heads: 9, kvHeads: 3, ff: 1536, vocab: 49152,
    ropeTheta: 100000, eps: 1e-5, context: 8192 },
  '360m': { name: 'SmolLM2-360M', hidden: 960, layers: 32, heads: 15, kvHeads: 5, ff: 2560, vocab: 49152,
    ropeTheta: 100000, eps: 1e-5, context: 8192 },
  // Qwen/Qwen2.5-1.5B's config.json sizes (tied embeddings), written as a `llama` file: Qwen2's
  // q/k/v biases are left out, so it is "Qwen2.5-1.5B-shaped", not Qwen2. Q4_K_M only (about
  // 1 GB; the page's 1.5 B-parameter measurement), not one of the wllama bench's shapes.
  '1.5b': { name: 'Qwen2.5-1.5B', hidden: 1536, layers: 28, heads: 12, kvHeads: 2, ff: 8960, vocab: 151936,
    ropeTheta: 1000000, eps: 1e-6, context: 32768, formats: ['Q4_K_M'] },
};

// The bench's formats; writeModel also writes 'BF16' (a model's float matrices as BF16, for tests).
export const FORMATS = ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K_M'];
// general.file_type (llama.cpp's llama_ftype) of each format.
const FILE_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 7, Q4_K_M: 15, BF16: 32 };

// ggml type ids, values per block and bytes per block (ggml.h, ggml.c's type_traits).
export const GGML_TYPES = {
  F32: { id: 0, block: 1, bytes: 4 },
  F16: { id: 1, block: 1, bytes: 2 },
  BF16: { id: 30, block: 1, bytes: 2 },
  Q4_0: { id: 2, block: 32, bytes: 18 },
  Q5_0: { id: 6, block: 32, bytes: 22 },
  Q8_0: { id: 8, block: 32, bytes: 34 },
  Q4_K: { id: 12, block: 256, bytes: 144 },
  Q6_K: { id: 14, block: 256, bytes: 210 },
};
export const GGML_TYPE_NAMES = Object.fromEntries(Object.entries(GGML_TYPES).map(([name, t]) => [t.id, name]));

/** Bytes of `count` values of ggml type `type`. */
export const tensorBytes = (type, count) => (count / GGML_TYPES[type].block) * GGML_TYPES[type].bytes;

// llama.cpp's use_more_bits(i_layer, n_layers) (integer division as in C).
const useMoreBits = (i, n) => i < Math.trunc(n / 8) || i >= Math.trunc((7 * n) / 8) || (i - Math.trunc(n / 8)) % 3 === 2;

// tensor_type_fallback: a type whose block does not divide the row width (ne[0]) falls back.
const FALLBACK = { Q4_K: 'Q5_0', Q6_K: 'Q8_0' };
function fallback(type, width) {
  if (width % GGML_TYPES[type].block === 0) return type;
  const next = FALLBACK[type];
  if (!next || width % GGML_TYPES[next].block !== 0) throw new Error(`no fallback for ${type} at width ${width}`);
  return next;
}

/**
 * The model's tensors in llama.cpp's order with their GGUF names, dims (ne[0] first: the row width
 * first) and, for `format`, their ggml types: [{ name, dims, type, norm }].
 */
export function modelTensors(shape, format) {
  const { hidden, layers, heads, kvHeads, ff, vocab } = shape;
  const kv = (hidden / heads) * kvHeads;
  const list = [{ name: 'token_embd.weight', dims: [hidden, vocab], role: 'embd' }];
  for (let i = 0; i < layers; ++i) {
    const b = `blk.${i}.`;
    list.push({ name: `${b}attn_norm.weight`, dims: [hidden], norm: true },
      { name: `${b}attn_q.weight`, dims: [hidden, hidden] },
      { name: `${b}attn_k.weight`, dims: [hidden, kv] },
      { name: `${b}attn_v.weight`, dims: [hidden, kv], role: 'attn_v', layer: i },
      { name: `${b}attn_output.weight`, dims: [hidden, hidden] },
      { name: `${b}ffn_norm.weight`, dims: [hidden], norm: true },
      { name: `${b}ffn_gate.weight`, dims: [hidden, ff] },
      { name: `${b}ffn_up.weight`, dims: [hidden, ff] },
      { name: `${b}ffn_down.weight`, dims: [ff, hidden], role: 'ffn_down', layer: i });
  }
  list.push({ name: 'output_norm.weight', dims: [hidden], norm: true });
  return list.map((t) => ({ ...t, type: t.norm ? 'F32' : weightType(t, format, layers) }));
}

// llama_tensor_get_type for a llama model with tied embeddings (no output.weight), then the fallback.
function weightType(tensor, format, layers) {
  if (format === 'F32' || format === 'F16' || format === 'BF16') return format;
  const width = tensor.dims[0];
  if (tensor.role === 'embd') {  // tied: quantized as the output tensor
    const base = format === 'Q4_K_M' ? 'Q4_K' : format;
    if (width % GGML_TYPES[base].block !== 0) return 'Q8_0';
    return fallback(format === 'Q8_0' ? 'Q8_0' : 'Q6_K', width);
  }
  if (format !== 'Q4_K_M') return format;
  if ((tensor.role === 'attn_v' || tensor.role === 'ffn_down') && useMoreBits(tensor.layer, layers)) return fallback('Q6_K', width);
  return fallback('Q4_K', width);
}

// ---- seeded random values ----------------------------------------------------------------------

/** A 32-bit FNV-1a hash of a string (a tensor's seed from its name). */
function hash(text, seed) {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; ++i) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * A seeded stream of values N(mean, std) rounded to float32 (xorshift128, Box–Muller; the first 16
 * draws warm the generator up): take(count) continues where the last take stopped, so a tensor
 * taken in chunks has the values it has taken whole.
 */
export class NormalStream {
  constructor(seed, mean, std) {
    Object.assign(this, { a: seed | 1, b: 0x9e3779b9 | 0, c: 0x243f6a88 | 0, d: 0xb7e15162 | 0, mean, std, spare: null });
    for (let i = 0; i < 16; ++i) this.#draw();
  }

  #draw() {
    const t = this.a ^ (this.a << 11);
    this.a = this.b; this.b = this.c; this.c = this.d;
    this.d = this.d ^ (this.d >>> 19) ^ t ^ (t >>> 8);
    return ((this.d >>> 0) + 0.5) / 4294967296;
  }

  /** The next `count` values, into `out` (a Float32Array of at least `count`) or a new array. */
  take(count, out = new Float32Array(count)) {
    const { mean, std } = this;
    let i = 0;
    if (this.spare !== null && count > 0) {  // the second value of a pair the last take stopped inside
      out[i++] = this.spare;
      this.spare = null;
    }
    for (; i < count; i += 2) {
      const u1 = this.#draw();
      const u2 = this.#draw();
      const r = std * Math.sqrt(-2 * Math.log(u1));
      const theta = 2 * Math.PI * u2;
      out[i] = mean + r * Math.cos(theta);
      if (i + 1 < count) out[i + 1] = mean + r * Math.sin(theta);
      else this.spare = mean + r * Math.sin(theta);
    }
    return out.length === count ? out : out.subarray(0, count);
  }
}

/** `count` values N(mean, std) rounded to float32 from a seed: deterministic, so every format's file quantizes the same values. */
export const normalValues = (count, seed, mean, std) => new NormalStream(seed, mean, std).take(count);

/** A tensor's stream of values (row-major, ne[0] fastest): weights N(0, 0.02), norms N(1, 0.02). */
const tensorStream = (tensor, seed) => new NormalStream(hash(tensor.name, seed), tensor.norm ? 1 : 0, 0.02);

/** A tensor's values, whole. */
export function tensorValues(tensor, seed) {
  return tensorStream(tensor, seed).take(tensor.dims.reduce((a, b) => a * b, 1));
}

// ---- float16 -----------------------------------------------------------------------------------

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** float32 → float16 bits, rounded to nearest even (ggml's GGML_FP32_TO_FP16), subnormals and inf included. */
export function f16Bits(x) {
  f32Scratch[0] = x;
  const bits = u32Scratch[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 255) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {  // a float16 subnormal (or zero): value / 2^-24, rounded
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;  // a carry rounds up into the exponent (or inf)
  return sign | half;
}

// Every float16's value, by its bits.
const F16_VALUES = new Float32Array(65536);
for (let h = 0; h < 65536; ++h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >>> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  F16_VALUES[h] = exponent === 0 ? sign * mantissa * 2 ** -24
    : exponent === 31 ? (mantissa ? NaN : sign * Infinity) : sign * (1024 + mantissa) * 2 ** (exponent - 25);
}

/** float16 bits → their value (exact in float32). */
export const f16Value = (h) => F16_VALUES[h];

// ---- the quantizers (ggml's quantize_row_*_ref, float32 arithmetic) -------------------------------

// ggml's nearest_int: round to nearest, ties to even (float32 add of 1.5 · 2^23).
const nearestInt = (x) => F(x + 12582912) - 12582912;
// C's roundf: halves away from zero.
const roundf = (x) => (x < 0 ? -Math.round(-x) : Math.round(x));

/**
 * Quantizes `values` (a whole number of blocks) to ggml type `type`:
 * { bytes: Uint8Array, values: Float32Array (the reconstruction) }.
 */
export function quantize(type, values) {
  const t = GGML_TYPES[type];
  if (values.length % t.block) throw new Error(`${values.length} values are not whole ${type} blocks`);
  const blocks = values.length / t.block;
  const bytes = new Uint8Array(blocks * t.bytes);
  const out = new Float32Array(values.length);
  if (type === 'F32') {
    out.set(values);
    bytes.set(new Uint8Array(out.buffer));
    return { bytes, values: out };
  }
  const view = new DataView(bytes.buffer);
  if (type === 'F16') {
    const halves = new Uint16Array(bytes.buffer);  // little-endian, as GGUF
    for (let i = 0; i < values.length; ++i) {
      const h = f16Bits(values[i]);
      halves[i] = h;
      out[i] = F16_VALUES[h];
    }
    return { bytes, values: out };
  }
  if (type === 'BF16') {  // a float's top 16 bits, rounded to nearest even (finite values)
    const bits = new Uint32Array(new Float32Array(values).buffer);
    const halves = new Uint16Array(bytes.buffer);
    const outBits = new Uint32Array(out.buffer);
    for (let i = 0; i < values.length; ++i) {
      const h = (bits[i] + 0x7FFF + ((bits[i] >>> 16) & 1)) >>> 16;
      halves[i] = h;
      outBits[i] = h << 16;
    }
    return { bytes, values: out };
  }
  const quantizer = { Q8_0: blockQ8_0, Q4_0: blockQ4_0, Q5_0: blockQ5_0, Q4_K: blockQ4K, Q6_K: blockQ6K }[type];
  if (!quantizer) throw new Error(`no quantizer for ${type}`);
  for (let i = 0; i < blocks; ++i) {
    quantizer(values.subarray(i * t.block, (i + 1) * t.block), view, i * t.bytes, out.subarray(i * t.block, (i + 1) * t.block));
  }
  return { bytes, values: out };
}

// block_q8_0: d (f16), qs[32] (int8). quantize_row_q8_0_ref.
function blockQ8_0(x, view, at, out) {
  let amax = 0;
  for (let j = 0; j < 32; ++j) amax = Math.max(amax, Math.abs(x[j]));
  const d = F(amax / 127);
  const id = d ? F(1 / d) : 0;
  const dh = f16Bits(d);
  const dv = f16Value(dh);
  view.setUint16(at, dh, true);
  for (let j = 0; j < 32; ++j) {
    const q = roundf(F(x[j] * id));
    view.setInt8(at + 2 + j, q);
    out[j] = F(((q << 24) >> 24) * dv);
  }
}

// The value of largest magnitude (the first one, as ggml's strict `<` keeps it), signed.
function signedMax(x) {
  let amax = 0, max = 0;
  for (let j = 0; j < x.length; ++j) {
    if (amax < Math.abs(x[j])) { amax = Math.abs(x[j]); max = x[j]; }
  }
  return max;
}

// block_q4_0: d (f16), qs[16]: value j in the low nibble of byte j, value j + 16 in its high nibble.
function blockQ4_0(x, view, at, out) {
  const d = F(signedMax(x) / -8);
  const id = d ? F(1 / d) : 0;
  const dh = f16Bits(d);
  const dv = f16Value(dh);
  view.setUint16(at, dh, true);
  for (let j = 0; j < 16; ++j) {
    const q0 = Math.min(15, Math.trunc(F(F(x[j] * id) + 8.5)));
    const q1 = Math.min(15, Math.trunc(F(F(x[j + 16] * id) + 8.5)));
    view.setUint8(at + 2 + j, (q0 & 0xff) | ((q1 << 4) & 0xff));
    out[j] = F((q0 - 8) * dv);
    out[j + 16] = F((q1 - 8) * dv);
  }
}

// block_q5_0: d (f16), qh (u32: bit j the fifth bit of value j), qs[16] as q4_0's low four bits.
function blockQ5_0(x, view, at, out) {
  const d = F(signedMax(x) / -16);
  const id = d ? F(1 / d) : 0;
  const dh = f16Bits(d);
  const dv = f16Value(dh);
  view.setUint16(at, dh, true);
  let qh = 0;
  for (let j = 0; j < 16; ++j) {
    const q0 = Math.min(31, Math.trunc(F(F(x[j] * id) + 16.5)));
    const q1 = Math.min(31, Math.trunc(F(F(x[j + 16] * id) + 16.5)));
    view.setUint8(at + 6 + j, (q0 & 0x0f) | ((q1 & 0x0f) << 4));
    qh |= ((q0 & 0x10) >>> 4) << j;
    qh |= ((q1 & 0x10) >>> 4) << (j + 16);
    out[j] = F((q0 - 16) * dv);
    out[j + 16] = F((q1 - 16) * dv);
  }
  view.setUint32(at + 2, qh >>> 0, true);
}

// ggml's make_qkx2_quants: an asymmetric (scale, min) fit of n values to 0..nmax, weighted.
function makeQkx2Quants(n, nmax, x, weights, L, Laux, rmin, rdelta, nstep) {
  let min = x[0], max = x[0];
  let sumW = weights[0];
  let sumX = F(sumW * x[0]);
  for (let i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const w = weights[i];
    sumW = F(sumW + w);
    sumX = F(sumX + F(w * x[i]));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, 0, n);
    return { scale: 0, min: -min };
  }
  let iscale = F(nmax / F(max - min));
  let scale = F(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; ++i) {
    const l = nearestInt(F(iscale * F(x[i] - min)));
    L[i] = Math.max(0, Math.min(nmax, l));
    const diff = F(F(F(scale * L[i]) + min) - x[i]);
    bestError = F(bestError + F(weights[i] * F(diff * diff)));
  }
  for (let is = 0; is <= nstep; ++is) {
    iscale = F(F(F(rmin + F(rdelta * is)) + nmax) / F(max - min));
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; ++i) {
      const l = Math.max(0, Math.min(nmax, nearestInt(F(iscale * F(x[i] - min)))));
      Laux[i] = l;
      const w = weights[i];
      sumL = F(sumL + F(w * l));
      sumL2 = F(sumL2 + F(F(w * l) * l));
      sumXL = F(sumXL + F(F(w * l) * x[i]));
    }
    const D = F(F(sumW * sumL2) - F(sumL * sumL));
    if (D > 0) {
      let thisScale = F(F(F(sumW * sumXL) - F(sumX * sumL)) / D);
      let thisMin = F(F(F(sumL2 * sumX) - F(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = F(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; ++i) {
        const diff = F(F(F(thisScale * Laux[i]) + thisMin) - x[i]);
        curError = F(curError + F(weights[i] * F(diff * diff)));
      }
      if (curError < bestError) {
        for (let i = 0; i < n; ++i) L[i] = Laux[i];
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  return { scale, min: -min };
}

// get_scale_min_k4: sub-block j's six-bit scale and min from the 12 packed bytes.
function scaleMinK4(j, s) {
  if (j < 4) return [s[j] & 63, s[j + 4] & 63];
  return [(s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)];
}

// block_q4_K: d, dmin (f16), scales[12] (eight six-bit scales and mins), qs[128]: each 32 bytes hold
// sub-block 2g in the low nibbles and 2g + 1 in the high nibbles. quantize_row_q4_K_ref.
const q4k = { L: new Uint8Array(256), Laux: new Uint8Array(32), weights: new Float32Array(32),
  scales: new Float32Array(8), mins: new Float32Array(8), packed: new Uint8Array(12) };
function blockQ4K(x, view, at, out) {
  const { L, Laux, weights, scales, mins, packed } = q4k;
  packed.fill(0);
  let maxScale = 0, maxMin = 0;
  for (let j = 0; j < 8; ++j) {
    const xs = x.subarray(32 * j, 32 * j + 32);
    let sumX2 = 0;
    for (let l = 0; l < 32; ++l) sumX2 = F(sumX2 + F(xs[l] * xs[l]));
    const avX = F(Math.sqrt(F(sumX2 / 32)));
    for (let l = 0; l < 32; ++l) weights[l] = F(avX + Math.abs(xs[l]));
    const fit = makeQkx2Quants(32, 15, xs, weights, L.subarray(32 * j, 32 * j + 32), Laux, -1, F(0.1), 20);
    scales[j] = fit.scale;
    mins[j] = fit.min;
    if (scales[j] > maxScale) maxScale = scales[j];
    if (mins[j] > maxMin) maxMin = mins[j];
  }
  const invScale = maxScale > 0 ? F(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? F(63 / maxMin) : 0;
  for (let j = 0; j < 8; ++j) {
    const ls = Math.min(63, nearestInt(F(invScale * scales[j])) & 0xff);
    const lm = Math.min(63, nearestInt(F(invMin * mins[j])) & 0xff);
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      packed[j - 4] |= (ls >> 4) << 6;
      packed[j] |= (lm >> 4) << 6;
    }
  }
  const dh = f16Bits(F(maxScale / 63));
  const dminh = f16Bits(F(maxMin / 63));
  const dv = f16Value(dh), dminv = f16Value(dminh);
  for (let j = 0; j < 8; ++j) {
    const [sc, m] = scaleMinK4(j, packed);
    const d = F(dv * sc);
    if (!d) continue;
    const dm = F(dminv * m);
    for (let i = 0; i < 32; ++i) {
      L[32 * j + i] = Math.max(0, Math.min(15, nearestInt(F(F(x[32 * j + i] + dm) / d))));
    }
  }
  view.setUint16(at, dh, true);
  view.setUint16(at + 2, dminh, true);
  for (let i = 0; i < 12; ++i) view.setUint8(at + 4 + i, packed[i]);
  for (let g = 0; g < 4; ++g) {
    for (let l = 0; l < 32; ++l) view.setUint8(at + 16 + 32 * g + l, L[64 * g + l] | (L[64 * g + l + 32] << 4));
  }
  // dequantize_row_q4_K's arithmetic: d1 = d · sc, m1 = dmin · m, y = d1 · q − m1
  for (let j = 0; j < 8; ++j) {
    const [sc, m] = scaleMinK4(j, packed);
    const d1 = F(dv * sc), m1 = F(dminv * m);
    for (let i = 0; i < 32; ++i) out[32 * j + i] = F(F(d1 * L[32 * j + i]) - m1);
  }
}

// ggml's make_qx_quants with rmse_type 1 and no importance weights: a symmetric scale for n values
// to -nmax..nmax-1, L[i] = q + nmax.
function makeQxQuants(n, nmax, x, L) {
  let max = 0, amax = 0;
  for (let i = 0; i < n; ++i) {
    const ax = Math.abs(x[i]);
    if (ax > amax) { amax = ax; max = x[i]; }
  }
  if (amax < 1e-15) {
    L.fill(0, 0, n);
    return 0;
  }
  const sums = (iscale, store) => {
    let sumlx = 0, suml2 = 0;
    for (let i = 0; i < n; ++i) {
      const l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(F(iscale * x[i]))));
      if (store) L[i] = l + nmax;
      const w = F(x[i] * x[i]);
      sumlx = F(sumlx + F(F(w * x[i]) * l));
      suml2 = F(suml2 + F(F(w * l) * l));
    }
    return [sumlx, suml2];
  };
  let [sumlx, suml2] = sums(F(-nmax / max), true);
  let scale = suml2 ? F(sumlx / suml2) : 0;
  let best = F(scale * sumlx);
  for (let is = -9; is <= 9; ++is) {
    if (is === 0) continue;
    const iscale = F(-F(nmax + F(F(0.1) * is)) / max);
    [sumlx, suml2] = sums(iscale, false);
    if (suml2 > 0 && F(sumlx * sumlx) > F(best * suml2)) {
      sums(iscale, true);
      scale = F(sumlx / suml2);
      best = F(scale * sumlx);
    }
  }
  return scale;
}

// block_q6_K: ql[128] (low four bits), qh[64] (high two bits), scales[16] (int8), d (f16).
// quantize_row_q6_K_ref.
const q6k = { L: new Uint8Array(256), scales: new Float32Array(16), sc: new Int8Array(16) };
function blockQ6K(x, view, at, out) {
  const { L, scales, sc } = q6k;
  sc.fill(0);
  let maxScale = 0, maxAbsScale = 0;
  for (let ib = 0; ib < 16; ++ib) {
    const scale = makeQxQuants(16, 32, x.subarray(16 * ib, 16 * ib + 16), L.subarray(16 * ib, 16 * ib + 16));
    scales[ib] = scale;
    if (Math.abs(scale) > maxAbsScale) { maxAbsScale = Math.abs(scale); maxScale = scale; }
  }
  let dh = 0;
  if (maxAbsScale < 1e-15) {
    L.fill(0);
  } else {
    const iscale = F(-128 / maxScale);
    dh = f16Bits(F(1 / iscale));
    for (let ib = 0; ib < 16; ++ib) sc[ib] = Math.min(127, nearestInt(F(iscale * scales[ib])));
    const dv = f16Value(dh);
    for (let j = 0; j < 16; ++j) {
      const d = F(dv * sc[j]);
      if (!d) continue;
      for (let i = 0; i < 16; ++i) L[16 * j + i] = Math.max(-32, Math.min(31, nearestInt(F(x[16 * j + i] / d)))) + 32;
    }
  }
  for (let half = 0; half < 2; ++half) {
    const base = 128 * half;
    for (let l = 0; l < 32; ++l) {
      const q1 = L[base + l], q2 = L[base + l + 32], q3 = L[base + l + 64], q4 = L[base + l + 96];
      view.setUint8(at + 64 * half + l, (q1 & 0xf) | ((q3 & 0xf) << 4));
      view.setUint8(at + 64 * half + l + 32, (q2 & 0xf) | ((q4 & 0xf) << 4));
      view.setUint8(at + 128 + 32 * half + l, (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
  for (let ib = 0; ib < 16; ++ib) view.setInt8(at + 192 + ib, sc[ib]);
  view.setUint16(at + 208, dh, true);
  // dequantize_row_q6_K's arithmetic: y = d · sc · (q − 32)
  const dv = f16Value(dh);
  for (let i = 0; i < 256; ++i) out[i] = F(F(dv * sc[i >> 4]) * (L[i] - 32));
}

// ---- the tokenizer -----------------------------------------------------------------------------

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
// GPT-2's byte-level alphabet for the bytes used: printable ASCII as itself, space 'Ġ' (U+0120),
// newline 'Ċ' (U+010A), tab 'ĉ' (U+0109).
const SPACE = '\u0120';
export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];

/**
 * A byte-level BPE vocabulary of `size` tokens, every one of them ASCII once decoded: the three
 * SmolLM2 special tokens (control), the printable ASCII characters, space, newline and tab, then
 * merged tokens in merge order: 'Ġ'+letter, letter pairs, 'Ġ'+pair, letter triples, 'Ġ'+triple,
 * 'Ġ'+four letters. { tokens, types (1 normal, 3 control), merges ('a b' strings, rank order) }.
 */
export function vocabulary(size) {
  const tokens = [...SPECIAL_TOKENS];
  for (let c = 0x21; c < 0x7f; ++c) tokens.push(String.fromCharCode(c));
  tokens.push(SPACE, '\u010a', '\u0109');
  const merges = [];
  const add = (left, right) => {
    if (tokens.length >= size) return false;
    tokens.push(left + right);
    merges.push(`${left} ${right}`);
    return true;
  };
  const groups = [
    () => [...LETTERS].map((c) => [SPACE, c]),
    () => [...LETTERS].flatMap((a) => [...LETTERS].map((b) => [a, b])),
    () => [...LETTERS].flatMap((a) => [...LETTERS].map((b) => [SPACE + a, b])),
    () => [...LETTERS].flatMap((a) => [...LETTERS].flatMap((b) => [...LETTERS].map((c) => [a + b, c]))),
    () => [...LETTERS].flatMap((a) => [...LETTERS].flatMap((b) => [...LETTERS].map((c) => [SPACE + a + b, c]))),
    () => [...LETTERS].flatMap((a) => [...LETTERS].flatMap((b) => [...LETTERS].flatMap((c) => [...LETTERS].map((d) => [SPACE + a + b + c, d])))),
  ];
  for (const group of groups) {
    if (tokens.length >= size) break;
    for (const [left, right] of group()) if (!add(left, right)) break;
  }
  if (tokens.length < size) throw new Error(`the vocabulary has at most ${tokens.length} tokens`);
  const types = tokens.map((_, i) => (i < SPECIAL_TOKENS.length ? 3 : 1));
  return { tokens, types, merges };
}

/**
 * A prompt of `count` words ' xy' (two lowercase letters after a space: each one token 'Ġxy' under
 * the gpt-2 pre-tokenizer and these merges), chosen by a seeded LCG among the vocabulary's:
 * { text, ids }.
 */
export function promptText(vocab, count, seed = 7) {
  const index = new Map(vocab.tokens.map((t, i) => [t, i]));
  const words = vocab.tokens.filter((t) => t.length === 3 && t[0] === SPACE && /^[a-z]{2}$/.test(t.slice(1)));
  if (!words.length) throw new Error('the vocabulary has no Ġxy tokens');
  let state = seed >>> 0;
  const chosen = [];
  for (let i = 0; i < count; ++i) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    chosen.push(words[state % words.length]);
  }
  return { text: chosen.map((t) => ` ${t.slice(1)}`).join(''), ids: chosen.map((t) => index.get(t)) };
}

// ---- the file ----------------------------------------------------------------------------------

const GGUF_U32 = 4, GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_I32 = 5;
const ALIGNMENT = 32;

class Bytes {
  constructor() { this.parts = []; this.length = 0; }
  push(buffer) { this.parts.push(buffer); this.length += buffer.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  string(text) { const data = Buffer.from(text, 'utf8'); this.u64(data.length); this.push(data); }
  concat() { return Buffer.concat(this.parts); }
}

/** The metadata key-values of a model of `shape` in `format` ([key, type, value]). */
export function metadata(shape, format) {
  const arch = 'llama';
  const vocab = vocabulary(shape.vocab);
  return [
    ['general.architecture', GGUF_STRING, arch],
    ['general.name', GGUF_STRING, `${shape.name}-shaped random (Attention Lens bench)`],
    ['general.file_type', GGUF_U32, FILE_TYPE[format]],
    [`${arch}.block_count`, GGUF_U32, shape.layers],
    [`${arch}.context_length`, GGUF_U32, shape.context],
    [`${arch}.embedding_length`, GGUF_U32, shape.hidden],
    [`${arch}.feed_forward_length`, GGUF_U32, shape.ff],
    [`${arch}.attention.head_count`, GGUF_U32, shape.heads],
    [`${arch}.attention.head_count_kv`, GGUF_U32, shape.kvHeads],
    [`${arch}.rope.freq_base`, GGUF_F32, shape.ropeTheta],
    [`${arch}.attention.layer_norm_rms_epsilon`, GGUF_F32, shape.eps],
    [`${arch}.rope.dimension_count`, GGUF_U32, shape.hidden / shape.heads],
    [`${arch}.vocab_size`, GGUF_U32, shape.vocab],
    ['tokenizer.ggml.model', GGUF_STRING, 'gpt2'],
    ['tokenizer.ggml.pre', GGUF_STRING, 'gpt-2'],
    ['tokenizer.ggml.tokens', GGUF_ARRAY, [GGUF_STRING, vocab.tokens]],
    ['tokenizer.ggml.token_type', GGUF_ARRAY, [GGUF_I32, vocab.types]],
    ['tokenizer.ggml.merges', GGUF_ARRAY, [GGUF_STRING, vocab.merges]],
    ['tokenizer.ggml.bos_token_id', GGUF_U32, 0],
    ['tokenizer.ggml.eos_token_id', GGUF_U32, 0],
    ['tokenizer.ggml.add_bos_token', GGUF_BOOL, false],
  ];
}

function writeValue(out, type, value) {
  if (type === GGUF_STRING) out.string(value);
  else if (type === GGUF_U32) out.u32(value);
  else if (type === GGUF_I32) out.i32(value);
  else if (type === GGUF_F32) out.f32(value);
  else if (type === GGUF_BOOL) out.push(Buffer.from([value ? 1 : 0]));
  else if (type === GGUF_ARRAY) {
    const [element, items] = value;
    out.u32(element);
    out.u64(items.length);
    for (const item of items) writeValue(out, element, item);
  } else throw new Error(`metadata type ${type}`);
}

/** The header (magic … tensor infos, padded to the alignment) and each tensor's data offset. */
function header(shape, format, tensors) {
  const out = new Bytes();
  out.push(Buffer.from('GGUF'));
  out.u32(3);
  out.u64(tensors.length);
  const kvs = metadata(shape, format);
  out.u64(kvs.length);
  for (const [key, type, value] of kvs) {
    out.string(key);
    out.u32(type);
    writeValue(out, type, value);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    out.string(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(GGML_TYPES[t.type].id);
    out.u64(offset);
    offsets.push(offset);
    offset += Math.ceil(tensorBytes(t.type, t.dims.reduce((a, b) => a * b, 1)) / ALIGNMENT) * ALIGNMENT;
  }
  const bytes = out.concat();
  const padded = Buffer.alloc(Math.ceil(bytes.length / ALIGNMENT) * ALIGNMENT);
  bytes.copy(padded);
  return { bytes: padded, offsets, dataBytes: offset };
}

// Values generated, quantized and written at a time: whole rows, about 4 Mi values (16 MB as float32).
const CHUNK_VALUES = 1 << 22;

/**
 * Writes the model of `shape` (SHAPES' or a small test one) in `format` to `file`, tensor by tensor,
 * each in chunks of whole rows of about `chunkValues` values (the memory held is a chunk's, not a
 * tensor's; the bytes written do not depend on it). onTensor(tensor, { bytes, values }) sees each
 * tensor's blocks and reconstruction whole (the test's hook, for small shapes: it holds the tensor).
 * Returns { tensors (with their types, offsets and bytes), fileBytes, weightBytes }: weightBytes are
 * the bytes of the 2-D weights (what a decode step streams; the tied embedding counted once).
 */
export function writeModel(file, shape, format, { seed = 34, onTensor, chunkValues = CHUNK_VALUES } = {}) {
  const tensors = modelTensors(shape, format);
  const head = header(shape, format, tensors);
  const fd = fs.openSync(file, 'w');
  let weightBytes = 0;
  const scratch = new Float32Array(chunkValues);
  try {
    fs.writeSync(fd, head.bytes);
    let position = head.bytes.length;
    tensors.forEach((t, i) => {
      const count = t.dims.reduce((a, b) => a * b, 1);
      const chunk = Math.max(1, Math.floor(chunkValues / t.dims[0])) * t.dims[0];  // whole rows: whole blocks
      const stream = tensorStream(t, seed);
      const kept = onTensor && { bytes: [], values: [] };
      let at = head.bytes.length + head.offsets[i];
      t.offset = at;
      t.bytes = 0;
      for (let done = 0; done < count; done += chunk) {
        const n = Math.min(chunk, count - done);
        const q = quantize(t.type, stream.take(n, n <= scratch.length ? scratch : new Float32Array(n)));
        fs.writeSync(fd, q.bytes, 0, q.bytes.length, at);
        at += q.bytes.length;
        t.bytes += q.bytes.length;
        kept?.bytes.push(q.bytes);
        kept?.values.push(q.values);
      }
      if (kept) onTensor(t, { bytes: concatArrays(kept.bytes), values: concatArrays(kept.values, Float32Array) });
      if (!t.norm) weightBytes += t.bytes;
      const padded = Math.ceil(t.bytes / ALIGNMENT) * ALIGNMENT;
      if (padded > t.bytes) fs.writeSync(fd, Buffer.alloc(padded - t.bytes), 0, padded - t.bytes, at);
      position = t.offset + padded;
    });
    return { tensors, fileBytes: position, weightBytes };
  } finally {
    fs.closeSync(fd);
  }
}

const WRITER_HASH = createHash('sha256').update(fs.readFileSync(new URL(import.meta.url))).digest('hex').slice(0, 16);

/**
 * `dir`/<shape>-<format>.gguf (SHAPES' `shape`), written unless its stamp (the file + '.json': this
 * writer's hash, the file's size, its weight bytes and tensor types) says it is there already:
 * { name, path, writerHash, fileBytes, weightBytes, types }. `log` hears of a file written, its size
 * and the seconds it took. Shared by the wllama bench and the page measurement.
 */
export function ensureModelFile(dir, shape, format, { log = () => {} } = {}) {
  if (!SHAPES[shape]) throw new Error(`unknown shape ${shape}: ${Object.keys(SHAPES).join(', ')}`);
  const formats = SHAPES[shape].formats ?? FORMATS;
  if (!formats.includes(format)) throw new Error(`the ${shape} shape is written as ${formats.join(', ')}, not ${format}`);
  const name = `${shape}-${format}.gguf`;
  const file = path.join(dir, name);
  const stampFile = `${file}.json`;
  if (fs.existsSync(file) && fs.existsSync(stampFile)) {
    const stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8'));
    if (stamp.writerHash === WRITER_HASH && fs.statSync(file).size === stamp.fileBytes) return { name, path: file, ...stamp };
  }
  fs.mkdirSync(dir, { recursive: true });
  const start = performance.now();
  const { tensors, fileBytes, weightBytes } = writeModel(file, SHAPES[shape], format);
  const types = {};
  for (const t of tensors) types[t.type] = (types[t.type] ?? 0) + 1;
  const stamp = { writerHash: WRITER_HASH, fileBytes, weightBytes, types };
  fs.writeFileSync(stampFile, JSON.stringify(stamp));
  log(`wrote ${path.relative(process.cwd(), file)} (${(fileBytes / 1e6).toFixed(0)} MB) in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  return { name, path: file, ...stamp };
}
