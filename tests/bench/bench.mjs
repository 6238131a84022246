// Benchmark of the multi-head self-attention forward in Node (npm run bench; see README.md).
//
// For each (n, d_model, heads) and mask ('none', 'causal') it times, in the same run, after a
// warm-up (median of >= 7 runs):
//   (a) this project's SIMD wasm module  dist/attention-lens.mjs  weights: true (materialising)
//                                                                 and weights: false (flash)
//   (b) the same core built without SIMD build/wasm-nosimd/attention-lens.mjs  weights: true
//   (c) plain JavaScript written as a tutorial would (Float32Array loops)
//   (d) TensorFlow.js with its wasm backend (SIMD, one thread): matMul / softmax ops
//   (e) onnxruntime-web's wasm backend, one thread, weights as graph constants, in two forms:
//       plain ONNX ops (MatMul, Softmax …) and com.microsoft MultiHeadAttention (onnx-model.mjs)
// checks that all outputs agree (abs diff < 1e-4, else MISMATCH and exit 1), and prints a peak
// probe (independent mul+add chains in wasm simd128) and each result as a share of it.
// build/wasm-release/peak-probe.mjs (built by scripts/bench.sh) adds a per-kernel breakdown.
//
// Usage: node tests/bench/bench.mjs [--quick]   (--quick: the three small sizes only)
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';

import { attentionModel } from './onnx-model.mjs';
import { maxAbsDiff, median } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const quick = process.argv.includes('--quick');
const started = performance.now();

const SIZES = [
  [16, 64, 4],
  [64, 128, 4],
  [128, 256, 8],
  [512, 512, 8],
  [1024, 512, 8],
].filter(([n]) => !quick || n <= 128);
const MASKS = ['none', 'causal'];
const RUNS = 7; // timed runs (at least; median)
const ROUNDS = 7; // this module, the peers and the kernels: timed runs spread over interleaved rounds
const MIN_TIMED_MS = 50; // small sizes: more timed runs, until this long (at most MAX_RUNS)
const MAX_RUNS = 201;
const WARM_MS = 200; // warm-up per configuration and implementation: this long, and >= 2 calls
// The slow baselines (no-SIMD wasm, plain JS) at the large sizes: when warm-up + 7 runs would take
// over this long, they get fewer timed runs (>= 2) and their first call counts as one of them
// (their code is already warm from the smaller sizes, which run first).
const BASELINE_BUDGET_MS = 6000;
const TOLERANCE = 1e-4;
const EXP_INPUTS = [0, -50, -87.33, -87.34, -100, -Infinity];

// ---- helpers ---------------------------------------------------------------------------------

const now = () => performance.now();
// 2·n·d·3d (Q, K, V) + 2·n·d·d (W_O) + 2·2·n·n·d (QKᵀ and A·V over all heads). Causal masks are
// counted with the same full flops: the core computes every score and then masks it.
const flopsOf = (n, d) => 2 * n * d * 3 * d + 2 * n * d * d + 2 * 2 * n * n * d;
const gflops = (flops, ms) => flops / ms / 1e6;

// A full garbage collection before each measurement, so that one implementation's garbage (the
// materialising path returns heads·n² weights per call: 32 MiB at n = 1024) is not collected
// during the next one's timed runs.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc');

// Warm-up (V8 runs wasm in its baseline tier first and tiers a function up only for later
// calls), then >= `runs` timed calls; returns { ms (median), runs, warm, last } (last result).
function measure(fn, runs = RUNS) {
  collectGarbage();
  let warm = 0;
  let last;
  const t0 = now();
  while (warm < 2 || now() - t0 < WARM_MS) {
    last = fn();
    warm++;
  }
  // At least `runs` timed calls; tiny calls keep going until MIN_TIMED_MS (up to MAX_RUNS).
  const times = [];
  const t1 = now();
  while (times.length < runs || (now() - t1 < MIN_TIMED_MS && times.length < MAX_RUNS)) {
    const t = now();
    last = fn();
    times.push(now() - t);
  }
  return { ms: median(times), runs: times.length, warm, last };
}

// measure() for the slow baselines (see BASELINE_BUDGET_MS); adds `reduced: true` when it cut runs.
function measureBaseline(fn) {
  collectGarbage();
  const t = now();
  let last = fn();
  const once = now() - t;
  if (once * (RUNS + 2) <= BASELINE_BUDGET_MS) return { ...measure(fn), reduced: false };
  const runs = Math.max(2, Math.min(RUNS, Math.floor(BASELINE_BUDGET_MS / once)));
  const times = [once];
  while (times.length < runs) {
    const t1 = now();
    last = fn();
    times.push(now() - t1);
  }
  return { ms: median(times), runs, warm: 0, last, reduced: true };
}

// Deterministic uniform values in [-scale, scale) (a 32-bit LCG; no dependencies).
function uniform(count, seed, scale) {
  const out = new Float32Array(count);
  let state = (seed * 2654435761 + 12345) >>> 0;
  for (let i = 0; i < count; ++i) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = scale * ((state >>> 8) / (1 << 24) * 2 - 1);
  }
  return out;
}

const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
const fmtG = (g) => g.toFixed(g >= 10 ? 1 : 2);
const runsNote = (m) => (m.runs < RUNS ? ` (${m.runs} runs)` : '');
const fmtPct = (x) => `${(100 * x).toFixed(0)}%`;
const log = (line = '') => console.log(line);

// ---- (c) plain JavaScript, as a tutorial writes it ------------------------------------------

// y = x · Wᵀ with W in PyTorch layout [outDim, inDim] (rows starting at row `first`).
function linear(x, rows, inDim, w, first, outDim) {
  const y = new Float32Array(rows * outDim);
  for (let i = 0; i < rows; i++) {
    for (let o = 0; o < outDim; o++) {
      let sum = 0;
      for (let k = 0; k < inDim; k++) sum += x[i * inDim + k] * w[(first + o) * inDim + k];
      y[i * outDim + o] = sum;
    }
  }
  return y;
}

// Multi-head self-attention without biases, every step in its own loop.
function plainAttention(x, n, d, heads, inProjWeight, outProjWeight, causal) {
  const dk = d / heads;
  const q = linear(x, n, d, inProjWeight, 0, d);
  const k = linear(x, n, d, inProjWeight, d, d);
  const v = linear(x, n, d, inProjWeight, 2 * d, d);
  const attention = new Float32Array(heads * n * n);
  const concat = new Float32Array(n * d);
  const scale = 1 / Math.sqrt(dk);
  for (let h = 0; h < heads; h++) {
    const off = h * dk;
    const a = attention.subarray(h * n * n, (h + 1) * n * n);
    // scores = Q_h K_hᵀ / √d_k, masked
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < dk; c++) dot += q[i * d + off + c] * k[j * d + off + c];
        a[i * n + j] = causal && j > i ? -Infinity : dot * scale;
      }
    }
    // softmax over each row (subtract the max for stability)
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) max = Math.max(max, a[i * n + j]);
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const e = Math.exp(a[i * n + j] - max);
        a[i * n + j] = e;
        sum += e;
      }
      for (let j = 0; j < n; j++) a[i * n + j] /= sum;
    }
    // context = A · V_h, written into this head's columns of the concatenation
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < dk; c++) {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += a[i * n + j] * v[j * d + off + c];
        concat[i * d + off + c] = sum;
      }
    }
  }
  const output = linear(concat, n, d, outProjWeight, 0, d);
  return { output, attention };
}

// ---- (d) TensorFlow.js, wasm backend ----------------------------------------------------------

// W [rows, cols] (PyTorch layout) rows first … first + rows - 1, transposed to [cols, rows].
function transposedRows(w, rows, cols, first, factor = 1) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) t[c * rows + r] = w[(first + r) * cols + c] * factor;
  }
  return t;
}

// The same attention as tfjs ops on constant (pre-transposed) weights; the 1/√d_k scale is folded
// into W_q, causal adds a constant 0 / -inf bias. Returns a function x -> { output }.
function tfjsAttention(n, d, heads, inProjWeight, outProjWeight, causal) {
  const dk = d / heads;
  const wq = tf.tensor2d(transposedRows(inProjWeight, d, d, 0, 1 / Math.sqrt(dk)), [d, d]);
  const wk = tf.tensor2d(transposedRows(inProjWeight, d, d, d), [d, d]);
  const wv = tf.tensor2d(transposedRows(inProjWeight, d, d, 2 * d), [d, d]);
  const wo = tf.tensor2d(transposedRows(outProjWeight, d, d, 0), [d, d]);
  let bias = null;
  if (causal) {
    const b = new Float32Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) b[i * n + j] = -Infinity;
    bias = tf.tensor2d(b, [n, n]);
  }
  const run = (x) => {
    const y = tf.tidy(() => {
      const xt = tf.tensor2d(x, [n, d]);
      const split = (w) => tf.transpose(tf.reshape(tf.matMul(xt, w), [n, heads, dk]), [1, 0, 2]);
      const q = split(wq), k = split(wk), v = split(wv);
      let scores = tf.matMul(q, k, false, true); // [h, n, n]
      if (bias) scores = tf.add(scores, bias);
      const context = tf.matMul(tf.softmax(scores), v); // [h, n, dk]
      return tf.matMul(tf.reshape(tf.transpose(context, [1, 0, 2]), [n, d]), wo);
    });
    const out = y.dataSync();
    y.dispose();
    return { output: out };
  };
  run.dispose = () => [wq, wk, wv, wo, bias].forEach((t) => t && t.dispose());
  return run;
}

// ---- the peak probe: hand-written wasm, independent f32x4 mul + add chains --------------------

function uleb(value) {
  const out = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return out;
}
const f32Bytes = (v) => [...new Uint8Array(new Float32Array([v]).buffer)];

// (func (export "peak") (param $iters i32) (result f32)): `chains` v128 accumulators, each
// acc = acc * m + c per iteration (8 flops), all independent; returns a lane of their sum.
function peakModuleBytes(chains) {
  const SIMD = 0xfd;
  const GET = 0x20, SET = 0x21, TEE = 0x22;
  const SPLAT = uleb(0x13), MUL = uleb(0xe6), ADD = uleb(0xe4), EXTRACT = uleb(0x1f);
  const M = 1, C = 2, acc = (k) => 3 + k;
  const body = [1, ...uleb(2 + chains), 0x7b]; // locals: 2 + chains v128
  body.push(0x43, ...f32Bytes(0.999999), SIMD, ...SPLAT, SET, M);
  body.push(0x43, ...f32Bytes(1e-6), SIMD, ...SPLAT, SET, C);
  for (let k = 0; k < chains; k++) body.push(0x43, ...f32Bytes(1 + 0.01 * k), SIMD, ...SPLAT, SET, acc(k));
  body.push(0x03, 0x40); // loop
  for (let k = 0; k < chains; k++) {
    body.push(GET, acc(k), GET, M, SIMD, ...MUL, GET, C, SIMD, ...ADD, SET, acc(k));
  }
  body.push(GET, 0, 0x41, 1, 0x6b, TEE, 0, 0x0d, 0, 0x0b); // iters -= 1; br_if loop; end
  body.push(GET, acc(0));
  for (let k = 1; k < chains; k++) body.push(GET, acc(k), SIMD, ...ADD);
  body.push(SIMD, ...EXTRACT, 0, 0x0b);
  const section = (id, payload) => [id, ...uleb(payload.length), ...payload];
  const name = [...'peak'].map((c) => c.charCodeAt(0));
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]), // type: (i32) -> f32
    ...section(3, [1, 0]), // one function of type 0
    ...section(7, [1, name.length, ...name, 0, 0]), // export "peak" = func 0
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}

// Best GFLOP/s over chain counts and repeated calls (the later calls run tiered-up code).
function probePeak(run, flopsPerStep, chainsList) {
  const ITERS = 100000;
  const results = [];
  for (const chains of chainsList) {
    let best = 0;
    for (let r = 0; r < 40; r++) {
      const t = now();
      run(chains, ITERS);
      best = Math.max(best, gflops(chains * ITERS * flopsPerStep, now() - t));
    }
    results.push({ chains, gflops: best });
  }
  return results;
}

// ---- main ------------------------------------------------------------------------------------

async function loadLens(mjs) {
  const wasm = mjs.replace(/\.mjs$/, '.wasm');
  for (const file of [mjs, wasm]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${path.relative(root, file)} is missing: run npm run bench (scripts/bench.sh) to build it`);
    }
  }
  const { loadAttentionLens } = await import(pathToFileURL(mjs).href);
  return loadAttentionLens({ wasmBinary: fs.readFileSync(wasm) });
}

async function loadProbe() {
  const mjs = path.join(root, 'build/wasm-release/peak-probe.mjs');
  if (!fs.existsSync(mjs)) return null;
  const { default: create } = await import(pathToFileURL(mjs).href);
  return create({ wasmBinary: fs.readFileSync(mjs.replace(/\.mjs$/, '.wasm')) });
}

const simdLens = await loadLens(path.join(root, 'dist/attention-lens.mjs'));
const scalarLens = await loadLens(path.join(root, 'build/wasm-nosimd/attention-lens.mjs'));
const probe = await loadProbe();
// The threaded build (dist/attention-lens-threads.mjs, beside the module) with two threads: the layer's
// heads and projections split over them.
const threadedLens = await (await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href)).loadAttentionLens({ threads: 2 });
if (threadedLens.threads !== 2) throw new Error(`the threaded build gave ${threadedLens.threads} threads, expected 2`);
if (simdLens.simd !== 'wasm') throw new Error(`dist/attention-lens.mjs reports simd '${simdLens.simd}', expected 'wasm'`);
if (scalarLens.simd !== 'scalar') throw new Error(`the no-SIMD build reports simd '${scalarLens.simd}', expected 'scalar'`);

// The peers: one thread each (the core is single-threaded too), SIMD builds.
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
await tf.ready();
const ortVersion = ort.env.versions?.web ?? '?';

log(`# Attention Lens forward benchmark (Node ${process.version}, ${process.arch})`);
log();
log('Multi-head self-attention, no biases, positional: none. Times: ms per forward call, the median of');
log(`>= ${RUNS} timed runs after a warm-up (calls for ${WARM_MS} ms, at least 2, per configuration and implementation;`);
log(`this module, the peers and the kernels: runs spread over ${ROUNDS} interleaved rounds, so a burst of load from elsewhere`);
log('hits all of them alike),');
log('including each API\'s own overhead (for this module: argument checks, copying x in and the output —');
log('and with weights: true the heads·n² attention weights — out).');
log('GFLOP/s counts 2·n·d·3d + 2·n·d·d + 4·n²·d for every implementation and mask: causal rows count the');
log('full flops, so they are effective rates (this module skips the masked half; the peers compute it).');
log(`Peers, all single-threaded SIMD wasm: TensorFlow.js ${tf.version_core} (tfjs-backend-wasm), onnxruntime-web ${ortVersion}`);
log('(wasm backend, numThreads = 1, weights as graph constants; "ORT ops" = MatMul/Softmax graph, "ORT MHA" =');
log('com.microsoft MultiHeadAttention between the projection MatMuls).');
log('"wasm output-only, 2 threads": this module\'s threaded build (loadAttentionLens({ threads: 2 })): the projections\'');
log('column panels and the heads split over two threads, the same bits as one thread.');
log();

// Peak probe.
const handPeak = [];
{
  const modules = new Map();
  const run = (chains, iters) => {
    if (!modules.has(chains)) {
      const bytes = peakModuleBytes(chains);
      modules.set(chains, new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.peak);
    }
    return modules.get(chains)(iters);
  };
  handPeak.push(...probePeak(run, 8, [8, 10, 12, 14, 16]));
}
const xsimdPeak = probe ? probePeak((c, i) => probe._probe_peak(c, i), 2 * probe._probe_width(), [8, 10, 12, 14, 16]) : [];
const best = (list) => list.reduce((a, b) => (b.gflops > a.gflops ? b : a), { chains: 0, gflops: 0 });
const peak = Math.max(best(handPeak).gflops, best(xsimdPeak).gflops);
// The xsimd probe's best chain count, timed again beside every size's kernels (the breakdown).
const alongside = { chains: best(xsimdPeak).chains, flopsPerStep: probe ? 2 * probe._probe_width() : 0 };
log('## Peak probe: wasm simd128, independent f32x4 mul + add chains (8 flops per step)');
log();
log(`hand-written wasm:        ${handPeak.map((r) => `${r.chains} chains ${fmtG(r.gflops)}`).join(', ')} GFLOP/s`);
if (probe) {
  log(`xsimd::fma (emcc, -O3):   ${xsimdPeak.map((r) => `${r.chains} chains ${fmtG(r.gflops)}`).join(', ')} GFLOP/s`);
}
log(`peak used below: ${fmtG(peak)} GFLOP/s (best of the above)`);
log();
if (probe) {
  // What one exp costs in the softmax's kernel, by input: masked scores arrive as -inf.
  const count = 1 << 16;
  const cells = EXP_INPUTS.map((v) => {
    const ns = (measure(() => probe._probe_exp(v, count)).ms * 1e6) / count;
    return `e^${v === -Infinity ? '-inf' : v} ${ns.toFixed(2)}`;
  });
  log(`attn::exp_values (fill + exp), ns per value: ${cells.join(', ')}`);
  log();
}

// Implementations in table order: [key, column title].
const IMPLS = [
  ['flash', 'wasm output-only'],
  ['simd', 'wasm weights'],
  ['flash2', 'wasm output-only, 2 threads'],
  ['scalar', 'no-SIMD wasm'],
  ['plain', 'plain JS'],
  ['tfjs', 'tfjs-wasm'],
  ['ortOps', 'ORT ops'],
  ['ortMha', 'ORT MHA'],
];
const PEERS = ['tfjs', 'ortOps', 'ortMha'];

// An onnxruntime-web session of the given model kind: { run: async x -> { output }, release }
// or { error } if the runtime rejects the model.
async function ortSession(kind, n, d, heads, inProjWeight, outProjWeight, causal, x) {
  let session;
  try {
    const bytes = attentionModel({ kind, n, d, heads, inProjWeight, outProjWeight, causal });
    session = await ort.InferenceSession.create(bytes, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
    });
  } catch (e) {
    return { error: String(e.message ?? e).split('\n')[0] };
  }
  const feeds = { x: new ort.Tensor('float32', x, [1, n, d]) };
  return {
    run: async () => ({ output: (await session.run(feeds)).y.data }),
    release: () => session.release(),
  };
}

// Times several implementations in ROUNDS interleaved rounds (a, b, c, a, b, c, …), each call
// timed on its own, and returns per key the median of all its timed calls (>= RUNS in all): a
// burst of load from elsewhere on the machine then lands in one round of every implementation
// instead of in all the runs of one. First round: warm-up for WARM_MS (>= 2 calls) per
// implementation; later rounds: one untimed call. A full GC before each implementation's turn.
// impls: [[key, fn, isAsync]]; returns { key: { ms, runs, last } }.
async function measureRounds(impls) {
  const times = Object.fromEntries(impls.map(([key]) => [key, []]));
  const last = {};
  const perRound = Math.ceil(RUNS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, fn, isAsync] of impls) {
      const call = isAsync ? fn : async () => fn();
      collectGarbage();
      const t0 = now();
      for (let warm = 0; round === 0 ? warm < 2 || now() - t0 < WARM_MS : warm < 1; warm++) {
        last[key] = isAsync ? await call() : fn();
      }
      const own = [];
      const t1 = now();
      while (own.length < perRound ||
        (now() - t1 < MIN_TIMED_MS / ROUNDS && own.length < MAX_RUNS / ROUNDS)) {
        const t = now();
        last[key] = isAsync ? await call() : fn();
        own.push(now() - t);
      }
      times[key].push(...own);
    }
  }
  return Object.fromEntries(impls.map(([key]) =>
    [key, { ms: median(times[key]), runs: times[key].length, last: last[key] }]));
}

const rows = [];
const breakdown = [];
let failures = 0;
let reducedRuns = false;

// One size, both masks: measures every implementation, cross-checks, logs; returns the rows and
// the breakdown entries.
async function runSize(n, d, heads, masks = MASKS) {
  const out = { rows: [], breakdown: [] };
  const x = uniform(n * d, n + d, 1);
  const bound = Math.sqrt(6 / (4 * d)); // Xavier-uniform for in_proj [3d, d]
  const inProjWeight = uniform(3 * d * d, 7 + d, bound);
  const outProjWeight = uniform(d * d, 11 + d, 1 / Math.sqrt(d));
  const config = { dModel: d, heads, bias: false, positional: 'none', seed: 1 };
  const simdLayer = simdLens.createLayer(config);
  const scalarLayer = scalarLens.createLayer(config);
  const threadedLayer = threadedLens.createLayer(config);
  for (const layer of [simdLayer, scalarLayer, threadedLayer]) layer.setWeights({ inProjWeight, outProjWeight });
  const flops = flopsOf(n, d);

  for (const mask of masks) {
    const causal = mask === 'causal';
    const tfRun = tfjsAttention(n, d, heads, inProjWeight, outProjWeight, causal);
    const ortOps = await ortSession('matmul', n, d, heads, inProjWeight, outProjWeight, causal, x);
    const ortMha = await ortSession('mha', n, d, heads, inProjWeight, outProjWeight, causal, x);
    const m = await measureRounds([
      ['flash', () => simdLayer.forward(x, { n, mask, weights: false }), false],
      ['simd', () => simdLayer.forward(x, { n, mask, weights: true }), false],
      ['flash2', () => threadedLayer.forward(x, { n, mask, weights: false }), false],
      ['tfjs', () => tfRun(x), false],
      ...[['ortOps', ortOps], ['ortMha', ortMha]].filter(([, o]) => !o.error).map(([k, o]) => [k, o.run, true]),
    ]);
    for (const [key, o] of [['ortOps', ortOps], ['ortMha', ortMha]]) {
      if (o.error) m[key] = { error: o.error };
      else await o.release();
    }
    tfRun.dispose();
    m.scalar = measureBaseline(() => scalarLayer.forward(x, { n, mask, weights: true }));
    m.plain = measureBaseline(() => plainAttention(x, n, d, heads, inProjWeight, outProjWeight, causal));
    out.reduced ||= m.scalar.reduced || m.plain.reduced;

    // Cross-check: every output against plain JS, the two wasm builds' weights too.
    const reference = m.plain.last.output;
    const diffs = {};
    for (const [key] of IMPLS) {
      if (key !== 'plain' && !m[key].error) diffs[key] = maxAbsDiff(m[key].last.output, reference);
    }
    diffs.attention = Math.max(maxAbsDiff(m.simd.last.attention, m.plain.last.attention),
      maxAbsDiff(m.scalar.last.attention, m.plain.last.attention));
    const worst = Math.max(...Object.values(diffs));
    const ok = worst < TOLERANCE;

    // Per-kernel breakdown of the SIMD forward (same sizes, the core's ops called directly).
    let kernels = null;
    if (probe) {
      probe._probe_setup(n, d, heads, causal ? 1 : 0);
      // The peak probe runs in the same rounds, about as long as the projections: "% of the peak
      // alongside" compares medians measured side by side, which load from elsewhere on the
      // machine slows alike.
      const chains = alongside.chains;
      const iters = Math.max(1000, Math.round((2 * n * d * 3 * d) / (chains * alongside.flopsPerStep)));
      const k = await measureRounds([['proj', () => probe._probe_projections()], ['attn', () => probe._probe_attention()],
        ['flash', () => probe._probe_flash()], ['out', () => probe._probe_out_projection()],
        ['peak', () => probe._probe_peak(chains, iters)]]);
      kernels = { proj: k.proj.ms, attn: k.attn.ms, flash: k.flash.ms, out: k.out.ms,
        peak: gflops(chains * iters * alongside.flopsPerStep, k.peak.ms) };
      out.breakdown.push({ n, d, heads, mask, kernels, total: m.simd.ms, totalFlash: m.flash.ms });
    }

    out.rows.push({ n, d, heads, mask, flops, m, diffs, ok });
    const cells = IMPLS.map(([key, title]) => `${title} ${m[key].error ? 'n/a' : `${fmtMs(m[key].ms)} ms`}`);
    log(`n=${n} d=${d} h=${heads} ${mask}: ${cells.join(', ')}; max |diff| vs plain JS ` +
      `${worst.toExponential(1)} [${ok ? 'ok' : 'MISMATCH'}]` +
      PEERS.filter((k) => m[k].error).map((k) => `; ${k}: ${m[k].error}`).join(''));
  }
  simdLayer.dispose();
  scalarLayer.dispose();
  threadedLayer.dispose();
  return out;
}

// A warm-up size first (not reported): V8 compiles each module's functions in its baseline tier
// and tiers them up in the background, which the first measured size would otherwise pay for.
log('Warm-up (not reported): n=64 d=128 h=4, both masks …');
await runSize(64, 128, 4);
log();
for (const [n, d, heads] of SIZES) {
  const out = await runSize(n, d, heads);
  rows.push(...out.rows);
  breakdown.push(...out.breakdown);
  reducedRuns ||= out.reduced;
  failures += out.rows.filter((r) => !r.ok).length;
}

const fastestPeer = (r) => PEERS.filter((k) => !r.m[k].error)
  .reduce((a, k) => (!a || r.m[k].ms < r.m[a].ms ? k : a), null);
const title = Object.fromEntries(IMPLS);
const cell = (r, key) => (r.m[key].error ? 'n/a' : `${fmtMs(r.m[key].ms)}${runsNote(r.m[key])}`);

log();
log(`## Results: ms per call (wasm simd128 peak ${fmtG(peak)} GFLOP/s)`);
log();
log(`| n | d_model | heads | mask | ${IMPLS.map(([, t]) => t).join(' | ')} | fastest peer | output-only vs fastest peer | weights vs fastest peer | max abs diff |`);
log(`|---:|---:|---:|---|${IMPLS.map(() => '---:|').join('')}---|---:|---:|---:|`);
for (const r of rows) {
  const f = fastestPeer(r);
  const worst = Math.max(...Object.values(r.diffs));
  log(`| ${r.n} | ${r.d} | ${r.heads} | ${r.mask} | ${IMPLS.map(([k]) => cell(r, k)).join(' | ')} | ` +
    `${f ? title[f] : 'n/a'} | ${f ? `${(r.m[f].ms / r.m.flash.ms).toFixed(2)}×` : 'n/a'} | ` +
    `${f ? `${(r.m[f].ms / r.m.simd.ms).toFixed(2)}×` : 'n/a'} | ${worst.toExponential(1)} |`);
}
log();
log(`Every time is the median of at least ${RUNS} timed runs (this module and the peers: ${ROUNDS} interleaved rounds`);
log(`of >= ${Math.ceil(RUNS / ROUNDS)}, more for calls that take under ${MIN_TIMED_MS} ms in all, up to ${MAX_RUNS}), except where marked`);
log('"(k runs)": the no-SIMD and plain JS baselines');
log('get fewer runs (at least 2; the first call counts, since the smaller sizes already warmed their code)');
log(`where warm-up + ${RUNS} runs would take over ${BASELINE_BUDGET_MS / 1000} s.` +
  (reducedRuns ? '' : ' (Not needed in this run.)') + ' "max abs diff": the largest');
log('difference of any output (and of both wasm builds\' attention weights) from plain JS.');
log();
log('GFLOP/s (% of peak) of the same runs:');
log();
log(`| n | d_model | heads | mask | ${IMPLS.map(([, t]) => t).join(' | ')} |`);
log(`|---:|---:|---:|---|${IMPLS.map(() => '---:|').join('')}`);
for (const r of rows) {
  const g = (k) => {
    if (r.m[k].error) return 'n/a';
    const v = gflops(r.flops, r.m[k].ms);
    return `${fmtG(v)} (${fmtPct(v / peak)})`;
  };
  log(`| ${r.n} | ${r.d} | ${r.heads} | ${r.mask} | ${IMPLS.map(([k]) => g(k)).join(' | ')} |`);
}

if (breakdown.length) {
  log();
  log('## Where the SIMD time goes (build/wasm-release/peak-probe.mjs: the core\'s ops called directly, same sizes)');
  log();
  log('proj = X·W_inᵀ (Q, K, V), attention = all heads\' materialising path (Q·Kᵀ, fused scale + mask +');
  log('softmax, A·V, masked key blocks skipped), flash = all heads\' flash_attention (the output-only path),');
  log('out = concat·W_Oᵀ; rest = forward() minus proj + (attention or flash) + out: the JS API, copies in and');
  log('out (with weights: the heads·n² weights), workspace set-up. Attention and flash GFLOP/s count the full');
  log('4·n²·d (effective rates for causal). % peak: of the run\'s peak above (the best of 40 probe calls);');
  log(`peak alongside: the xsimd probe (${alongside.chains} chains) timed in the same rounds as these kernels, median`);
  log('against median, so a slow spell of the machine slows both.');
  log();
  log('| n | d_model | heads | mask | proj ms | proj GFLOP/s (% peak) | attention ms | attention GFLOP/s (% peak) | flash ms | flash GFLOP/s (% peak) | out ms | out GFLOP/s (% peak) | rest (weights) ms | rest (output-only) ms | peak alongside GFLOP/s | proj % of peak alongside |');
  log('|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const b of breakdown) {
    const { n, d, kernels: k } = b;
    const pg = gflops(2 * n * d * 3 * d, k.proj);
    const ag = gflops(4 * n * n * d, k.attn);
    const fg = gflops(4 * n * n * d, k.flash);
    const og = gflops(2 * n * d * d, k.out);
    log(`| ${n} | ${d} | ${b.heads} | ${b.mask} | ${fmtMs(k.proj)} | ${fmtG(pg)} (${fmtPct(pg / peak)}) | ` +
      `${fmtMs(k.attn)} | ${fmtG(ag)} (${fmtPct(ag / peak)}) | ${fmtMs(k.flash)} | ${fmtG(fg)} (${fmtPct(fg / peak)}) | ` +
      `${fmtMs(k.out)} | ${fmtG(og)} (${fmtPct(og / peak)}) | ${fmtMs(b.total - k.proj - k.attn - k.out)} | ` +
      `${fmtMs(b.totalFlash - k.proj - k.flash - k.out)} | ${fmtG(k.peak)} | ${fmtPct(pg / k.peak)} |`);
  }
}

// The speed issue's targets, checked on this run's numbers (informative: only MISMATCH fails).
log();
log('## Targets (this run)');
log();
const verdict = (ok) => (ok ? 'met' : 'MISSED');
const ratio = (r, key) => { const f = fastestPeer(r); return f ? r.m[f].ms / r.m[key].ms : Infinity; };
const all = rows.map((r) => ratio(r, 'flash'));
log(`- wasm (output-only) >= fastest peer at every size: ${verdict(all.every((v) => v >= 1))} ` +
  `(ratios ${all.map((v) => `${v.toFixed(2)}×`).join(', ')})`);
const allW = rows.map((r) => ratio(r, 'simd'));
log(`- wasm (weights: true, returning n²·heads more numbers) >= fastest peer: ${verdict(allW.every((v) => v >= 1))} ` +
  `(ratios ${allW.map((v) => `${v.toFixed(2)}×`).join(', ')})`);
const small = rows.filter((r) => r.n === 16).map((r) => ratio(r, 'flash'));
if (small.length) log(`- (16, 64, 4) >= 1.5× the fastest peer: ${verdict(small.every((v) => v >= 1.5))} (${small.map((v) => `${v.toFixed(2)}×`).join(', ')})`);
const causalBig = rows.filter((r) => r.n >= 512 && r.mask === 'causal').map((r) => ratio(r, 'flash'));
if (causalBig.length) log(`- causal, n >= 512: >= 1.3× the fastest peer: ${verdict(causalBig.every((v) => v >= 1.3))} (${causalBig.map((v) => `${v.toFixed(2)}×`).join(', ')})`);
if (breakdown.length) {
  const projOf = (b, of) => gflops(2 * b.n * b.d * 3 * b.d, b.kernels.proj) / of;
  const alongsidePct = breakdown.map((b) => projOf(b, b.kernels.peak));
  log(`- projection matmuls >= 75% of peak, measured alongside: ${verdict(alongsidePct.every((v) => v >= 0.75))} ` +
    `(${alongsidePct.map(fmtPct).join(', ')}; of the run's best peak: ${breakdown.map((b) => fmtPct(projOf(b, peak))).join(', ')})`);
}
const threadGain = rows.map((r) => r.m.flash.ms / r.m.flash2.ms);
log(`- two threads (output-only) vs one: ${rows.map((r, i) => `${r.n}×${r.d}×${r.heads} ${r.mask} ${threadGain[i].toFixed(2)}×`).join(', ')}; ` +
  `n = 1024 >= 1.6×: ${verdict(rows.every((r, i) => r.n !== 1024 || threadGain[i] >= 1.6))}`);
const big = rows.filter((r) => r.n === 1024);
if (big.length) log(`- n = 1024: output-only faster than materialising: ${verdict(big.every((r) => r.m.flash.ms < r.m.simd.ms))} ` +
  `(${big.map((r) => `${r.mask} ${fmtMs(r.m.flash.ms)} vs ${fmtMs(r.m.simd.ms)} ms`).join(', ')})`);

log();
log(`bench.mjs finished in ${((now() - started) / 1000).toFixed(1)} s`);
if (failures) {
  console.error(`ERROR: ${failures} configuration(s) disagree by ${TOLERANCE} or more (see max abs diff above)`);
  process.exit(1);
}
