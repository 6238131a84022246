// The analysis functions' cost against one forward (issue 32's speed lines): m.logitLens,
// m.rollout, m.attribute and m.patch on the GPT-2-small-sized bench model (build/bench-gpt2, written by
// scripts/data/make-gpt2-bench-model.py) at 16 tokens, at 1 and 2 threads. Medians of interleaved
// rounds, ms per call, and each call's ratio to a forward that computes every row's logits and
// to one that computes the last row's (what the page's next-token line needs).
// Usage: node tests/bench/analysis-bench.mjs [--quick]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'build/bench-gpt2');
const ROUNDS = process.argv.includes('--quick') ? 3 : 7;
const N = 16;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const file of ['model.safetensors', 'config.json']) {
  if (!fs.existsSync(path.join(dir, file))) {
    throw new Error(`build/bench-gpt2/${file} is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py`);
  }
}
const { loadAttentionLens } = await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href);
const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
const weights = await fs.openAsBlob(path.join(dir, 'model.safetensors'));
const ids = Int32Array.from({ length: N }, (_, i) => (i * 7919) % config.vocab_size);
const [a, b] = [ids[N - 1], ids[N - 2]];
const PATCH_ROUNDS = process.argv.includes('--quick') ? 1 : 3;
const oneDiffers = ids.slice();
oneDiffers[10] = (ids[10] + 1) % config.vocab_size;
const PAIRS = {
  'one token differs': oneDiffers,
  'every token differs': Int32Array.from({ length: N }, (_, i) => (i * 104729 + 11) % config.vocab_size),
};
const patchTimes = {};

console.log(`# Analysis on a GPT-2-small-sized model (${config.n_layer} layers × ${config.n_head} heads, d ${config.n_embd}), ${N} tokens (Node ${process.version})`);
console.log();
console.log('| threads | call | ms (median) | / forward, every row\'s logits | / forward, last row\'s |');
console.log('|---|---|---|---|---|');
for (const threads of [1, 2]) {
  const lens = threads > 1 ? await loadAttentionLens({ threads })
    : await loadAttentionLens({ wasmBinary: fs.readFileSync(path.join(root, 'dist/attention-lens.wasm')) });
  if (lens.threads !== threads) throw new Error(`asked for ${threads} threads, got ${lens.threads}`);
  const m = await lens.loadCheckpoint({ weights, config });
  const calls = {
    'forward (every row)': () => m.forward(ids, { logits: 'all' }),
    'forward (last row)': () => m.forward(ids, { logits: 'last' }),
    'logitLens (top 5, a token)': () => m.logitLens(ids, { topK: 5, token: a }),
    rollout: () => m.rollout(ids),
    attribute: () => m.attribute(ids, { answers: [a, b] }),
  };
  const times = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  for (const call of Object.values(calls)) call(); // warm-up: packs the weights once
  for (let r = 0; r < ROUNDS; ++r) {
    for (const [name, call] of Object.entries(calls)) {
      const t = performance.now();
      call();
      times[name].push(performance.now() - t);
    }
  }
  const all = median(times['forward (every row)']), last = median(times['forward (last row)']);
  for (const name of Object.keys(calls)) {
    const ms = median(times[name]);
    console.log(`| ${threads} | ${name} | ${ms.toFixed(1)} | ${(ms / all).toFixed(2)}× | ${(ms / last).toFixed(2)}× |`);
  }
  patchTimes[threads] = { last, all, ms: timePatching(m) };
  m.dispose();
}
console.log();
console.log(`medians of ${ROUNDS} interleaved rounds after a warm-up call each`);

// m.patch: every head (layers × heads sites), the residual stream (layers × n sites) and the
// sublayers (2 × layers), on two prompt pairs: one token differs (position 10 of 16, as in an IOI
// pair where one name is swapped; the reruns start there) and every token differs (the most work:
// every rerun computes all 16 positions).
function timePatching(m) {
  const times = {};
  for (const [pair, corrupted] of Object.entries(PAIRS)) {
    for (const over of ['heads', 'residual', 'layers']) {
      const samples = [];
      for (let r = 0; r < PATCH_ROUNDS; ++r) {
        const t = performance.now();
        m.patch({ clean: ids, corrupted, answers: [a, b], over });
        samples.push(performance.now() - t);
      }
      times[`${pair}|${over}`] = median(samples);
    }
  }
  return times;
}
console.log();
console.log('| prompts | over (sites) | 1 thread: ms | / forward | 2 threads: ms | / forward | 1 → 2 threads |');
console.log('|---|---|---|---|---|---|---|');
const sites = { heads: `${config.n_layer * config.n_head}`, residual: `${config.n_layer} × ${N}`, layers: `2 × ${config.n_layer}` };
for (const pair of Object.keys(PAIRS)) {
  for (const over of ['heads', 'residual', 'layers']) {
    const one = patchTimes[1].ms[`${pair}|${over}`], two = patchTimes[2].ms[`${pair}|${over}`];
    console.log(`| ${pair} | ${over} (${sites[over]}) | ${one.toFixed(0)} | ${(one / patchTimes[1].last).toFixed(1)}× | ` +
      `${two.toFixed(0)} | ${(two / patchTimes[2].last).toFixed(1)}× | ${(one / two).toFixed(2)}× |`);
  }
}
console.log();
console.log(`medians of ${PATCH_ROUNDS} calls each; "/ forward": over one forward with the last row's logits in the same run`);
