// Benchmark: the forward of a GPT-2-small-sized model (12 layers, 12 heads, d 768, vocab 50 257,
// random weights) with every layer's attention weights, this module vs onnxruntime-web (npm run bench;
// see README.md).
//
// The model is scripts/data/make-gpt2-bench-model.py's (build/bench-gpt2/, written by scripts/bench.sh):
//   ours  lens.loadCheckpoint({ weights: model.safetensors as a file-backed Blob, config })
//         timed: load time, process peak RSS and lens.memory() against the file size
//   ORT   onnxruntime-web, wasm backend, numThreads = ours' threads, SIMD, the same weights in model.onnx
//         (outputs logits and attn.0 … attn.11), graphOptimizationLevel 'all'
// Cross-check first (the same ids, max abs diff of logits and attention < 1e-3, else MISMATCH and
// exit 1), then for n = 64 and n = 256 a warm-up call each and interleaved rounds (ours, ORT, ours,
// …): median ms per forward call, including each API's copying of the outputs out.
//
// Usage: node tests/bench/gpt2-bench.mjs [--quick] [--threads N]   (--quick: 3 rounds instead of 7;
//        --threads N: ours with loadAttentionLens({ threads: N }), the threaded build, and ORT with
//        numThreads N; one process per thread count, since ORT fixes numThreads once it is loaded)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';

import { maxAbsDiff, median, tokenIds } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'build/bench-gpt2');
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const LENGTHS = [64, 256];
const TOLERANCE = 1e-3;
const TARGET = 1.5;
const threadsAt = process.argv.indexOf('--threads');
const THREADS = threadsAt > 0 ? Number(process.argv[threadsAt + 1]) : 1;

const now = () => performance.now();
const log = (line = '') => console.log(line);
const MB = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
const peakRss = () => process.resourceUsage().maxRSS * 1024;

for (const file of ['model.safetensors', 'config.json', 'model.onnx']) {
  if (!fs.existsSync(path.join(dir, file))) {
    throw new Error(`build/bench-gpt2/${file} is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py`);
  }
}
for (const file of ['attention-lens.mjs', 'attention-lens.wasm']) {
  if (!fs.existsSync(path.join(root, 'dist', file))) throw new Error(`dist/${file} is missing: run bash scripts/build.sh`);
}

log(`# GPT-2-small-sized forward: Attention Lens (wasm) vs onnxruntime-web, ${THREADS} thread${THREADS > 1 ? 's' : ''} each (Node ${process.version})`);
log();

// ---- ours: load ------------------------------------------------------------------------------

const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
const weightsPath = path.join(dir, 'model.safetensors');
const fileBytes = fs.statSync(weightsPath).size;
const { loadAttentionLens } = await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href);
const lens = THREADS > 1 ? await loadAttentionLens({ threads: THREADS })
  : await loadAttentionLens({ wasmBinary: fs.readFileSync(path.join(root, 'dist/attention-lens.wasm')) });
if (lens.threads !== THREADS) throw new Error(`asked for ${THREADS} threads, got ${lens.threads}`);
if (lens.simd !== 'wasm') throw new Error(`dist/attention-lens.mjs reports simd '${lens.simd}', expected 'wasm'`);
const rssBefore = process.memoryUsage().rss;
const heapBefore = lens.memory();
let t0 = now();
const gpt = await lens.loadCheckpoint({ weights: await fs.openAsBlob(weightsPath), config });
const loadMs = now() - t0;
const rssPeakLoad = peakRss();
const heapAfter = lens.memory();
log(`model: ${config.n_layer} layers, ${config.n_head} heads, d ${config.n_embd}, vocab ${config.vocab_size}, ` +
  `${config.n_positions} positions; model.safetensors ${MB(fileBytes)} (F32)`);
log(`ours: loadCheckpoint (file-backed Blob, read in chunks) ${(loadMs / 1000).toFixed(2)} s ` +
  `(${(fileBytes / 1e6 / (loadMs / 1000)).toFixed(0)} MB/s)`);
log(`      process RSS ${MB(rssBefore)} before, peak ${MB(rssPeakLoad)} during load ` +
  `(+${MB(rssPeakLoad - rssBefore)}, ${(rssPeakLoad - rssBefore) / fileBytes >= 0 ? ((rssPeakLoad - rssBefore) / fileBytes).toFixed(2) : '?'}× the file)`);
log(`      lens.memory(): heap ${MB(heapBefore.heapBytes)} -> ${MB(heapAfter.heapBytes)}, allocated ` +
  `${MB(heapBefore.allocatedBytes)} -> ${MB(heapAfter.allocatedBytes)} ` +
  `(${((heapAfter.allocatedBytes - heapBefore.allocatedBytes) / fileBytes).toFixed(2)}× the file)`);

// ---- ORT: load -------------------------------------------------------------------------------

ort.env.wasm.numThreads = THREADS;
ort.env.wasm.simd = true;
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';
const onnxBytes = fs.statSync(path.join(dir, 'model.onnx')).size;
const rssBeforeOrt = process.memoryUsage().rss;
t0 = now();
const session = await ort.InferenceSession.create(fs.readFileSync(path.join(dir, 'model.onnx')), {
  executionProviders: ['wasm'],
  graphOptimizationLevel: 'all',
});
const ortLoadMs = now() - t0;
log(`ORT:  onnxruntime-web ${ort.env.versions?.web ?? '?'}, wasm backend, numThreads ${ort.env.wasm.numThreads}, SIMD; ` +
  `InferenceSession.create(model.onnx, ${MB(onnxBytes)}) ${(ortLoadMs / 1000).toFixed(2)} s, ` +
  `process RSS +${MB(process.memoryUsage().rss - rssBeforeOrt)}`);
log();

const ours = (ids) => gpt.forward(ids, { n: ids.length, batch: 1 });
async function theirs(ids) {
  const feeds = { ids: new ort.Tensor('int64', BigInt64Array.from(ids, (x) => BigInt(x)), [ids.length]) };
  const out = await session.run(feeds);
  const result = { logits: out.logits.data, attention: [] };
  for (let l = 0; l < config.n_layer; ++l) result.attention.push(out[`attn.${l}`].data);
  return result;
}

// ---- cross-check -----------------------------------------------------------------------------

let failed = false;
for (const n of LENGTHS) {
  const ids = tokenIds(n, config.vocab_size, 7);
  const a = ours(ids);
  const b = await theirs(ids);
  const logitsDiff = maxAbsDiff(a.logits, b.logits);
  let attnDiff = 0;
  for (let l = 0; l < config.n_layer; ++l) attnDiff = Math.max(attnDiff, maxAbsDiff(a.attention[l], b.attention[l]));
  const ok = logitsDiff < TOLERANCE && attnDiff < TOLERANCE;
  failed ||= !ok;
  log(`cross-check n = ${n}: max |Δ| logits ${logitsDiff.toExponential(2)}, attention ${attnDiff.toExponential(2)}` +
    `${ok ? '' : `  MISMATCH (tolerance ${TOLERANCE})`}`);
}
if (failed) {
  log('the two runtimes disagree: no timings');
  process.exit(1);
}
log();

// ---- timing ----------------------------------------------------------------------------------

const rows = [];
for (const n of LENGTHS) {
  const ids = tokenIds(n, config.vocab_size, 11 + n);
  ours(ids); // warm-up (the cross-check already ran both once at this n)
  await theirs(ids);
  const times = { ours: [], ort: [] };
  for (let r = 0; r < ROUNDS; ++r) {
    let t = now();
    ours(ids);
    times.ours.push(now() - t);
    t = now();
    await theirs(ids);
    times.ort.push(now() - t);
  }
  const row = { n, ours: median(times.ours), ort: median(times.ort), oursMin: Math.min(...times.ours), ortMin: Math.min(...times.ort) };
  rows.push(row);
  log(`n = ${n}: ours ${times.ours.map((x) => x.toFixed(0)).join(' ')} ms; ORT ${times.ort.map((x) => x.toFixed(0)).join(' ')} ms`);
}
log();
log(`median of ${ROUNDS} interleaved rounds after a warm-up; ms per forward (logits + all 12 layers' attention)`);
log('(the fastest round beside it: the machine is shared, and the fastest is the least disturbed)');
log(`| n | threads | ours ms | ORT ms | ORT / ours | target ≥ ${TARGET}× | fastest: ours | ORT | ORT / ours |`);
log('|---|---|---|---|---|---|---|---|---|');
for (const { n, ours: a, ort: b, oursMin, ortMin } of rows) {
  log(`| ${n} | ${THREADS} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)}× | ${b / a >= TARGET ? 'met' : 'NOT met'} | ` +
    `${oursMin.toFixed(0)} | ${ortMin.toFixed(0)} | ${(ortMin / oursMin).toFixed(2)}× |`);
}
log();
log(`| load | ours | |`);
log('|---|---|---|');
log(`| model.safetensors | ${MB(fileBytes)} | |`);
log(`| loadCheckpoint time | ${(loadMs / 1000).toFixed(2)} s | |`);
log(`| process peak RSS during load | ${MB(rssPeakLoad)} | +${MB(rssPeakLoad - rssBefore)} over before |`);
log(`| wasm heap after load | ${MB(heapAfter.heapBytes)} | allocated ${MB(heapAfter.allocatedBytes)} |`);
log(`| process peak RSS, whole run | ${MB(peakRss())} | both runtimes loaded |`);
gpt.dispose();
await session.release();
process.exit(0);  // ORT's threads would keep node alive
