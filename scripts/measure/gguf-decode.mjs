// Decode speed of the GGUF files the wllama bench writes (build/bench-gguf/135m-*.gguf, SmolLM2-135M-shaped,
// seeded random weights: run `node tests/bench/wllama-bench.mjs 135m` once first), in Node rather than Chromium:
// lens.loadCheckpoint({ weights }) then m.generate of 33 greedy tokens after a 64-token prompt, 5 runs; prints the
// median time to the first token and the median decode tokens/s of the 32 after it.
// Usage: node scripts/measure/gguf-decode.mjs [--threads 1|2] [F32 F16 Q8_0 Q4_0 Q4_K_M]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const at = process.argv.indexOf('--threads');
const threads = at > 0 ? Number(process.argv[at + 1]) : 1;
const formats = process.argv.filter((a) => /^(F32|F16|Q8_0|Q4_0|Q4_K_M)$/.test(a));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const { loadAttentionLens } = await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href);
const lens = threads > 1 ? await loadAttentionLens({ threads })
  : await loadAttentionLens({ wasmBinary: fs.readFileSync(path.join(root, 'dist/attention-lens.wasm')) });
console.log(`# GGUF decode in Node ${process.version}, ${lens.threads} thread(s)`);
for (const format of formats.length ? formats : ['Q8_0', 'Q4_0', 'Q4_K_M']) {
  const file = path.join(root, `build/bench-gguf/135m-${format}.gguf`);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run node tests/bench/wllama-bench.mjs 135m first`);
  const m = await lens.loadCheckpoint({ weights: await fs.openAsBlob(file) });
  const ids = Int32Array.from({ length: 64 }, (_, i) => ((i * 131 + 7) % 1000) + 100);
  const firsts = [], rates = [];
  for (let run = 0; run < 5; ++run) {
    const stamps = [];
    const start = performance.now();
    m.generate(ids, { maxTokens: 33, temperature: 0, onToken: () => stamps.push(performance.now()) });
    firsts.push(stamps[0] - start);
    rates.push(32 / ((stamps[32] - stamps[0]) / 1000));
  }
  console.log(`${format}: first token ${median(firsts).toFixed(0)} ms, decode ${median(rates).toFixed(1)} tok/s (holds ${(m.weights.memory / 1e6).toFixed(0)} MB)`);
  m.dispose();
}
