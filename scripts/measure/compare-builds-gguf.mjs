// Two builds' generation on the bench's GGUF files, side by side in one headless Chromium page
// (cross-origin isolated): both builds loaded, the same file in each, runs alternating A and B;
// prints each build's median decode tok/s (63 tokens after the first of 64, after a 64-token
// prompt) and A / B. Used for the quantized kernels' changes (docs/benchmarks.md, "Generation on GGUF files").
// The files are wllama-bench's (build/bench-gguf/135m-*.gguf: run node tests/bench/wllama-bench.mjs
// 135m once). Both builds must give the same ids.
// Usage: node scripts/measure/compare-builds-gguf.mjs DIST_A DIST_B [--threads 1|2] [FORMAT…]
//        (a dist is a folder holding attention-lens.mjs and its wasm, e.g. a copy of dist/ before a change;
//        FORMAT: F32 F16 Q8_0 Q4_0 Q4_K_M, default Q8_0 Q4_0 Q4_K_M)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchBrowser, openPage, serveDist } from '../lib/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const threadsAt = args.indexOf('--threads');
const threads = threadsAt >= 0 ? Number(args[threadsAt + 1]) : 1;
const rest = threadsAt >= 0 ? args.filter((a, i) => i !== threadsAt && i !== threadsAt + 1) : args;
const [distA, distB, ...chosen] = rest;
if (!distA || !distB) throw new Error('usage: compare-builds-gguf.mjs DIST_A DIST_B [--threads 1|2] [FORMAT…]');
const formats = chosen.length ? chosen : ['Q8_0', 'Q4_0', 'Q4_K_M'];
for (const dist of [distA, distB]) {
  if (!fs.existsSync(path.join(dist, 'attention-lens.mjs'))) throw new Error(`${dist} holds no attention-lens.mjs`);
}
for (const format of formats) {
  if (!fs.existsSync(path.join(root, `build/bench-gguf/135m-${format}.gguf`))) {
    throw new Error(`build/bench-gguf/135m-${format}.gguf is missing: run node tests/bench/wllama-bench.mjs 135m first`);
  }
}

// The page's folder: A/ and B/ the builds, gguf/ the bench's files.
const www = path.join(root, 'build/compare-gguf-www');
fs.rmSync(www, { recursive: true, force: true });
fs.mkdirSync(www, { recursive: true });
fs.symlinkSync(path.resolve(distA), path.join(www, 'A'));
fs.symlinkSync(path.resolve(distB), path.join(www, 'B'));
fs.symlinkSync(path.join(root, 'build/bench-gguf'), path.join(www, 'gguf'));
fs.writeFileSync(path.join(www, 'index.html'), '<!doctype html><title>two builds</title><p>two builds</p>\n');

const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];
const server = await serveDist({ dir: path.relative(root, www) });
const { browser, close } = await launchBrowser();
try {
  console.log(`# GGUF decode, A = ${distA}, B = ${distB}, ${threads} thread(s), Chromium ${browser.version()}`);
  for (const format of formats) {
    const { page } = await openPage(browser, server.url.replace(/\/$/, ''));
    await page.goto(server.url);
    const { rates, same } = await page.evaluate(async ({ threads, format }) => {
      const blob = await (await fetch(`/gguf/135m-${format}.gguf`)).blob();
      const models = [];
      for (const dir of ['A', 'B']) {
        const { loadAttentionLens } = await import(`/${dir}/attention-lens.mjs`);
        const lens = await loadAttentionLens({ threads });
        models.push(await lens.loadCheckpoint({ weights: blob }));
      }
      const prompt = Int32Array.from({ length: 64 }, (_, i) => ((i * 131 + 7) % 1000) + 100);
      const rates = [[], []], ids = [];
      for (let run = 0; run < 7; ++run) {
        for (const which of run % 2 ? [1, 0] : [0, 1]) {
          const stamps = [];
          const g = models[which].generate(prompt, { maxTokens: 64, temperature: 0, stop: [], onToken: () => stamps.push(performance.now()) });
          rates[which].push(63 / ((stamps[63] - stamps[0]) / 1000));
          ids[which] = Array.from(g.ids).join(' ');
        }
      }
      return { rates, same: ids[0] === ids[1] };
    }, { threads, format });
    const [a, b] = rates.map(median);
    console.log(`${format}: A ${a.toFixed(1)} tok/s, B ${b.toFixed(1)} tok/s, A / B ${(a / b).toFixed(3)}` +
      `${same ? '' : '  (the builds generated different ids)'}`);
    await page.context().close();
  }
} finally {
  await close();
  server.stop();
}
