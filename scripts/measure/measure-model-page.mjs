// Measures the Your model view as a reader types, in Chromium: a GPT-2-small-sized checkpoint
// (build/bench-gpt2/, written by scripts/data/make-gpt2-bench-model.py: random weights, F32) is
// dropped into the page, a text of about --tokens GPT-2 tokens typed into, one key at a time, and
// each key timed from its input event to the redraw of every head and the next-token list (the
// page's data-model-run after the run it started). The page is served cross-origin isolated (the
// model worker runs on the threaded build) and, with --both, also without the headers (one
// thread), one after the other. Prints each key's time and the median.
// Usage: node scripts/measure/measure-model-page.mjs [--tokens 32] [--keys 9] [--both]
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { launchBrowser, openPage, serveDist } from '../lib/browser.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const tokens = Number(option('tokens', 32));
const keys = Number(option('keys', 9));
const both = process.argv.includes('--both');
const dir = join(process.cwd(), 'build/bench-gpt2');
if (!existsSync(join(dir, 'model.safetensors'))) {
  throw new Error('build/bench-gpt2/model.safetensors is missing: run /usr/bin/python3 scripts/data/make-gpt2-bench-model.py');
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(browser, isolated) {
  const server = await serveDist({ isolated });
  const { page } = await openPage(browser, server.url);
  try {
    await page.goto(`${server.url}#tab=model`);
    await page.waitForSelector('body[data-model-ready="true"]', { timeout: 60000 });
    const loads = Number(await page.getAttribute('body', 'data-model-loads') ?? 0);
    await page.setInputFiles('#model-files', [join(dir, 'model.safetensors'), join(dir, 'config.json')]);
    await page.waitForFunction((before) => Number(document.body.dataset.modelLoads ?? 0) > before ||
      !document.querySelector('#model-error').hidden, loads, { timeout: 120000 });
    if (!(await page.locator('#model-error').isHidden())) throw new Error(await page.textContent('#model-error'));
    await page.waitForSelector('#model-next li', { timeout: 60000 });
    const threads = await page.getAttribute('body', 'data-model-threads');
    // about `tokens` GPT-2 tokens: common words, one token each with their space
    const words = 'the cat sat on the mat and then it went to see what was in the big red box by the door of the old house where we ' +
      'all used to live when I was a child and my mother had a small garden with trees';
    const text = words.split(' ').slice(0, Math.max(1, tokens - 1)).join(' ');
    await page.fill('#model-text', text);
    await page.waitForFunction(() => document.querySelector('#model-next li'), null, { timeout: 60000 });
    await sleep(3000);
    await page.evaluate(() => {
      window.keyTimes = [];
      const field = document.querySelector('#model-text');
      field.addEventListener('input', () => { window.keyStart = performance.now(); window.runBefore = document.body.dataset.modelRun; });
      new MutationObserver(() => {
        if (window.keyStart && document.body.dataset.modelRun !== window.runBefore) {
          // the run's redraw is synchronous with the attribute; wait one frame for the paint
          const start = window.keyStart;
          window.keyStart = 0;
          requestAnimationFrame(() => window.keyTimes.push(performance.now() - start));
        }
      }).observe(document.body, { attributes: true, attributeFilter: ['data-model-run'] });
    });
    await page.focus('#model-text');
    await page.keyboard.press('End');
    for (let k = 0; k < keys; ++k) {
      await page.keyboard.type(k % 2 ? 'e' : 's');
      await page.waitForFunction((n) => window.keyTimes.length > n, k, { timeout: 60000 });
      await sleep(300);
    }
    const times = await page.evaluate(() => window.keyTimes);
    const n = Number(await page.evaluate(() => document.querySelector('#model-next') && document.querySelector('#model-text-info')?.textContent.match(/\d+/)?.[0]));
    console.log(`Chromium, ${isolated ? 'cross-origin isolated' : 'not isolated'}: model worker on ${threads} thread(s); ` +
      `${n} tokens; key → redraw (all 144 heads + next tokens) ms: ${times.map((t) => t.toFixed(0)).join(' ')}; ` +
      `median ${median(times).toFixed(0)} ms`);
    return median(times);
  } finally {
    await page.close();
    server.stop();
  }
}

const chrome = await launchBrowser();
try {
  const results = [];
  results.push(await measure(chrome.browser ?? chrome, true));
  if (both) results.push(await measure(chrome.browser ?? chrome, false));
  if (both) console.log(`one thread / threads: ${(results[1] / results[0]).toFixed(2)}×`);
} finally {
  await chrome.close();
}
