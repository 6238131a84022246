// Benchmark: generation tokens per second with a KV cache, this module vs onnxruntime-web (npm run
// bench; see README.md, "What generate-bench.mjs measures").
//
// Models (random weights, written by scripts/bench.sh):
//   gpt2    build/bench-gpt2/   scripts/data/make-gpt2-bench-model.py  (GPT-2-small-sized, F32)
//   llama   build/bench-llama/  scripts/data/make-llama-bench-model.py (SmolLM2-135M-sized, F32)
//   llama-bf16  the same directory's model-bf16.safetensors: the same values in BF16, as SmolLM2 and
//           Qwen2.5 are published (ours keeps them 2-byte and reads half the bytes per token; ORT
//           runs the F32 export of the same values: its wasm backend has no BF16 MatMul)
// Each directory holds model.safetensors + config.json (ours: lens.loadCheckpoint) and model-kv.onnx,
// a decoder step with past key/values of the same weights (ORT).
//   ours  m.generate(prompt, { maxTokens: 64, temperature: 0, stop: [] }): the prompt once, then one
//         row per token with the core's KV cache; one thread (dist/attention-lens.mjs) and two
//         (loadAttentionLens({ threads: 2 }): the threaded build), the model loaded in each
//   ORT   onnxruntime-web, wasm backend, SIMD, graphOptimizationLevel 'all', numThreads 1 and 2, each
//         in its own child process (numThreads is fixed per process once the wasm is loaded); a
//         greedy loop in JS: run(ids = prompt, empty past) → argmax of the last logits → run(ids =
//         [that id], past = the presents) … 64 times
// A 64-token prompt (deterministic ids). Cross-check first: the first 16 greedy ids of every
// runtime must equal ours (else MISMATCH, and the script exits 1 at the end). Then interleaved
// rounds (ours 1 thread, ours 2 threads, ORT 1 thread, ORT 2 threads, …), medians of: time to first token (the
// prompt's forward + the argmax), decode tokens/s (the 63 tokens after the first, per second of
// their time) and overall tokens/s (64 / the whole generate call).
//
// Usage: node tests/bench/generate-bench.mjs [--quick] [gpt2|llama|llama-bf16 …]   (--quick: 3 rounds, not 7)
//        node tests/bench/generate-bench.mjs --ort-serve MODEL.onnx THREADS   (the child; JSON lines)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { maxAbsDiff, median, tokenIds } from './stats.mjs';

const here = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(here), '../..');
const PROMPT = 64;
const NEW = 64;
const CHECK = 16;
const TARGET = 1.5;
const now = () => performance.now();
const log = (line = '') => console.log(line);

// ---- the ORT child: one session, a greedy loop per request --------------------------------------

if (process.argv[2] === '--ort-serve') {
  const [file, threadsArg] = process.argv.slice(3);
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = Number(threadsArg);
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const t0 = now();
  const session = await ort.InferenceSession.create(fs.readFileSync(file), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const createMs = now() - t0;
  const pastNames = session.inputNames.filter((name) => name.startsWith('past_'));
  // (the empty past_* tensors [1, kvHeads, 0, headDim] take their sizes from the request)
  const meta = session.inputMetadata ?? [];
  const dims = {};
  for (const m of Array.isArray(meta) ? meta : []) if (m.name?.startsWith('past_')) dims[m.name] = m.shape;
  const argmax = (data) => {
    let best = 0;
    for (let i = 1; i < data.length; ++i) if (data[i] > data[best]) best = i;
    return best;
  };
  async function generate(prompt, count, kvHeads, headDim, wantLogits) {
    const start = now();
    const cpu = process.cpuUsage();
    let feeds = { ids: new ort.Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, prompt.length]) };
    for (const name of pastNames) feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim]);
    const ids = [];
    let firstMs = 0;
    let firstLogits;
    for (let k = 0; k < count; ++k) {
      const out = await session.run(feeds);
      const id = argmax(out.logits.data);
      ids.push(id);
      if (k === 0 && wantLogits) firstLogits = Array.from(out.logits.data);
      if (k === 0) firstMs = now() - start;
      const next = { ids: new ort.Tensor('int64', BigInt64Array.of(BigInt(id)), [1, 1]) };
      for (const name of pastNames) next[name] = out[name.replace('past_', 'present_')];
      for (const [name, tensor] of Object.entries(out)) if (name === 'logits') tensor.dispose?.();
      feeds = next;
    }
    const totalMs = now() - start;
    const used = process.cpuUsage(cpu);
    return { ids, firstMs, totalMs, cpuMs: (used.user + used.system) / 1000, logits: firstLogits };
  }
  console.log(JSON.stringify({ ready: true, createMs, version: ort.env.versions?.web ?? '?',
    threads: ort.env.wasm.numThreads, dims }));
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const request = JSON.parse(line);
    if (request.quit) break;
    console.log(JSON.stringify(await generate(request.prompt, request.count, request.kvHeads, request.headDim, request.logits)));
  }
  process.exit(0);
}

// ---- the parent --------------------------------------------------------------------------------

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const MODELS = [
  { key: 'gpt2', dir: 'build/bench-gpt2', script: 'make-gpt2-bench-model.py', label: 'GPT-2-small-sized (124M, F32)' },
  { key: 'llama', dir: 'build/bench-llama', script: 'make-llama-bench-model.py', label: 'SmolLM2-135M-sized Llama (F32)' },
  { key: 'llama-bf16', dir: 'build/bench-llama', weights: 'model-bf16.safetensors', script: 'make-llama-bench-model.py',
    label: 'SmolLM2-135M-sized Llama (BF16, as published; ORT: the F32 export of the same values)' },
].filter((m) => !wanted.length || wanted.includes(m.key));

/** A child process running ORT with `threads` threads; request(…) resolves with its JSON reply. */
async function ortChild(file, threads) {
  const child = spawn(process.execPath, [here, '--ort-serve', file, String(threads)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  let waiting = null;
  lines.on('line', (line) => { if (waiting) { const w = waiting; waiting = null; w(line); } else queue.push(line); });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const next = () => Promise.race([
    new Promise((resolve) => { if (queue.length) resolve(queue.shift()); else waiting = resolve; }),
    exited.then((code) => { throw new Error(`ORT child (${threads} threads) exited with ${code}: ${stderr.slice(-2000)}`); }),
  ]);
  const ready = JSON.parse(await next());
  return {
    ready,
    async request(body) { child.stdin.write(JSON.stringify(body) + '\n'); return JSON.parse(await next()); },
    async close() { child.stdin.write('{"quit":true}\n'); await exited; },
  };
}

for (const file of ['attention-lens.mjs', 'attention-lens.wasm']) {
  if (!fs.existsSync(path.join(root, 'dist', file))) throw new Error(`dist/${file} is missing: run bash scripts/build.sh`);
}
const { loadAttentionLens } = await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href);

log(`# Generation with a KV cache: Attention Lens (wasm) vs onnxruntime-web (Node ${process.version})`);
log(`${PROMPT}-token prompt, ${NEW} new tokens, greedy; ${ROUNDS} interleaved rounds, medians`);
log();

let failed = false;
const table = [];
for (const model of MODELS) {
  const dir = path.join(root, model.dir);
  const weights = model.weights ?? 'model.safetensors';
  for (const file of [weights, 'config.json', 'model-kv.onnx']) {
    if (!fs.existsSync(path.join(dir, file))) throw new Error(`${model.dir}/${file} is missing: run /usr/bin/python3 scripts/data/${model.script}`);
  }
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const lens = await loadAttentionLens({ wasmBinary: fs.readFileSync(path.join(root, 'dist/attention-lens.wasm')) });
  const lens2 = await loadAttentionLens({ threads: 2 });
  let t0 = now();
  const m = await lens.loadCheckpoint({ weights: await fs.openAsBlob(path.join(dir, weights)), config });
  const loadMs = now() - t0;
  const m2 = await lens2.loadCheckpoint({ weights: await fs.openAsBlob(path.join(dir, weights)), config });
  const c = m.config;
  log(`## ${model.label}: ${c.layers} layers, ${c.heads} heads (${c.kvHeads} KV), head dim ${c.headDim}, ` +
    `d ${c.dModel}, vocab ${c.vocab}`);
  log(`ours: loadCheckpoint ${(loadMs / 1000).toFixed(1)} s, simd ${lens.simd}, ${lens.threads} thread; ` +
    `and the threaded build with ${lens2.threads} threads`);

  const generateWith = (model) => (prompt, count) => {
    const start = now();
    let firstMs = 0;
    const g = model.generate(prompt, { maxTokens: count, temperature: 0, stop: [],
      onToken: () => { if (!firstMs) firstMs = now() - start; } });
    return { ids: Array.from(g.ids), firstMs, totalMs: now() - start };
  };
  const ours = generateWith(m);
  const ours2 = generateWith(m2);

  const peers = [];
  for (const threads of [1, 2]) {
    try {
      const child = await ortChild(path.join(dir, 'model-kv.onnx'), threads);
      peers.push({ threads, child, name: `ORT ${threads} thread${threads > 1 ? 's' : ''}` });
      log(`ORT ${threads}: onnxruntime-web ${child.ready.version}, wasm, numThreads ${child.ready.threads} ` +
        `(env after create), InferenceSession.create ${(child.ready.createMs / 1000).toFixed(1)} s`);
    } catch (error) {
      log(`ORT ${threads} threads: could not run: ${String(error.message).split('\n')[0]}`);
    }
  }
  const request = (peer, prompt, count, logits = false) =>
    peer.child.request({ prompt: Array.from(prompt), count, kvHeads: c.kvHeads, headDim: c.headDim, logits });

  // cross-check: the first CHECK greedy ids
  const checkPrompt = tokenIds(PROMPT, c.vocab, 7);
  const mine = ours(checkPrompt, CHECK).ids;
  // and the prompt's last-position logits (m.forward's last row vs ORT's first step): random weights
  // often make greedy repeat one id, which alone would be a weak check
  const full = m.forward(checkPrompt, { n: PROMPT, batch: 1 }).logits;
  const lastRow = full.subarray((PROMPT - 1) * c.vocab, PROMPT * c.vocab);
  log(`cross-check, first ${CHECK} greedy ids: ours ${mine.join(' ')}`);
  const mine2 = ours2(checkPrompt, CHECK).ids;
  const same2 = mine2.every((id, i) => id === mine[i]);
  if (!same2) failed = true;
  log(`  ours, 2 threads: ids ${same2 ? 'same' : `MISMATCH: ${mine2.join(' ')}`}`);
  for (const peer of peers) {
    const reply = await request(peer, checkPrompt, CHECK, true);
    const theirs = reply.ids;
    const same = theirs.length === mine.length && theirs.every((id, i) => id === mine[i]);
    const diff = maxAbsDiff(lastRow, Float32Array.from(reply.logits));
    const close = diff < 1e-3;
    if (!same || !close) failed = true;
    log(`  ${peer.name}: ids ${same ? 'same' : `MISMATCH: ${theirs.join(' ')}`}; prompt's last logits max |Δ| ` +
      `${diff.toExponential(2)}${close ? '' : ' MISMATCH (tolerance 1e-3)'}`);
  }
  if (failed) {
    log('the runtimes disagree: no timings');
    for (const peer of peers) await peer.child.close();
    m.dispose?.();
    m2.dispose?.();
    continue;
  }

  // warm-up, then interleaved rounds
  const prompt = tokenIds(PROMPT, c.vocab, 11);
  ours(prompt, NEW);
  ours2(prompt, NEW);
  for (const peer of peers) await request(peer, prompt, NEW);
  const runs = { ours: [], ours2: [] };
  for (const peer of peers) runs[peer.name] = [];
  for (let r = 0; r < ROUNDS; ++r) {
    globalThis.gc?.();
    runs.ours.push(ours(prompt, NEW));
    runs.ours2.push(ours2(prompt, NEW));
    for (const peer of peers) runs[peer.name].push(await request(peer, prompt, NEW));
  }
  for (const peer of peers) await peer.child.close();
  m.dispose?.();
  m2.dispose?.();

  const summary = (list) => ({
    ttft: median(list.map((x) => x.firstMs)),
    decode: median(list.map((x) => (NEW - 1) / ((x.totalMs - x.firstMs) / 1000))),
    overall: median(list.map((x) => NEW / (x.totalMs / 1000))),
    decodeMin: Math.min(...list.map((x) => (NEW - 1) / ((x.totalMs - x.firstMs) / 1000))),
    decodeMax: Math.max(...list.map((x) => (NEW - 1) / ((x.totalMs - x.firstMs) / 1000))),
  });
  const o = summary(runs.ours);
  const o2 = summary(runs.ours2);
  const oursAt = (threads) => (threads > 1 ? o2 : o);
  for (const peer of peers) {
    const busy = median(runs[peer.name].map((x) => x.cpuMs / x.totalMs));
    log(`${peer.name}: process CPU time / wall time during generation ${busy.toFixed(2)} (1.0 = one core busy)`);
  }
  log();
  log('| runtime | time to first token (ms) | decode tok/s (63 tokens) | min–max over rounds | overall tok/s (64) | ' +
    'speed, ours at equal threads / it: decode | speed, ours at equal threads / it: TTFT |');
  log('|---|---|---|---|---|---|---|');
  const row = (name, s, mine) => log(`| ${name} | ${s.ttft.toFixed(0)} | ${s.decode.toFixed(1)} | ${s.decodeMin.toFixed(1)}–${s.decodeMax.toFixed(1)} | ` +
    `${s.overall.toFixed(1)} | ${mine ? `${(mine.decode / s.decode).toFixed(2)}×` : '—'} | ${mine ? `${(s.ttft / mine.ttft).toFixed(2)}×` : '—'} |`);
  row('ours (1 thread)', o, null);
  row('ours (2 threads)', o2, null);
  const results = { model: model.key, ours: o, ours2: o2 };
  for (const peer of peers) {
    const s = summary(runs[peer.name]);
    row(peer.name, s, oursAt(peer.threads));
    results[peer.name] = s;
  }
  for (const peer of peers) {
    const ratio = oursAt(peer.threads).decode / results[peer.name].decode;
    log(`target: ours ≥ ${TARGET}× ${peer.name} decode tok/s at equal threads: ${ratio.toFixed(2)}× — ${ratio >= TARGET ? 'met' : 'not met'}`);
  }
  log(`ours, 2 threads / 1 thread: decode ${(o2.decode / o.decode).toFixed(2)}×, time to first token ${(o.ttft / o2.ttft).toFixed(2)}×`);
  log();
  table.push(results);
}
if (failed) {
  log('MISMATCH: see above');
  process.exit(1);
}
