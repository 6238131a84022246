// Measures what the <attention-lens> element's smaller module saves a reader: in Chromium, the time
// from importing the single-file module (wasm inlined as base64) to a ready lens, for the full
// module (attention-lens.single.mjs) and the element's (attention-lens.embed.mjs: no trainer or
// checkpoint import), alternating, each in a fresh browser context (nothing cached). Prints sizes
// and medians. Run after `npm run build`.
// Usage: node scripts/measure/measure-embed-module.mjs [--rounds 9]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { launchBrowser, serveDist } from '../lib/browser.mjs';

const roundsAt = process.argv.indexOf('--rounds');
const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 9;
const MODULES = { full: 'attention-lens.single.mjs', element: 'attention-lens.embed.mjs' };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await serveDist({ dir: 'build/wasm-release' });
const { browser, close } = await launchBrowser();
const times = { full: [], element: [] };
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, file] of Object.entries(MODULES)) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${server.url}${file}`); // any same-origin document to import from
      times[name].push(await page.evaluate(async (url) => {
        const started = performance.now();
        const { loadAttentionLens } = await import(url);
        const lens = await loadAttentionLens();
        const layer = lens.createLayer({ dModel: 64, heads: 4 }); // the element's first use
        layer.forward(new Float32Array(6 * 64), { n: 6 });
        layer.dispose();
        return performance.now() - started;
      }, `${server.url}${file}`));
      await context.close();
    }
  }
} finally {
  await close();
  server.stop();
}
for (const [name, file] of Object.entries(MODULES)) {
  const bytes = readFileSync(new URL(`../../build/wasm-release/${file}`, import.meta.url));
  console.log(`${name.padEnd(8)} ${file.padEnd(26)} ${String(bytes.length).padStart(7)} B ` +
    `(${gzipSync(bytes, { level: 9 }).length} gzipped)  import to first forward: median ` +
    `${median(times[name]).toFixed(1)} ms of ${rounds} (${times[name].map((t) => t.toFixed(0)).join(', ')})`);
}
console.log(`ratio full / element: ${(median(times.full) / median(times.element)).toFixed(2)}x`);
