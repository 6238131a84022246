// Screenshots of the Your model view with real-sized models, for a person to look at: the bench's
// GPT-2-small-sized checkpoint (build/bench-gpt2/, 12 layers × 12 heads, scripts/data/make-gpt2-bench-model.py)
// and the SmolLM2-135M-shaped grouped-query Llama in BF16 (build/bench-llama/, 30 layers, 9 query heads sharing 3
// K/V heads, scripts/data/make-llama-bench-model.py; a byte-level tokenizer.json of its vocabulary's size), each loaded by
// Hub id from the local stand-in of the Hub (scripts/lib/hub-stand-in.mjs), in Chromium at 1280 × 900 and 375 × 800:
// the whole view after the load (NAME-WIDTH.png), its Generate panel after 12 greedy tokens (NAME-WIDTH-generate.png),
// a head's larger view (NAME-WIDTH-head.png), that head opened in the walkthrough (NAME-WIDTH-walkthrough.png), and the
// load's line while the weights are prepared (NAME-WIDTH-preparing.png, when the load is slow enough to catch it).
// Usage: node scripts/measure/model-screenshots.mjs [out-dir] [--only gpt2|llama]
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { byteLevelTokenizer } from '../lib/bench-tokenizer.mjs';
import { CHROMIUM_ARGS, screenshotDir, serveDist } from '../lib/browser.mjs';
import { startStandIn } from '../lib/hub-stand-in.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--only');
const only = at >= 0 ? args.splice(at, 2)[1] : null;
const out = args[0] ?? join(screenshotDir, 'model');
mkdirSync(out, { recursive: true });

const MODELS = [
  { name: 'gpt2', repo: 'bench/gpt2-small', dir: 'build/bench-gpt2', weights: 'model.safetensors', script: 'make-gpt2-bench-model.py' },
  { name: 'llama', repo: 'bench/smollm2-135m', dir: 'build/bench-llama', weights: 'model-bf16.safetensors', script: 'make-llama-bench-model.py',
    tokenizer: true },
].filter((m) => !only || m.name === only);
const repos = {};
for (const m of MODELS) {
  if (!existsSync(join(m.dir, m.weights))) throw new Error(`${m.dir}/${m.weights} is missing: run /usr/bin/python3 scripts/data/${m.script}`);
  const config = JSON.parse(readFileSync(join(m.dir, 'config.json'), 'utf8'));
  repos[m.repo] = { 'config.json': config, 'model.safetensors': readFileSync(join(m.dir, m.weights)),
    ...(m.tokenizer ? { 'tokenizer.json': byteLevelTokenizer(config.vocab_size) } : {}) };
}
const VIEWPORTS = [{ width: 1280, height: 900 }, { width: 375, height: 800 }];
// About 45 tokens: long enough that a tile's square has to be scaled down to fit.
const TEXT = 'When Mary and John went to the store, John gave a drink to Mary. Later that evening they walked home along the river, ' +
  'talking about the books they had read and the places they wanted to see next summer.';

const hub = await startStandIn(repos);
const server = await serveDist();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
const shot = (name) => join(out, `${name}.png`);
try {
  for (const m of MODELS) {
    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      const base = `${m.name}-${viewport.width}`;
      await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}&hub=${encodeURIComponent(m.repo)}` +
        `&modelText=${encodeURIComponent(TEXT)}`);
      // The load's line while the weights are prepared (once, if the load is slow enough to catch it).
      try {
        await page.waitForFunction(() => /^Preparing weights/.test(document.querySelector('#model-load-status')?.textContent ?? ''), null,
          { timeout: 600000 });
        await page.locator('#model-hub-form').scrollIntoViewIfNeeded();
        await page.screenshot({ path: shot(`${base}-preparing`) });
      } catch { /* loaded before it could be seen */ }
      await page.waitForFunction(() => document.body.dataset.modelLoads === '1' || !document.querySelector('#model-error').hidden, null,
        { timeout: 600000 });
      const error = await page.evaluate(() => (document.querySelector('#model-error').hidden ? null : document.querySelector('#model-error').textContent));
      if (error) throw new Error(`${m.repo}: ${error}`);
      await page.waitForFunction(() => document.querySelectorAll('#model-finder tbody tr').length > 0 &&
        document.querySelectorAll('#model-next li').length > 0, null, { timeout: 120000 });
      await page.waitForTimeout(500);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: shot(base), fullPage: true });
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);

      // Generate 12 greedy tokens: the panel.
      await page.fill('#model-gen-tokens', '12');
      await page.click('#model-gen-start');
      await page.waitForFunction(() => document.body.dataset.modelGenerated !== undefined, null, { timeout: 300000 });
      await page.waitForTimeout(400);
      await page.locator('#model-gen-title').locator('xpath=..').screenshot({ path: shot(`${base}-generate`) });

      // A head's larger view, then the walkthrough from it.
      await page.locator('#model-head-grid .model-tile[data-layer="0"][data-head="1"] canvas').click();
      await page.waitForSelector('#model-head-dialog[open]');
      await page.waitForTimeout(300);
      await page.screenshot({ path: shot(`${base}-head`) });
      await page.click('#model-head-walkthrough');
      await page.waitForFunction(() => !document.querySelector('#walkthrough-view').hidden &&
        document.querySelector('#walkthrough').dataset.model === 'train-view' && document.querySelector('#matrices canvas'), null, { timeout: 120000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: shot(`${base}-walkthrough`), fullPage: true });
      const footer = await page.textContent('#status');
      console.log(`${base}: ${m.repo} ${sideways > 0 ? `${sideways} px sideways scroll` : 'no sideways scroll'}; walkthrough footer: ${footer}` +
        `${errors.length ? `; page errors: ${[...new Set(errors)].join(' | ')}` : ''}`);
      await context.close();
    }
  }
} finally {
  await browser.close();
  server.stop();
  await hub.close();
}
console.log(`screenshots in ${out}`);
