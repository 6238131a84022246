// Times a GPT-2-small-sized forward (build/bench-gpt2/, written by
// scripts/data/make-gpt2-bench-model.py: random F32 weights) in node on one thread and on two (the
// threaded build): 29 tokens with the last position's logits and with all of them, and 1 024
// tokens with the last position's; medians of 7 (3 at 1 024) after a warm-up call.
// Usage: node scripts/measure/forward-threads.mjs   (after npm run build)
import fs from 'node:fs';

import { MODULE_URL } from '../lib/golden.mjs';

const dir = new URL('../../build/bench-gpt2/', import.meta.url);
if (!fs.existsSync(new URL('model.safetensors', dir))) {
  throw new Error('build/bench-gpt2/model.safetensors is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py');
}
const config = JSON.parse(fs.readFileSync(new URL('config.json', dir), 'utf8'));
const api = await import(MODULE_URL.href);
for (const threads of [1, 2]) {
  const lens = await api.loadAttentionLens({ threads });
  const model = await lens.loadCheckpoint({ weights: await fs.openAsBlob(new URL('model.safetensors', dir)), config });
  for (const [n, logits] of [[29, 'last'], [29, 'all'], [1024, 'last']]) {
    const ids = Int32Array.from({ length: n }, (_, i) => (i * 7919 + 13) % config.vocab_size);
    model.forward(ids, { n, logits });
    const times = [];
    for (let r = 0; r < (n > 500 ? 3 : 7); ++r) {
      const t = performance.now();
      model.forward(ids, { n, logits });
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`${lens.threads} thread${lens.threads > 1 ? 's' : ''}, ${n} tokens, logits '${logits}': ` +
      `median ${times[Math.floor(times.length / 2)].toFixed(0)} ms`);
  }
  model.dispose();
}
process.exit(0);  // the threaded build's workers
