// The minimal page in Chromium: it loads the wasm module, shows tokens and a heatmap that
// follow the text and the controls, with no console errors and no request off the origin.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, screenshotDir, serveDist } from './browser.mjs';

let server;
let chrome;

before(async () => {
  server = await serveDist();
  chrome = await launchBrowser();
  mkdirSync(screenshotDir, { recursive: true });
});

after(async () => {
  await chrome?.close();
  server?.stop();
});

async function ready(page) {
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
}

test('typing a sentence shows its tokens and an n×n attention heatmap', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await ready(page);
  assert.deepEqual(await page.locator('#tokens .chip').allTextContents(),
    ['The', 'bank', 'will', 'not', 'loan', 'money']);
  assert.equal(await page.locator('#heatmap .cell').count(), 36);
  await page.fill('#text', 'The boat reached the bank.');
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length === 6);
  assert.deepEqual(await page.locator('#tokens .chip').allTextContents(),
    ['The', 'boat', 'reached', 'the', 'bank', '.']);
  assert.equal(await page.locator('#heatmap .cell').count(), 36);
  await page.screenshot({ path: join(screenshotDir, 'minimal-page-desktop.png'), fullPage: true });
  assert.deepEqual(problems(), []);
});

test('each heatmap row sums to 1 and the causal mask empties the upper triangle', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await ready(page);
  await page.selectOption('#mask', 'causal');
  const rows = await page.evaluate(() => {
    const cells = [...document.querySelectorAll('#heatmap .cell')];
    const n = Math.round(Math.sqrt(cells.length));
    return Array.from({ length: n }, (_, i) => cells.slice(i * n, i * n + n)
      .map((c) => Number(c.title.split(': ').pop())));
  });
  assert.equal(rows.length, 6);
  rows.forEach((row, i) => {
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3, `row ${i} sums to 1`);
    row.forEach((value, j) => { if (j > i) assert.equal(value, 0, `cell ${i},${j} is masked`); });
  });
  assert.deepEqual(problems(), []);
});

test('bad settings show a readable error and the page keeps working', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  await ready(page);
  await page.fill('#seed', '-5');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.locator('#error').textContent(), /seed must be an integer/);
  await page.fill('#seed', '7');
  await page.waitForSelector('#error', { state: 'hidden' });
  assert.equal(await page.locator('#heatmap .cell').count(), 36);
  assert.deepEqual(problems(), []);
});

test('the page fits a 375-px-wide phone screen', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url, { width: 375, height: 800 });
  await ready(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  await page.screenshot({ path: join(screenshotDir, 'minimal-page-phone.png'), fullPage: true });
  assert.deepEqual(problems(), []);
});
