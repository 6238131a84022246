// The browser side of wllama-bench.mjs: loaded by its page (served cross-origin isolated from
// localhost: /dist/ is this project's build, /wllama/ @wllama/wllama's esm/ folder, /gguf/ the bench's
// files), it exposes window.bench, whose calls the Node side makes through playwright's evaluate:
// fetch a GGUF file into a Blob, load it into this module or into wllama at a thread count, greedy
// generations with their timings, and the memory bandwidth probe (a hand-written wasm SIMD sum).
import { loadAttentionLens } from '/dist/attention-lens.mjs';
import { Wllama } from '/wllama/index.js';

const now = () => performance.now();
let blob = null;
let ours = null;   // { lens, model }
let theirs = null; // a Wllama

/** Fetches /gguf/<name> into a Blob (kept for the loads that follow). */
async function fetchModel(name) {
  const start = now();
  blob = await (await fetch(`/gguf/${name}`)).blob();
  return { bytes: blob.size, ms: now() - start };
}

/** This module with `threads` threads, the Blob loaded by loadCheckpoint({ weights }). */
async function oursLoad(threads) {
  const lens = await loadAttentionLens({ threads });
  const before = lens.memory();
  const start = now();
  const model = await lens.loadCheckpoint({ weights: blob });
  const loadMs = now() - start;
  const after = lens.memory();
  ours = { lens, model };
  return { threads: lens.threads, simd: lens.simd, loadMs, formats: model.weights.formats,
    fileTensorBytes: model.weights.bytes, heldBytes: after.allocatedBytes - before.allocatedBytes,
    config: model.config };
}

/** Greedy generation of `count` tokens after `ids`: ids, time to the first token and in all. */
function oursRun(ids, count) {
  const start = now();
  let firstMs = 0;
  const g = ours.model.generate(Int32Array.from(ids), { maxTokens: count, temperature: 0, stop: [],
    onToken: () => { if (!firstMs) firstMs = now() - start; } });
  return { ids: Array.from(g.ids), firstMs, totalMs: now() - start };
}

/**
 * This module's last-row logits after `ids` (a forward of them all): the logits of ids `a` and `b`,
 * and the largest logit and the logits' standard deviation, for scale.
 */
function oursLogits(ids, a, b) {
  const { logits } = ours.model.forward(Int32Array.from(ids), { n: ids.length, batch: 1, logits: 'last' });
  const row = logits.subarray(logits.length - ours.model.config.vocab);
  let max = -Infinity, sum = 0, sum2 = 0;
  for (const v of row) { max = Math.max(max, v); sum += v; sum2 += v * v; }
  const mean = sum / row.length;
  return { a: row[a], b: row[b], max, std: Math.sqrt(sum2 / row.length - mean * mean) };
}

function oursFree() {
  ours?.model.dispose();
  ours = null;
}

/** wllama with `threads` threads, the same Blob loaded; nothing fetched but its wasm from /wllama/. */
async function wllamaLoad(threads) {
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true,
    logger: { debug() {}, log() {}, warn: console.warn, error: console.error } });
  w.setCompat(null);
  const start = now();
  await w.loadModel([blob], { n_threads: threads, n_ctx: 256, n_batch: 256, n_ubatch: 256, n_gpu_layers: 0 });
  const loadMs = now() - start;
  theirs = w;
  return { threads: w.getNumThreads(), multithread: w.isMultithread(), loadMs,
    version: Wllama.getLibllamaVersion?.() ?? '?', eog: w.getLoadedContextInfo().list_tokens_eog };
}

/**
 * A greedy completion of `count` tokens after `text` (no prompt cache, EOS ignored): its text,
 * llama.cpp's own timings (prompt_n, prompt_ms, predicted_n, predicted_ms) and the wall time; with
 * `ids`, also the generated token ids (logprobs: 1, whose entries carry them — a softmax over the
 * vocabulary per token, so not in timed runs).
 */
async function wllamaRun(text, count, ids = false) {
  const start = now();
  const reply = await theirs.createCompletion({ prompt: text, max_tokens: count, temperature: 0, top_k: 1,
    cache_prompt: false, ignore_eos: true, stream: false, ...(ids ? { logprobs: 1 } : {}) });
  if (ids) {
    return { ids: reply.choices[0].logprobs?.content?.map((entry) => entry.id) ?? null, text: reply.choices[0].text,
      timings: reply.timings, totalMs: now() - start };
  }
  return { text: reply.choices[0].text, timings: reply.timings, totalMs: now() - start };
}

async function wllamaFree() {
  await theirs?.exit();
  theirs = null;
}

// ---- the bandwidth probe -----------------------------------------------------------------------

// A wasm module importing a shared memory: sum(ptr, len) adds every f32x4 of [ptr, ptr + len) into
// four accumulators (64 bytes per iteration) and returns lane 0 of their sum. Bytes by hand.
function probeModuleBytes(pages) {
  const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const str = (s) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];
  const simd = (op, ...rest) => [0xfd, ...leb(op), ...rest];
  const load = (offset) => simd(0x00, 4, ...leb(offset));  // v128.load align 16
  const add = simd(0xe4);                                  // f32x4.add
  const body = [
    2, 4, 0x7b, 1, 0x7f,                                   // locals: 4 v128 (2..5), 1 i32 (6)
    0x20, 0, 0x20, 1, 0x6a, 0x21, 6,                       // end = ptr + len
    0x02, 0x40, 0x03, 0x40,                                // block, loop
    0x20, 0, 0x20, 6, 0x4f, 0x0d, 1,                       // ptr >= end: break
    0x20, 2, 0x20, 0, ...load(0), ...add, 0x21, 2,
    0x20, 3, 0x20, 0, ...load(16), ...add, 0x21, 3,
    0x20, 4, 0x20, 0, ...load(32), ...add, 0x21, 4,
    0x20, 5, 0x20, 0, ...load(48), ...add, 0x21, 5,
    0x20, 0, 0x41, 0xc0, 0x00, 0x6a, 0x21, 0,               // ptr += 64 (i32.const takes a signed LEB128)
    0x0c, 0, 0x0b, 0x0b,                                   // br loop, end, end
    0x20, 2, 0x20, 3, ...add, 0x20, 4, ...add, 0x20, 5, ...add, ...simd(0x1f, 0), // f32x4.extract_lane 0
    0x0b,
  ];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7d]),
    ...section(2, [1, ...str('env'), ...str('memory'), 0x02, 0x03, ...leb(pages), ...leb(pages)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...str('sum'), 0x00, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

const PROBE_WORKER = `
onmessage = async (e) => {
  if (e.data.module) {
    const instance = await WebAssembly.instantiate(e.data.module, { env: { memory: e.data.memory } });
    self.sum = instance.exports.sum;
    postMessage({ ready: true });
    return;
  }
  const start = performance.now();
  let s = 0;
  for (let r = 0; r < e.data.repeat; ++r) s += self.sum(e.data.ptr, e.data.len);
  postMessage({ ms: performance.now() - start, s });
};`;

/**
 * Bytes streamed per second by 1 and 2 workers summing a `mb`-MB shared buffer (each its half):
 * the best of `rounds` rounds of `repeat` passes each. { threads: [{ threads, gbPerS }], mb }.
 */
async function bandwidthProbe(mb = 512, rounds = 7, repeat = 2) {
  const pages = (mb * 1024 * 1024) / 65536;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  new Uint8Array(memory.buffer).fill(1);  // the pages touched once, before timing
  const module = await WebAssembly.compile(probeModuleBytes(pages));
  const url = URL.createObjectURL(new Blob([PROBE_WORKER], { type: 'text/javascript' }));
  const workers = [new Worker(url), new Worker(url)];
  const call = (w, message) => new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); w.postMessage(message); });
  await Promise.all(workers.map((w) => call(w, { module, memory })));
  const bytes = mb * 1024 * 1024;
  const result = [];
  for (const threads of [1, 2]) {
    let best = Infinity;
    const share = bytes / threads;
    await Promise.all(workers.slice(0, threads).map((w, i) => call(w, { ptr: i * share, len: share, repeat: 1 })));  // warm-up
    for (let r = 0; r < rounds; ++r) {
      const start = now();
      await Promise.all(workers.slice(0, threads).map((w, i) => call(w, { ptr: i * share, len: share, repeat })));
      best = Math.min(best, now() - start);
    }
    result.push({ threads, gbPerS: (bytes * repeat) / (best / 1000) / 1e9 });
  }
  workers.forEach((w) => w.terminate());
  URL.revokeObjectURL(url);
  return { mb, threads: result };
}

window.bench = { fetchModel, oursLoad, oursRun, oursLogits, oursFree, wllamaLoad, wllamaRun, wllamaFree, bandwidthProbe,
  isolated: crossOriginIsolated };
window.benchReady = true;
