// Loads random BF16 checkpoints in the shapes of real models (SmolLM2-135M, SmolLM2-360M,
// Qwen2.5-0.5B, TinyLlama-1.1B: their config.json's sizes) in node and prints, per model: the
// file's size, the load time, how much the wasm heap grew against the file's size (after the load,
// and after the first forward, which packs the weights once: see Model::pack_weights), and the
// median of 5 forwards at 32 tokens (all layers' attention; all the logits, and the last
// position's only). The weights are random (the real ones are not downloaded here): the numbers
// are of memory and time, not of text.
// Usage: node scripts/measure/real-model-shapes.mjs [--threads N] [name …]   (after npm run build)
import { MODULE_URL } from '../lib/golden.mjs';
import { SHAPES, checkpoint } from '../lib/random-checkpoint.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const threadsAt = process.argv.indexOf('--threads');
const threads = threadsAt > 0 ? Number(process.argv[threadsAt + 1]) : 1;
const args = process.argv.slice(2).filter((a, i, all) => a !== '--threads' && all[i - 1] !== '--threads');
const names = args.length ? args : Object.keys(SHAPES);
for (const name of names) {
  const { file, config } = checkpoint(SHAPES[name]);
  const lens = await (await import(`${MODULE_URL.href}?${name}`)).loadAttentionLens({ threads });
  const before = lens.memory().heapBytes;
  const started = performance.now();
  const model = await lens.loadCheckpoint({ weights: file, config });
  const load = performance.now() - started;
  const grown = lens.memory().heapBytes - before;
  const ids = Int32Array.from({ length: 32 }, (_, i) => (i * 7919) % config.vocab_size);
  const timed = (logits) => {
    const times = [];
    for (let r = 0; r < 5; ++r) {
      const t = performance.now();
      model.forward(ids, { logits });
      times.push(performance.now() - t);
    }
    return median(times);
  };
  const all = timed('all');
  const grownForward = lens.memory().heapBytes - before;
  const last = timed('last');
  console.log(`${name} (${lens.threads} thread${lens.threads > 1 ? 's' : ''}): file ${(file.length / 1e6).toFixed(0)} MB, ` +
    `load ${(load / 1000).toFixed(2)} s, heap grew ${(grown / 1e6).toFixed(0)} MB (${(grown / file.length).toFixed(3)}× the file), ` +
    `after the first forward ${(grownForward / 1e6).toFixed(0)} MB (${(grownForward / file.length).toFixed(3)}×); forward at 32 ` +
    `tokens ${all.toFixed(0)} ms, last position's logits only ${last.toFixed(0)} ms (medians of 5)`);
  model.dispose();
}
