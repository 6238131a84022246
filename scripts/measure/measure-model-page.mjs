// Measures the Your model view as a reader types, in Chromium, Firefox or WebKit (scripts/lib/drivers.mjs): a
// checkpoint is loaded by Hub id from the local stand-in of the Hub (scripts/lib/hub-stand-in.mjs: WebDriver cannot
// drop files), then a text of about --tokens tokens is typed into, one key at a time, each key timed from its input
// event to the redraw of every head and the next-token list (the page's data-model-run after the run it started,
// then one animation frame), once the head finder (its probe runs after the load, in the same worker) is drawn or
// has said why it cannot run (printed: how long after the load it was drawn).
// The checkpoint:
// - by default, a GPT-2-small-sized one (build/bench-gpt2/, written by scripts/data/make-gpt2-bench-model.py:
//   random weights, F32), its config.json and model.safetensors only, so the page tokenizes with GPT-2's own
//   tokenizer, as when the two files are dropped in; the text is common English words;
// - with --gguf <shape> (scripts/lib/gguf-writer.mjs's SHAPES: 1.5b, 135m, 360m), a GGUF file of that shape from
//   seeded random weights in --format (default Q4_K_M; the 1.5b shape is written as Q4_K_M only), written into
//   build/bench-gguf/ once (the wllama bench's cache), served as repo bench/<name>-GGUF with its one file and
//   loaded by id + file (the URL's hub and hubFile); the text is the writer's promptText, --tokens words of one
//   token each. Also printed: the file's tensor types, the wasm memory the page's status line reports once
//   loaded, and whether the browser kept the file in Cache Storage (one whole GET, then read from the cache) or
//   read it by ranges (it refused to keep it: a second pass over the file).
// (Playwright's Chromium contexts, like a private window, refuse to keep 498 MB in Cache Storage: the page then
// reads the weights by ranges, a longer load, the same model.)
// The page is served cross-origin isolated (the model worker runs on the threaded build; WebKitGTK, isolated but
// without SharedArrayBuffer, on one thread) and, with --both, also without the headers (one thread), one after the
// other. Prints, per engine, its version, the model worker's threads, the load's seconds, each key's time, the
// median and the ratio.
// Firefox and WebKit round performance.now() to 1 ms on a page that is not cross-origin isolated: their times
// there are whole milliseconds.
// Usage: node scripts/measure/measure-model-page.mjs [--engine chromium|firefox|webkit|all] [--tokens 32]
//   [--keys 9] [--both] [--gguf 1.5b|135m|360m [--format Q4_K_M]]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { serveDist } from '../lib/browser.mjs';
import { ENGINES, launchEngine } from '../lib/drivers.mjs';
import { startStandIn } from '../lib/hub-stand-in.mjs';
import { SHAPES, ensureModelFile, promptText, vocabulary } from '../lib/gguf-writer.mjs';

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
const ggufShape = option('gguf', null);

/**
 * What is loaded and typed: { repo (the stand-in's id), files (its files), file (the URL's hubFile, or null),
 * label (the page's name for the model), text, loadTimeout (ms), about (a line on the file) }.
 */
function checkpointSource() {
  if (ggufShape) {
    const shape = SHAPES[ggufShape];
    if (!shape) throw new Error(`--gguf takes ${Object.keys(SHAPES).join(', ')}, got ${ggufShape}`);
    const format = option('format', 'Q4_K_M');
    const made = ensureModelFile(join(process.cwd(), 'build/bench-gguf'), ggufShape, format, { log: console.log });
    const repo = `bench/${shape.name}-GGUF`;
    const file = `${shape.name}-shaped-random-${format}.gguf`;
    const types = Object.entries(made.types).map(([t, n]) => `${t} × ${n}`).join(', ');
    return { repo, file, files: { 'README.md': `# ${shape.name}-shaped random weights (Attention Lens bench)`, [file]: readFileSync(made.path) },
      label: `${repo} (${file})`, text: promptText(vocabulary(shape.vocab), tokens).text,
      // up to about 1 GB through the stand-in, into Cache Storage or read again by ranges, then the import
      loadTimeout: 1200000,
      about: `${file}: ${shape.name}-shaped (${shape.layers} layers × ${shape.heads} heads, ${shape.kvHeads} KV heads, d_model ${shape.hidden}, ` +
        `ff ${shape.ff}, vocab ${shape.vocab}) llama GGUF of random weights, ${(made.fileBytes / 1e6).toFixed(0)} MB: ${types}` };
  }
  const dir = join(process.cwd(), 'build/bench-gpt2');
  if (!existsSync(join(dir, 'model.safetensors'))) {
    throw new Error('build/bench-gpt2/model.safetensors is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py');
  }
  // about `tokens` GPT-2 tokens: common words, one token each with their space
  const words = 'the cat sat on the mat and then it went to see what was in the big red box by the door of the old house where we ' +
    'all used to live when I was a child and my mother had a small garden with trees';
  const repo = 'bench/gpt2-small';
  return { repo, file: null, files: { 'config.json': readFileSync(join(dir, 'config.json')), 'model.safetensors': readFileSync(join(dir, 'model.safetensors')) },
    label: repo, text: words.split(' ').slice(0, Math.max(1, tokens - 1)).join(' '),
    loadTimeout: 900000, // 498 MB through the stand-in and into Cache Storage
    about: 'GPT-2-small-sized model.safetensors (random weights, F32), 498 MB' };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** In the page: the Hub load's end (the first counted load, or its error), else null. */
function loadEnded() {
  const error = document.querySelector('#model-error');
  const status = document.querySelector('#model-status');
  return (document.body.dataset.modelLoads === '1' || !error.hidden) && {
    error: error.hidden ? null : error.textContent, name: document.body.dataset.modelName,
    source: document.body.dataset.modelSource, threads: document.body.dataset.modelThreads, isolated: crossOriginIsolated,
    status: status?.textContent ?? '',
  };
}

/** In the page: the head finder drawn (its rows, or its error), else null. */
function finderDrawn() {
  const info = document.querySelector('#model-finder-info').textContent;
  return document.querySelectorAll('#model-finder tbody tr').length > 0 ? 'drawn' : info.startsWith('Head finder:') ? info : null;
}

/**
 * How the stand-in served the weights file, from its request log: kept in Cache Storage (the header's ranges, one
 * whole GET streamed into the cache, then nothing: read from there), Cache Storage refused it (a whole GET, then the
 * file again by ranges), read by ranges only, or nothing fetched (kept by an earlier load).
 */
function weightsDelivery(hub, file) {
  const gets = hub.requests.filter((r) => r.server === 'storage' && r.method === 'GET' && r.path.endsWith(`/${file}`));
  const whole = gets.findIndex((r) => r.range === null);
  const rangesAfter = whole < 0 ? 0 : gets.slice(whole + 1).filter((r) => r.range !== null).length;
  if (!gets.length) return 'read from Cache Storage (kept by an earlier load: nothing fetched)';
  if (whole < 0) return `read by ${gets.length} ranges (no whole GET)`;
  return rangesAfter ? `Cache Storage refused it: one whole GET, then read again by ${rangesAfter} ranges`
    : `kept in Cache Storage (one whole GET after ${whole} header range${whole === 1 ? '' : 's'})`;
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

async function measure(engine, hub, source, isolated) {
  const server = await serveDist({ isolated });
  const page = await engine.newPage({ width: 1280, height: 900 });
  hub.reset();
  try {
    const started = Date.now();
    await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}&hub=${encodeURIComponent(source.repo)}` +
      `${source.file ? `&hubFile=${encodeURIComponent(source.file)}` : ''}`);
    const loaded = await page.waitFor(loadEnded, null, source.loadTimeout, `the load of ${source.label}`);
    if (loaded.error) throw new Error(loaded.error);
    if (loaded.name !== source.label || loaded.source !== 'hub') throw new Error(`loaded ${loaded.source} ${loaded.name}, not ${source.label} from the Hub`);
    if (loaded.isolated !== isolated) throw new Error(`crossOriginIsolated is ${loaded.isolated}`);
    const loadSeconds = (Date.now() - started) / 1000;
    const loadedAt = Date.now();
    const delivery = source.file ? `; ${weightsDelivery(hub, source.file)}` : '';
    const memory = /wasm memory ([^(]+) in use \(heap ([^:]+):/.exec(loaded.status);
    const shape = /(\d+) layers × (\d+) heads/.exec(loaded.status);
    const heads = shape ? Number(shape[1]) * Number(shape[2]) : NaN;
    await page.waitFor(() => document.querySelectorAll('#model-next li').length > 0, null, 600000, 'the next tokens');
    const run = await page.evaluate(() => document.body.dataset.modelRun);
    await page.fill('#model-text', source.text);
    await page.waitFor((before) => document.body.dataset.modelRun !== before, run, 600000, 'the run of the text');
    // the head finder's probe runs after the load, in the same worker: keys are timed once it is drawn
    const finder = await page.waitFor(finderDrawn, null, 1200000, 'the head finder');
    const finderSeconds = (Date.now() - loadedAt) / 1000;  // the next tokens and the text's run came first
    const tokenCount = () => Number(document.querySelector('#model-text-info')?.textContent.match(/\d+/)?.[0]);
    const n0 = await page.evaluate(tokenCount);
    await sleep(3000);
    await page.evaluate(timeKeys);
    for (let k = 0; k < keys; ++k) {
      await page.type('#model-text', k % 2 ? 'e' : 's');
      await page.waitFor((n) => window.keyTimes.length > n, k, 600000, `key ${k + 1}'s redraw`);
      await sleep(300);
    }
    const times = await page.evaluate(() => window.keyTimes);
    const n = await page.evaluate(tokenCount);
    console.log(`${engine.version}, ${isolated ? 'cross-origin isolated' : 'not isolated'}: model worker on ${loaded.threads} thread(s); ` +
      `loaded in ${loadSeconds.toFixed(0)} s${delivery}${memory ? `; wasm memory ${memory[1].trim()} in use (heap ${memory[2].trim()})` : ''}; ` +
      `${finder === 'drawn' ? `head finder drawn ${finderSeconds.toFixed(0)} s after the load; ` : `${finder}; `}${n0} tokens (${n} after the keys); key → redraw (all ${heads} heads + next tokens) ms: ` +
      `${times.map((t) => t.toFixed(0)).join(' ')}; median ${median(times).toFixed(0)} ms` +
      `${!isolated && engine.name !== 'chromium' ? ' (performance.now() in whole ms here)' : ''}`);
    return median(times);
  } finally {
    await page.close();
    server.stop();
  }
}

const source = checkpointSource();
console.log(source.about);
const hub = await startStandIn({ [source.repo]: source.files });
let failed = false;
try {
  for (const name of engines) {
    let engine;
    try {
      engine = await launchEngine(name);
      const results = [await measure(engine, hub, source, true)];
      if (both) {
        results.push(await measure(engine, hub, source, false));
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
