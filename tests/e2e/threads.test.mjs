// Threads in Chromium: served cross-origin isolated (scripts/serve.mjs's default), the page's Your
// model worker loads the threaded build (as many threads as the machine has cores, at most 8),
// and what it draws — every head of a GPT-2-sized checkpoint's next-token list — equals the
// single-threaded API's numbers in the same browser, bit for bit; the threaded API itself computes
// the same logits. Served without the headers, the page is not isolated and runs on one thread.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { launchBrowser, openPage, serveDist } from './browser.mjs';
import { smallGpt2Files } from '../js/checkpoint-support.mjs';

const SIZES = { layers: 2, heads: 4, d: 256, vocab: 300, context: 64 };  // products wide enough to split
const { weights: WEIGHTS, config: CONFIG, vocab: VOCAB, merges: MERGES } = smallGpt2Files(SIZES);
const file = (name, content) => ({ name, mimeType: name.endsWith('.safetensors') ? 'application/octet-stream' : 'application/json',
  buffer: Buffer.from(typeof content === 'string' || content instanceof Uint8Array ? content : JSON.stringify(content)) });
const FILES = [file('model.safetensors', WEIGHTS), file('config.json', CONFIG), file('vocab.json', VOCAB), file('merges.txt', MERGES)];

const live = { isolated: null, plain: null, chrome: null };
before(async () => {
  [live.isolated, live.plain, live.chrome] = await Promise.all([serveDist(), serveDist({ isolated: false }), launchBrowser()]);
});
after(async () => {
  await live.chrome?.close();
  live.isolated?.stop();
  live.plain?.stop();
});

/** In the page: the API on the same files, one thread and `threads`: next tokens and the logits. */
async function apiRuns(page, threads) {
  return page.evaluate(async ({ weights, config, vocab, merges, threads }) => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    const run = async (lens) => {
      const gpt = await lens.loadCheckpoint({ weights: new Blob([Uint8Array.from(weights)]), config, tokenizer: { vocab, merges } });
      const { ids } = gpt.tokenize('When Mary and John went to the store, John gave a drink to');
      const out = gpt.forward(ids, { n: ids.length });
      const next = gpt.nextTokens(10);
      const generated = Array.from(gpt.generate(ids, { maxTokens: 8 }).ids);
      gpt.dispose();
      return { threads: lens.threads, logits: Array.from(out.logits), next, generated };
    };
    return { one: await run(await loadAttentionLens()), many: await run(await loadAttentionLens({ threads })) };
  }, { weights: Array.from(WEIGHTS), config: CONFIG, vocab: VOCAB, merges: MERGES, threads });
}

/** Drops the checkpoint's files into the page; resolves once drawn, or fails with the page's message. */
async function dropFiles(page) {
  await page.setInputFiles('#model-files', FILES);
  await page.waitForFunction(() => document.body.dataset.modelLoads === '1' || !document.querySelector('#model-error').hidden,
    null, { timeout: 60000 });
  assert.equal(await page.locator('#model-error').isHidden(), true, await page.textContent('#model-error'));
  await page.waitForSelector('#model-next li');
}

async function openModelView(url) {
  const { page, problems } = await openPage(live.chrome.browser, url);
  await page.goto(`${url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
  return { page, problems };
}

test('isolated: the page computes on the threaded build, with the single-threaded numbers', async () => {
  const { page, problems } = await openModelView(live.isolated.url);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  const expected = String(Math.min(Math.max(cores, 1), 8));
  assert.equal(await page.getAttribute('body', 'data-model-threads'), expected, `${cores} cores`);

  const api = await apiRuns(page, 2);
  assert.equal(api.one.threads, 1);
  assert.equal(api.many.threads, 2);
  assert.deepEqual(api.many.logits, api.one.logits, 'logits, bit for bit');
  assert.deepEqual(api.many.next, api.one.next);
  assert.deepEqual(api.many.generated, api.one.generated);

  // The page's worker (threaded) draws the one-thread API's next tokens.
  await dropFiles(page);
  const listed = await page.$$eval('#model-next li', (items) => items.map((li) => Number(li.dataset.id)));
  assert.deepEqual(listed, api.one.next.map((t) => t.id));
  assert.deepEqual(problems(), []);
  await page.close();
});

test('not isolated: one thread, and the page still works', async () => {
  const { page, problems } = await openModelView(live.plain.url);
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
  assert.equal(await page.getAttribute('body', 'data-model-threads'), '1');
  const threaded = await page.evaluate(async () => {
    const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
    return (await loadAttentionLens({ threads: 2 })).threads;
  });
  assert.equal(threaded, 1, 'threads: 2 without SharedArrayBuffer gives one thread');
  await dropFiles(page);
  assert.deepEqual(problems(), []);
  await page.close();
});
