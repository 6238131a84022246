// Long inputs you can read, in Chromium: a 300-token causal input drawn on the linear, log and
// per-row max colour scales (mean luminance of the canvas pixels), the scale in the URL, the legend
// and the inspector's true weights; the token chips collapsed around a "… N more" button; the
// element's color-scale attribute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, hoverCell, openPage, screenshotDir, withRandomWeights } from './browser.mjs';

const live = browserFixture();
const N = 300;
const TEXT = Array.from({ length: N }, (_, i) => `w${i % 37}`).join(' ');

async function open(hash, viewport) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
  await page.goto(live.server.url + withRandomWeights(hash));
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await page.waitForFunction((n) => document.querySelector('#matrices canvas')?.dataset.rows === String(n), N);
  return { page, problems };
}

/** Waits until the walkthrough's first heatmap is drawn on `scale`. */
const drawnOn = (page, scale) => page.waitForFunction((s) =>
  document.querySelector('#matrices canvas')?.dataset.colorScale === s &&
  [...document.querySelectorAll('#heads-view canvas')].every((c) => c.dataset.colorScale === s), scale);

/**
 * Mean luminance (0–255) of the cells a causal mask leaves visible (key ≤ query), read from the
 * canvas pixels at the centre of each cell of the walkthrough's first heatmap.
 */
function visibleLuminance(page) {
  return page.evaluate(() => {
    const canvas = document.querySelector('#matrices canvas');
    const { left, top, cell, rows, cols } = Object.fromEntries(Object.entries(canvas.dataset).map(([k, v]) => [k, Number(v)]));
    const ratio = canvas.width / parseFloat(canvas.style.width);
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let sum = 0;
    let count = 0;
    for (let i = 0; i < rows; ++i) {
      for (let j = 0; j <= i; ++j) {
        const x = Math.floor((left + (j + 0.5) * cell) * ratio);
        const y = Math.floor((top + (i + 0.5) * cell) * ratio);
        const k = (y * canvas.width + x) * 4;
        sum += 0.299 * pixels[k] + 0.587 * pixels[k + 1] + 0.114 * pixels[k + 2];
        count += 1;
      }
    }
    return sum / count;
  });
}

const legendText = (page) => page.locator('#matrices .legend').textContent();
const cellValue = async (page) => Number(await page.locator('[data-testid="cell-value"]').getAttribute('data-value'));

test('300 causal tokens: the log and per-row scales light up the matrix; the URL keeps the scale', async () => {
  const { page, problems } = await open(`#text=${encodeURIComponent(TEXT)}&mask=causal`);
  await drawnOn(page, 'linear');
  assert.equal(await page.inputValue('#colorScale'), 'linear');
  assert.equal(await page.locator('#colorScale-hint').isVisible(), true, 'a long linear input suggests the other scales');
  const linear = await visibleLuminance(page);
  assert.match(await legendText(page), /0\s*0\.5\s*1/);
  await hoverCell(page, 0, 200, 20);
  await page.waitForSelector('[data-testid="cell-value"]');
  const weight = await cellValue(page);

  await page.selectOption('#colorScale', 'log');
  await drawnOn(page, 'log');
  const log = await visibleLuminance(page);
  assert.ok(log > linear + 40 && log > 2 * linear, `log ${log.toFixed(1)} vs linear ${linear.toFixed(1)}`);
  assert.match(await legendText(page), /0\.0001\s*0\.001\s*0\.01\s*0\.1\s*1/);
  assert.match(await legendText(page), /log scale \(0\.0001 and below/);
  assert.equal(await page.locator('#colorScale-hint').isVisible(), false);
  await page.waitForFunction(() => /colorScale=log/.test(location.hash)); // the hash follows a moment later
  // The inspector still reads the true weight (only colours change).
  await hoverCell(page, 0, 201, 20);
  await hoverCell(page, 0, 200, 20);
  await page.waitForFunction((w) => Number(document.querySelector('[data-testid="cell-value"]')?.dataset.value) === w, weight);
  await page.screenshot({ path: join(screenshotDir, 'readable-log.png'), fullPage: true });

  await page.selectOption('#colorScale', 'row');
  await drawnOn(page, 'row');
  const row = await visibleLuminance(page);
  assert.ok(row > linear + 40, `per-row ${row.toFixed(1)} vs linear ${linear.toFixed(1)}`);
  assert.match(await legendText(page), /row max/);
  await page.waitForFunction(() => /colorScale=row/.test(location.hash));

  // A link with the scale opens on it.
  const reopened = await open(`#text=${encodeURIComponent(TEXT)}&mask=causal&colorScale=log`);
  await drawnOn(reopened.page, 'log');
  assert.equal(await reopened.page.inputValue('#colorScale'), 'log');
  assert.ok(Math.abs(await visibleLuminance(reopened.page) - log) < 1, 'the same image from the link');
  assert.deepEqual(problems(), []);
  assert.deepEqual(reopened.problems(), []);
});

test('300 tokens: the chips collapse to the first and last few around a "… N more" button', async () => {
  const { page, problems } = await open(`#text=${encodeURIComponent(TEXT)}&mask=causal`);
  const chips = () => page.locator('#tokens .chip').allTextContents();
  const toggle = page.locator('#tokens .more-tokens');
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length === 24);
  const shown = await chips();
  assert.deepEqual(shown.slice(0, 3), ['w0', 'w1', 'w2']);
  assert.deepEqual(shown.slice(-2), [`w${298 % 37}`, `w${299 % 37}`]);
  assert.equal(await toggle.count(), 1);
  assert.equal(await toggle.textContent(), '… 276 more');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  // Keyboard: Enter expands, focus stays on the toggle ("Show fewer"), Enter collapses again.
  await toggle.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length === 300);
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Show fewer');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-expanded')), 'true');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length === 24);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-expanded')), 'false');
  // A pinned cell's query and key tokens are shown even while collapsed.
  const canvas = page.locator('#matrices .matrix-slot canvas').first();
  const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell }));
  await canvas.click({ position: { x: g.left + 100.5 * g.cell, y: g.top + 150.5 * g.cell } });
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip.selected').length === 2);
  // The inspector names the pinned cell's indices (from 0): query i, key j.
  const [, i, j] = (await page.locator('.inspector-where').textContent()).match(/\(i = (\d+)\).*\(j = (\d+)\)/);
  assert.ok(Number(i) > 140 && Number(j) > 90 && Number(j) < 110, `pinned i = ${i}, j = ${j}`);
  assert.deepEqual(await page.locator('#tokens .chip.selected').evaluateAll((cs) => cs.map((c) => c.title)),
    [`token ${Number(j) + 1}`, `token ${Number(i) + 1}`]);
  assert.equal(await page.locator('#tokens .more-tokens').count(), 3);
  assert.deepEqual(problems(), []);
});

test('phone and dark theme: the log legend and the collapsed chips fit (screenshots)', async () => {
  const { page, problems } = await open(`#text=${encodeURIComponent(TEXT)}&mask=causal&colorScale=log`,
    { width: 375, height: 812 });
  await drawnOn(page, 'log');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await page.screenshot({ path: join(screenshotDir, 'readable-phone.png'), fullPage: true });
  assert.deepEqual(problems(), []);
});

test('the element: color-scale="log" colours its heatmap on the log scale; bad values are named', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  const text = Array.from({ length: 120 }, (_, i) => `t${i % 11}`).join(' ');
  await page.route(`${live.server.url}readable-embed.html`, (route) => route.fulfill({ status: 200,
    contentType: 'text/html; charset=utf-8', body: `<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>embed</title><script src="attention-lens-element.js" defer></script></head><body>
<attention-lens text="${text}" mask="causal" color-scale="log"></attention-lens>
<attention-lens text="${text}" mask="causal" color-scale="bright"></attention-lens></body></html>` }));
  await page.goto(`${live.server.url}readable-embed.html`);
  await page.waitForFunction(() => [...document.querySelectorAll('attention-lens')]
    .every((e) => e.shadowRoot?.querySelector('.lens')?.dataset.status === 'ready'), null, { timeout: 30000 });
  const shown = await page.evaluate(() => [...document.querySelectorAll('attention-lens')].map((e) => ({
    scale: e.shadowRoot.querySelector('canvas').dataset.colorScale,
    legend: e.shadowRoot.querySelector('.legend').textContent,
    problems: [...e.shadowRoot.querySelectorAll('.problems li')].map((li) => li.textContent),
    chips: e.shadowRoot.querySelectorAll('.tokens .chip').length,
    more: e.shadowRoot.querySelector('.tokens .more-tokens')?.textContent,
  })));
  assert.equal(shown[0].scale, 'log');
  assert.match(shown[0].legend, /0\.0001\s*0\.001\s*0\.01\s*0\.1\s*1/); // 120 keys: floor 1e-4
  assert.deepEqual(shown[0].problems, []);
  assert.equal(shown[0].chips, 24);
  assert.equal(shown[0].more, '… 96 more');
  assert.equal(shown[1].scale, 'linear');
  assert.ok(shown[1].problems.some((p) => p.startsWith('color-scale="bright" is not valid; using linear')), shown[1].problems.join(' | '));
  await page.screenshot({ path: join(screenshotDir, 'readable-element.png'), fullPage: true });
  // The attribute changes the colours in place.
  await page.evaluate(() => document.querySelector('attention-lens').setAttribute('color-scale', 'row'));
  await page.waitForFunction(() => document.querySelector('attention-lens').shadowRoot.querySelector('canvas').dataset.colorScale === 'row');
  assert.deepEqual(problems(), []);
});
