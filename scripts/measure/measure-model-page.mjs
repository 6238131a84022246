// Measures the Your model view as a reader types, in Chromium, Firefox or WebKit (scripts/lib/drivers.mjs): a
// GPT-2-small-sized checkpoint (build/bench-gpt2/, written by scripts/data/make-gpt2-bench-model.py: random
// weights, F32) is loaded by Hub id from the local stand-in of the Hub (scripts/lib/hub-stand-in.mjs: WebDriver cannot
// drop files), its config.json and model.safetensors only, so the page tokenizes with GPT-2's own tokenizer, as
// when the two files are dropped in. (Playwright's Chromium contexts, like a private window, refuse to keep 498 MB in
// Cache Storage: the page then reads the weights by ranges, a longer load, the same model.)
// A text of about --tokens GPT-2 tokens is typed into, one key at a time, each key timed from its input event to
// the redraw of every head and the next-token list (the page's data-model-run after the run it started, then one
// animation frame).
// The page is served cross-origin isolated (the model worker runs on the threaded build; WebKitGTK, isolated but
// without SharedArrayBuffer, on one thread) and, with --both, also without the headers (one thread), one after the
// other. Prints, per engine, its version, the model worker's threads, each key's time, the median and the ratio.
// Firefox and WebKit round performance.now() to 1 ms on a page that is not cross-origin isolated: their times
// there are whole milliseconds.
// Usage: node scripts/measure/measure-model-page.mjs [--engine chromium|firefox|webkit|all] [--tokens 32]
//   [--keys 9] [--both]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { serveDist } from '../lib/browser.mjs';
import { ENGINES, launchEngine } from '../lib/drivers.mjs';
import { startStandIn } from '../lib/hub-stand-in.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const tokens = Number(option('tokens', 32));
const keys = Number(option('keys', 9));
const both = process.argv.includes('--both');
const engineArg = option('engine', 'chromium');
const engines = engineArg === 'all' ? ENGINES : [engineArg];
if (!engines.every((name) => ENGINES.includes(name))) throw new Error(`--engine takes ${ENGINES.join(', ')} or all, got ${engineArg}`);
const dir = join(process.cwd(), 'build/bench-gpt2');
if (!existsSync(join(dir, 'model.safetensors'))) {
  throw new Error('build/bench-gpt2/model.safetensors is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py');
}
const REPO = 'bench/gpt2-small';
const LOAD_TIMEOUT = 900000; // 498 MB through the stand-in and into Cache Storage
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** In the page: the Hub load's end (the first counted load, or its error), else null. */
function loadEnded() {
  const error = document.querySelector('#model-error');
  return (document.body.dataset.modelLoads === '1' || !error.hidden) && {
    error: error.hidden ? null : error.textContent, name: document.body.dataset.modelName,
    source: document.body.dataset.modelSource, threads: document.body.dataset.modelThreads, isolated: crossOriginIsolated,
  };
}

/** In the page: each key's input event starts a clock, the redraw of the run it started (and one frame) stops it. */
function timeKeys() {
  window.keyTimes = [];
  const field = document.querySelector('#model-text');
  field.addEventListener('input', () => {
    window.keyStart = performance.now();
    window.runBefore = document.body.dataset.modelRun;
  });
  new MutationObserver(() => {
    if (window.keyStart && document.body.dataset.modelRun !== window.runBefore) {
      // the run's redraw is synchronous with the attribute; wait one frame for the paint
      const start = window.keyStart;
      window.keyStart = 0;
      requestAnimationFrame(() => window.keyTimes.push(performance.now() - start));
    }
  }).observe(document.body, { attributes: true, attributeFilter: ['data-model-run'] });
}

async function measure(engine, hub, isolated) {
  const server = await serveDist({ isolated });
  const page = await engine.newPage({ width: 1280, height: 900 });
  try {
    const started = Date.now();
    await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}&hub=${encodeURIComponent(REPO)}`);
    const loaded = await page.waitFor(loadEnded, null, LOAD_TIMEOUT, `the load of ${REPO}`);
    if (loaded.error) throw new Error(loaded.error);
    if (loaded.name !== REPO || loaded.source !== 'hub') throw new Error(`loaded ${loaded.source} ${loaded.name}, not ${REPO} from the Hub`);
    if (loaded.isolated !== isolated) throw new Error(`crossOriginIsolated is ${loaded.isolated}`);
    const loadSeconds = (Date.now() - started) / 1000;
    await page.waitFor(() => document.querySelectorAll('#model-next li').length > 0, null, 60000, 'the next tokens');
    // about `tokens` GPT-2 tokens: common words, one token each with their space
    const words = 'the cat sat on the mat and then it went to see what was in the big red box by the door of the old house where we ' +
      'all used to live when I was a child and my mother had a small garden with trees';
    const text = words.split(' ').slice(0, Math.max(1, tokens - 1)).join(' ');
    const run = await page.evaluate(() => document.body.dataset.modelRun);
    await page.fill('#model-text', text);
    await page.waitFor((before) => document.body.dataset.modelRun !== before, run, 120000, 'the run of the text');
    await sleep(3000);
    await page.evaluate(timeKeys);
    for (let k = 0; k < keys; ++k) {
      await page.type('#model-text', k % 2 ? 'e' : 's');
      await page.waitFor((n) => window.keyTimes.length > n, k, 120000, `key ${k + 1}'s redraw`);
      await sleep(300);
    }
    const times = await page.evaluate(() => window.keyTimes);
    const n = Number(await page.evaluate(() => document.querySelector('#model-text-info')?.textContent.match(/\d+/)?.[0]));
    console.log(`${engine.version}, ${isolated ? 'cross-origin isolated' : 'not isolated'}: model worker on ${loaded.threads} thread(s); ` +
      `loaded in ${loadSeconds.toFixed(0)} s; ${n} tokens; key → redraw (all 144 heads + next tokens) ms: ` +
      `${times.map((t) => t.toFixed(0)).join(' ')}; median ${median(times).toFixed(0)} ms` +
      `${!isolated && engine.name !== 'chromium' ? ' (performance.now() in whole ms here)' : ''}`);
    return median(times);
  } finally {
    await page.close();
    server.stop();
  }
}

const hub = await startStandIn({
  [REPO]: { 'config.json': readFileSync(join(dir, 'config.json')), 'model.safetensors': readFileSync(join(dir, 'model.safetensors')) },
});
let failed = false;
try {
  for (const name of engines) {
    let engine;
    try {
      engine = await launchEngine(name);
      const results = [await measure(engine, hub, true)];
      if (both) {
        results.push(await measure(engine, hub, false));
        console.log(`${engine.version}: not isolated / isolated: ${(results[1] / results[0]).toFixed(2)}×`);
      }
    } catch (error) {
      failed = true;
      console.log(`${engine?.version ?? name}: failed: ${error.message}`);
    } finally {
      await engine?.close();
    }
  }
} finally {
  await hub.close();
}
if (failed) process.exitCode = 1;
