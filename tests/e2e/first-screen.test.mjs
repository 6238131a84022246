// What a newcomer finds without scrolling (Chromium): the Your model tab's "Open files…" beside Load
// in the first screen at 1280 × 900 and 375 × 800, opening the same file picker; a model file dropped
// anywhere on the tab (not only on the old drop zone) loads, an overlay showing while it is dragged;
// the Train tab on a phone shows the live loss beside Start, updating as it trains.
// Screenshots: build/screenshots/first-screen-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, openPage, screenshotDir } from './browser.mjs';
import { llamaQ8WithTokenizer } from '../js/gguf-support.mjs';

const live = browserFixture();
const GGUF = llamaQ8WithTokenizer();
const PHONE = { width: 375, height: 800 };

async function openTab(tab, viewport, ready) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
  await page.goto(`${live.server.url}#tab=${tab}`);
  await page.waitForSelector(`body[data-${ready}="true"]`, { timeout: 40000 });
  return { page, problems };
}

/** Whether `locator`'s box lies inside the first screen (the page not scrolled). */
async function inFirstScreen(page, locator) {
  const box = await locator.boundingBox();
  const { scrollY, innerWidth, innerHeight } = await page.evaluate(() => ({ scrollY, innerWidth, innerHeight }));
  return Boolean(box) && scrollY === 0 && box.y >= 0 && box.x >= 0 && box.y + box.height <= innerHeight && box.x + box.width <= innerWidth;
}

test('Your model: "Open files…" is beside Load in the first screen and opens the file picker, at 1280 × 900 and 375 × 800', async () => {
  for (const viewport of [{ width: 1280, height: 900 }, PHONE]) {
    const { page, problems } = await openTab('model', viewport, 'model-ready');
    const open = page.getByRole('button', { name: 'Open files…' });
    assert.ok(await inFirstScreen(page, open), `Open files… in the first ${viewport.width} × ${viewport.height} screen`);
    assert.ok(await inFirstScreen(page, page.locator('#model-hub-load')), 'beside Load');
    await page.screenshot({ path: join(screenshotDir, `first-screen-model-${viewport.width}.png`) });
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), open.click()]);
    assert.equal(await (await chooser.element()).getAttribute('id'), 'model-files', 'the same picker as "Your own files"');
    assert.ok(chooser.isMultiple());
    await chooser.setFiles([{ name: 'tiny-Q8_0.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from(GGUF) }]);
    await page.waitForSelector('body[data-model-loads="1"]', { timeout: 40000 });
    assert.match(await page.textContent('#model-status'), /^tiny-Q8_0\.gguf: GGUF/);
    assert.ok(await inFirstScreen(page, page.locator('#model-load-status')), 'the load\'s line is beside the button');
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('Your model: a model file dropped anywhere on the tab loads, an overlay showing while it is dragged', async () => {
  for (const viewport of [{ width: 1280, height: 900 }, PHONE]) {
    const { page, problems } = await openTab('model', viewport, 'model-ready');
    const target = '#model-next-title'; // the Next token panel: far from the old drop zone
    assert.equal(await page.evaluate((t) => document.getElementById('model-drop').contains(document.querySelector(t)), target), false);
    const dataTransfer = await page.evaluateHandle((bytes) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([Uint8Array.from(bytes)], 'tiny-Q8_0.gguf', { type: 'application/octet-stream' }));
      return transfer;
    }, Array.from(GGUF));
    await page.dispatchEvent(target, 'dragenter', { dataTransfer });
    await page.dispatchEvent(target, 'dragover', { dataTransfer });
    const overlay = page.getByText('Drop to load:');
    assert.ok(await overlay.isVisible(), 'the overlay says where the files go');
    await page.screenshot({ path: join(screenshotDir, `first-screen-drop-overlay-${viewport.width}.png`) });
    await page.dispatchEvent(target, 'drop', { dataTransfer });
    await page.waitForSelector('body[data-model-loads="1"]', { timeout: 40000 });
    assert.match(await page.textContent('#model-status'), /^tiny-Q8_0\.gguf: GGUF/);
    assert.equal(await overlay.isVisible(), false, 'the overlay goes with the drop');
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('Train on a 375 × 800 phone: after Start the live loss is in the first screen and updates', async () => {
  const { page, problems } = await openTab('train', PHONE, 'train-ready');
  const start = page.locator('#train-run');
  assert.ok(await inFirstScreen(page, start), 'Start is in the first screen');
  await start.click();
  const loss = page.locator('#train-live-loss');
  await page.waitForFunction(() => Number(document.body.dataset.trainStep) > 0 && Number.isFinite(Number(document.getElementById('train-live-loss').textContent)));
  const first = { step: Number(await page.evaluate(() => document.body.dataset.trainStep)), text: await loss.textContent() };
  assert.ok(await inFirstScreen(page, loss), 'the live loss is in the first screen, not scrolled to');
  assert.ok(await inFirstScreen(page, page.locator('#train-live-heads canvas').last()), 'and the heads');
  await page.waitForFunction((then) => Number(document.body.dataset.trainStep) > then.step + 20 &&
    document.getElementById('train-live-loss').textContent !== then.text, first, { timeout: 30000 });
  // The number is the newest training loss the run reports (the status line's data-loss).
  await start.click(); // Pause
  await page.waitForSelector('body[data-train-status="paused"]');
  await page.waitForFunction(() => Math.abs(Number(document.getElementById('train-live-loss').textContent) -
    Number(document.getElementById('train-status').dataset.loss)) <= 5e-4, null, { timeout: 10000 });
  await page.screenshot({ path: join(screenshotDir, 'first-screen-train-375.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(screenshotDir, 'first-screen-train-1280.png') });
  assert.deepEqual(problems(), []);
  await page.context().close();
});
