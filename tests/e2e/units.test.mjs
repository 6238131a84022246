// Numbers and units on the page, in Chromium: the next-token list writes a tiny positive probability
// as "< 0.01%" (never "5.5e-13%" or "0.0088%"), and a model's size is one byte count in one unit
// wherever it is written (the shipped model's button and the status line, decimal kB as the Hub writes them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, openPage, screenshotDir } from './browser.mjs';

const live = browserFixture();

test('the next-token list: "< 0.01%" for a tiny probability; a model\'s size the same in the picker and the status line', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForFunction(() => document.body.dataset.modelName === 'english', null, { timeout: 40000 });
  // The shipped induction model on a repeated sequence: one next token near 100%, the rest tiny.
  await page.click('[data-key="shipped:induction"]');
  await page.waitForFunction(() => document.body.dataset.modelName === 'induction', null, { timeout: 40000 });
  const run = Number(await page.getAttribute('body', 'data-model-run'));
  await page.fill('#model-text', 'abcdefghabcdefghabcdefghabcdefgh');
  await page.waitForFunction((n) => Number(document.body.dataset.modelRun) > n, run);
  const items = await page.evaluate(() => [...document.querySelectorAll('#model-next li')]
    .map((li) => ({ p: Number(li.dataset.probability), text: li.querySelector('.num').textContent })));
  const tiny = items.filter(({ p }) => p > 0 && p < 1e-4);
  assert.ok(tiny.length > 0, `a tiny probability in the list: ${JSON.stringify(items)}`);
  for (const { p, text } of items) {
    assert.doesNotMatch(text, /e[-+]?\d/, `${p} written ${text}`);
    if (p > 0 && p < 1e-4) assert.equal(text, '< 0.01%', `${p}`);
  }
  await page.locator('#model-next').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'next-token-tiny-1280.png') });
  // One byte count in one unit: the model's button and the status line.
  const button = await page.textContent('[data-key="shipped:induction"] .model-pick-line');
  const size = button.split(' · ').at(-1);
  assert.match(size, /^[\d.]+ (B|kB|MB|GB)$/, button);
  assert.ok((await page.textContent('#model-status')).includes(`file ${size} · `), 'the status line writes the same size');
  assert.deepEqual(problems(), []);
});
