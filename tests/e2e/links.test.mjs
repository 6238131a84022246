// Links that tell the truth, in Chromium: a link made with a model from files (Your model) names the
// files (names, sizes, SHA-256) and, opened fresh, says which file it needs and applies nothing to the
// shipped model; dropping those files then restores its knocked-out head. A knocked-out head the model
// lacks (knock=1.9 on the english model) is said to be ignored. Copy link says what the link restores.
// Screenshots of the notices at 1280 and 375 px go to build/screenshots/link-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { browserFixture, openPage, screenshotDir } from './browser.mjs';
import { smallGpt2Files } from '../js/checkpoint-support.mjs';
import { formatBytes } from '../../web/shared/format.js';

const live = browserFixture();

// 2 layers × 2 heads, d_model 16, context 64: GPT-2's 256 byte tokens and its first 4 merges.
const { weights: WEIGHTS, config: CONFIG, vocab: VOCAB, merges: MERGES } = smallGpt2Files({ layers: 2, heads: 2, d: 16, vocab: 260, context: 64 });
const file = (name, content) => ({ name, mimeType: name.endsWith('.safetensors') ? 'application/octet-stream' : 'application/json',
  buffer: Buffer.from(typeof content === 'string' ? content : content instanceof Uint8Array ? content : JSON.stringify(content)) });
const FILES = [file('model.safetensors', WEIGHTS), file('config.json', CONFIG), file('vocab.json', VOCAB), file('merges.txt', MERGES)];
const SHA256 = createHash('sha256').update(Buffer.from(WEIGHTS)).digest('hex');

/** The knock-out toggles pressed in the head grid: ['layer.head', …]. */
const pressed = (page) => page.evaluate(() => [...document.querySelectorAll('#model-head-grid .model-knock[aria-pressed="true"]')]
  .map((b) => `${b.dataset.layer}.${b.dataset.head}`));

/** Waits for the Your model view's first model (the shipped english one unless the link loads another). */
async function modelShown(page, name) {
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 40000 });
  await page.waitForFunction((want) => document.body.dataset.modelName === want && document.querySelector('#model-head-grid .model-knock'),
    name, { timeout: 40000 });
}

test('a link made with a model from files names them; opened fresh it says which file it needs and knocks out nothing', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: live.server.url });
  await page.goto(`${live.server.url}#tab=model`);
  await modelShown(page, 'english');
  await page.setInputFiles('#model-files', FILES);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
  await modelShown(page, 'model.safetensors');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  // Layer 1, head 2 knocked out: the URL holds it, and the file's name, size and SHA-256 (hashed in the page).
  await page.click('#model-head-grid .model-knock[data-layer="0"][data-head="1"]');
  await page.waitForFunction((sha) => location.hash.includes('knock=0.1') && location.hash.includes(sha), SHA256, { timeout: 10000 });
  await page.click('#share');
  await page.waitForFunction(() => document.querySelector('#notice')?.textContent.includes('Link copied'));
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(link.includes(`files=model.safetensors%3A${WEIGHTS.length}%3A${SHA256}`), link);
  const copied = await page.textContent('#notice');
  assert.ok(copied.startsWith(`Link copied. It restores Your model's text and sampling settings and names model.safetensors ` +
    `(${formatBytes(WEIGHTS.length)}, sha256 ${SHA256.slice(0, 8)}…): a reader who drops that file gets this view, with L1 H2 knocked out`), copied);
  assert.doesNotMatch(copied, /exact view/);
  await page.screenshot({ path: join(screenshotDir, 'link-copied-files-1280.png') });
  await page.context().close();

  // Opened fresh: the shipped model is shown, nothing knocked out, and the notice names the file it needs.
  for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
    const fresh = await openPage(live.chrome.browser, live.server.url, viewport);
    await fresh.page.goto(link);
    await modelShown(fresh.page, 'english');
    await fresh.page.waitForSelector('body[data-model-run]');
    const notice = await fresh.page.textContent('#notice');
    assert.ok(notice.includes(`This link was made with model.safetensors (${formatBytes(WEIGHTS.length)}, sha256 ${SHA256.slice(0, 8)}…)`), notice);
    assert.match(notice, /drop it anywhere on the Your model tab \(or pick it with Open files…\) to restore the view \(L1 H2 knocked out\)/);
    assert.deepEqual(await pressed(fresh.page), [], 'no head of the shipped model knocked out');
    assert.doesNotMatch(await fresh.page.textContent('#model-next-info'), /knocking out/, 'the next tokens are the whole model\'s');
    await fresh.page.screenshot({ path: join(screenshotDir, `link-files-needed-${viewport.width}.png`) });
    if (viewport.width === 1280) {
      // Other files: said, still nothing applied.
      const other = Uint8Array.from(WEIGHTS);
      other[other.length - 1] ^= 1;
      await fresh.page.setInputFiles('#model-files', [file('model.safetensors', other), ...FILES.slice(1)]);
      await fresh.page.waitForSelector('body[data-model-loads="1"]', { timeout: 30000 });
      await fresh.page.waitForFunction(() => /is not what this link was made with/.test(document.querySelector('#notice').textContent));
      assert.deepEqual(await pressed(fresh.page), []);
      // The files it was made with: its head knocked out again, and said so.
      await fresh.page.setInputFiles('#model-files', FILES);
      await fresh.page.waitForSelector('body[data-model-loads="2"]', { timeout: 30000 });
      await fresh.page.waitForFunction(() => document.querySelector('#model-head-grid .model-knock[data-layer="0"][data-head="1"]')
        ?.getAttribute('aria-pressed') === 'true', null, { timeout: 10000 });
      assert.deepEqual(await pressed(fresh.page), ['0.1']);
      assert.match(await fresh.page.textContent('#notice'), /^Restored the link's view on model\.safetensors .*: L1 H2 knocked out\./);
      await fresh.page.screenshot({ path: join(screenshotDir, 'link-files-restored-1280.png') });
    }
    assert.deepEqual(fresh.problems(), []);
    await fresh.page.context().close();
  }
  assert.deepEqual(problems(), []);
});

test('a knocked-out head the model lacks (knock=1.9 on the english model) is said to be ignored', async () => {
  for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(`${live.server.url}#tab=model&knock=1.9,0.2`);
    await modelShown(page, 'english');
    await page.waitForFunction(() => document.querySelector('#model-head-grid .model-knock[data-layer="0"][data-head="2"]')
      ?.getAttribute('aria-pressed') === 'true', null, { timeout: 20000 });
    assert.deepEqual(await pressed(page), ['0.2'], 'the head the model has is knocked out');
    const notice = await page.textContent('#notice');
    assert.match(notice, /Ignored in the link: knock L2 H10 \(the english model has 2 layers × 4 heads\)\./);
    assert.equal(notice.split('Ignored in the link').length, 2, `said once: ${notice}`);
    await page.screenshot({ path: join(screenshotDir, `link-knock-ignored-${viewport.width}.png`) });
    // Copy link says what this link restores (once the walkthrough's first draw, which sets its own notice, is done).
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: live.server.url });
    await page.click('#share');
    // The clipboard write resolves after the click returns: wait for the copy's sentence.
    await page.waitForFunction(() => document.querySelector('#notice')?.textContent.includes('Link copied'));
    const copied = await page.textContent('#notice');
    assert.ok(copied.endsWith('Link copied. It restores Your model\'s text and sampling settings on the shipped english model, ' +
      'with L1 H3 knocked out.'), copied);
    await page.screenshot({ path: join(screenshotDir, `link-copied-${viewport.width}.png`) });
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});
