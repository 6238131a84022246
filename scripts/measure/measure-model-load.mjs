// Measures what a Hub load of a real-sized checkpoint spends its time on after the download reaches
// 100 %, in Chromium: the bench's GPT-2-small-sized checkpoint (build/bench-gpt2/, F32, written by
// scripts/data/make-gpt2-bench-model.py) or, with --llama, the SmolLM2-135M-shaped Llama in BF16
// (build/bench-llama/model-bf16.safetensors, scripts/data/make-llama-bench-model.py) is loaded by
// Hub id from the local stand-in of the Hub (scripts/lib/hub-stand-in.mjs) with the public API in a
// cross-origin isolated page (threads 'auto', as the Your model view's worker), its onProgress
// phases timed, and Cache Storage and Blob reads timed by wrapping them in the page: the download,
// the Cache Storage put finishing, the read-back of the kept file into the core, the rest of
// loadCheckpoint (the core reading the tensors and import.finish), the first forward (the weights
// packed), a second forward, and the head finder's probe (headScores). By default in a persistent
// profile (a browser keeps the file in Cache Storage, as a reader's does); with --private in a fresh
// context (Chromium's private windows refuse to keep ~500 MB: the weights are then read by ranges).
// Usage: node scripts/measure/measure-model-load.mjs [--llama] [--private] [--tokens 58]
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { CHROMIUM_ARGS, serveDist } from '../lib/browser.mjs';
import { startStandIn } from '../lib/hub-stand-in.mjs';
import { byteLevelTokenizer } from '../lib/bench-tokenizer.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const llama = process.argv.includes('--llama');
const persistent = !process.argv.includes('--private');
const tokens = Number(option('tokens', 58));
const dir = join(process.cwd(), llama ? 'build/bench-llama' : 'build/bench-gpt2');
const weightsFile = llama ? 'model-bf16.safetensors' : 'model.safetensors';
if (!existsSync(join(dir, weightsFile))) {
  throw new Error(`${dir}/${weightsFile} is missing: run /usr/bin/python3 scripts/data/${llama ? 'make-llama' : 'make-gpt2'}-bench-model.py`);
}
const REPO = llama ? 'bench/smollm2-135m' : 'bench/gpt2-small';
const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const files = { 'config.json': config, 'model.safetensors': readFileSync(join(dir, weightsFile)) };
// The bench Llama has no tokenizer: a byte-level one of its vocabulary's size.
if (llama) files['tokenizer.json'] = byteLevelTokenizer(config.vocab_size);

/** In the page: the load through the public API, every phase timed (ms from the start). */
async function timedLoad({ hub, endpoint, tokens: count }) {
  const t0 = performance.now();
  const at = () => performance.now() - t0;
  const sum = { put: 0, match: 0, blob: 0, reads: 0, readCalls: 0 };
  const puts = []; // [start, end] of each Cache Storage put
  const reads = []; // [start, end] of each Blob read
  const wrap = (proto, name, key, spans) => {
    const original = proto.__original?.[name] ?? proto[name];
    proto.__original = { ...proto.__original, [name]: original };
    proto[name] = async function wrapped(...args) {
      const start = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        sum[key] += performance.now() - start;
        spans?.push([start - t0, performance.now() - t0]);
      }
    };
  };
  wrap(Cache.prototype, 'put', 'put', puts);
  wrap(Cache.prototype, 'match', 'match');
  wrap(Response.prototype, 'blob', 'blob');
  wrap(Blob.prototype, 'arrayBuffer', 'reads', reads);
  sum.readCalls = () => reads.length;
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens({ threads: 'auto' });
  const ready = at();
  let full = null;
  const progress = [];
  const model = await lens.loadCheckpoint({ hub, endpoint, onProgress: (fraction, info) => {
    progress.push([Math.round(at()), fraction, info?.phase ?? null]);
    if (fraction >= 1 && (info?.phase ?? 'download') === 'download' && full === null) full = at();
  } });
  const loaded = at();
  const ids = Int32Array.from({ length: count }, (_, i) => 100 + ((i * 37) % 1000));
  const f1 = performance.now();
  model.forward(ids, { n: count, logits: 'last' });
  const first = performance.now() - f1;
  const f2 = performance.now();
  model.forward(ids, { n: count, logits: 'last' });
  const second = performance.now() - f2;
  const s = performance.now();
  model.headScores();
  const scores = performance.now() - s;
  model.dispose();
  const phases = [...new Set(progress.map((p) => p[2]))];
  const weightsPut = puts.reduce((longest, p) => (!longest || p[1] - p[0] > longest[1] - longest[0] ? p : longest), null);
  return { threads: lens.threads, ready, full, weightsPut, readsFrom: reads[0]?.[0] ?? null, readsTo: reads.at(-1)?.[1] ?? null,
    loaded, first, second, scores, sum: { ...sum, readCalls: reads.length }, phases, updates: progress.length };
}

const hub = await startStandIn({ [REPO]: files });
const server = await serveDist({ isolated: true });
const profile = persistent ? mkdtempSync(join(tmpdir(), 'attention-lens-profile-')) : null;
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browser;
let context;
try {
  if (persistent) {
    context = await chromium.launchPersistentContext(profile, { executablePath, args: CHROMIUM_ARGS });
  } else {
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext();
  }
  const page = await context.newPage();
  await page.goto(server.url);
  for (const run of persistent ? ['first load (download)', 'second load (kept in Cache Storage)'] : ['load (by ranges)']) {
    const r = await page.evaluate(timedLoad, { hub: REPO, endpoint: hub.endpoint, tokens });
    const ms = (v) => (v === null ? '—' : `${(v / 1000).toFixed(2)} s`);
    const base = r.full ?? r.loaded;
    console.log(`${REPO} (${weightsFile}, ${(files['model.safetensors'].length / 2 ** 20).toFixed(0)} MiB), ${run}, ` +
      `${persistent ? 'persistent profile' : 'private context'}, ${r.threads} thread(s), ${tokens} tokens:`);
    console.log(`  module ready ${ms(r.ready)}; onProgress reached 1 (download) at ${ms(r.full)}; loadCheckpoint resolved at ${ms(r.loaded)}` +
      ` (${r.full === null ? 'nothing downloaded' : `${ms(r.loaded - base)} after 100 %`}); phases reported: ${r.phases.join(', ')} (${r.updates} updates)`);
    console.log(`  the weights' Cache Storage put: ${ms(r.weightsPut?.[0] ?? null)} → ${ms(r.weightsPut?.[1] ?? null)}` +
      ` (${ms(r.weightsPut ? r.weightsPut[1] - base : null)} after 100 %); cache.match ${ms(r.sum.match)}; Response.blob ${ms(r.sum.blob)}`);
    console.log(`  Blob reads into the core: ${ms(r.readsFrom)} → ${ms(r.readsTo)}, ${ms(r.sum.reads)} waiting on ${r.sum.readCalls} reads` +
      ` (the rest of that span: the core reading the tensors); from the last read to loadCheckpoint's end (import.finish): ` +
      `${ms(r.readsTo === null ? null : r.loaded - r.readsTo)}`);
    console.log(`  then: first forward (weights packed) ${ms(r.first)}; second forward ${ms(r.second)}; head finder's probe ${ms(r.scores)}`);
  }
} finally {
  await context?.close();
  await browser?.close();
  server.stop();
  await hub.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
}
