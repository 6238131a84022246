// Two builds of the module side by side in one process (e.g. main before and after a refactor):
// a SmolLM2-135M-shaped random BF16 checkpoint's forward at 64 tokens (every layer's attention),
// 32 greedy tokens generated after a 16-token prompt (the KV cache), and the walkthrough layer's
// forward (d_model 256, 8 heads, 128 tokens, causal). Rounds alternate A and B; prints each
// build's median, B / A of the medians, and the median of each round's own B / A (steadier on a
// busy machine). Both builds get the same inputs, so their outputs must agree too.
// Usage: node scripts/measure/compare-builds.mjs A/attention-lens.mjs B/attention-lens.mjs [--rounds 7]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SHAPES, checkpoint } from '../lib/random-checkpoint.mjs';

const [fileA, fileB] = process.argv.slice(2).filter((a) => a.endsWith('.mjs'));
if (!fileA || !fileB) throw new Error('usage: compare-builds.mjs A/attention-lens.mjs B/attention-lens.mjs [--rounds N]');
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 7;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function open(file) {
  const { loadAttentionLens } = await import(pathToFileURL(path.resolve(file)).href);
  const wasm = fs.readFileSync(path.resolve(file).replace(/\.mjs$/, '.wasm'));
  return loadAttentionLens({ wasmBinary: wasm });
}

const { file, config } = checkpoint(SHAPES['SmolLM2-135M']);
const ids = Int32Array.from({ length: 64 }, (_, i) => (i * 7919) % config.vocab_size);
const input = Float32Array.from({ length: 128 * 256 }, (_, i) => Math.sin(i * 0.37));
const builds = [];
for (const [name, where] of [['A', fileA], ['B', fileB]]) {
  const lens = await open(where);
  const model = await lens.loadCheckpoint({ weights: file, config });
  const layer = lens.createLayer({ dModel: 256, heads: 8, seed: 3 });
  builds.push({ name, where, model, layer, times: { forward: [], generate: [], layer: [] } });
}
const runs = {
  forward: (b) => b.model.forward(ids, { n: 64 }).logits,
  generate: (b) => b.model.generate(ids.subarray(0, 16), { maxTokens: 32, temperature: 0 }).ids,
  layer: (b) => b.layer.forward(input, { n: 128, mask: 'causal' }).output,
};
for (const b of builds) for (const run of Object.values(runs)) run(b); // warm-up: packs the weights once
for (let r = 0; r < ROUNDS; ++r) {
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    for (const [what, run] of Object.entries(runs)) {
      const t = performance.now();
      run(b);
      b.times[what].push(performance.now() - t);
    }
  }
}
const [a, b] = builds;
for (const what of Object.keys(runs)) {
  const same = String(runs[what](a)) === String(runs[what](b)) ? 'outputs equal' : 'OUTPUTS DIFFER';
  const ma = median(a.times[what]), mb = median(b.times[what]);
  // Each round's own B / A (A and B ran back to back), so a slow stretch of the machine moves both.
  const ratios = a.times[what].map((ta, r) => b.times[what][r] / ta);
  const spread = `round ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  console.log(`${what.padEnd(8)} A ${ma.toFixed(1)} ms  B ${mb.toFixed(1)} ms  B/A ${(mb / ma).toFixed(3)}, median round ratio ${median(ratios).toFixed(3)} (${spread}; medians of ${ROUNDS}; ${same})`);
}
console.log(`A = ${a.where}\nB = ${b.where}`);
