// Controls that explain themselves (Chromium): on the opening page (the trained english model) every
// greyed-out control of the walkthrough points to a visible reason beside it (aria-describedby), and
// "Use random weights" frees them: d_model and heads then change the shapes drawn. In the Circuits
// view, a checkpoint whose tokenizer cannot spell the IOI and factual-recall presets (the tiny Llama
// GGUF with a 96-token ASCII vocabulary) has them greyed out with why; GPT-2's vocabulary keeps them.
// Screenshots: build/screenshots/controls-why-*.png, circuits-presets-refused-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, openPage, screenshotDir } from './browser.mjs';
import { gpt2SizedCheckpoint, gpt2Tokenizer } from '../js/checkpoint-support.mjs';
import { llamaQ8WithTokenizer } from '../js/gguf-support.mjs';

const live = browserFixture();

/**
 * In the page: each shown, greyed-out control of `selector` with the visible text it is described
 * by, and whether that text sits in the control's own panel: [{ id, why, beside }].
 */
function greyedOut(selector) {
  return [...document.querySelectorAll(`${selector} :is(input, select, textarea, button)`)]
    .filter((c) => c.disabled && c.getClientRects().length).map((c) => {
      const notes = (c.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean)
        .map((id) => document.getElementById(id)).filter((n) => n && n.checkVisibility() && n.getBoundingClientRect().height > 0);
      return { id: c.id, why: notes.map((n) => n.textContent.trim()).join(' '),
        beside: notes.some((n) => n.closest('section') === c.closest('section')) };
    });
}

/** In the page: the shape each heatmap of the walkthrough's stage draws, 'rows×cols'. */
const drawnShapes = () => [...document.querySelectorAll('#matrices .matrix-slot canvas')].map((c) => `${c.dataset.rows}×${c.dataset.cols}`);

async function settled(page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#matrices canvas') !== null);
}

test('the opening page says beside each greyed-out control why; "Use random weights" frees them and d_model / heads change the drawn shapes', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#stage=qkv`);
  await settled(page);
  const greyed = await page.evaluate(greyedOut, '#walkthrough-view .sidebar');
  for (const id of ['tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask']) {
    assert.ok(greyed.some((g) => g.id === id), `${id} is greyed out on the trained model`);
  }
  for (const g of greyed) {
    assert.ok(g.why.length > 10, `#${g.id} is greyed out with no visible reason`);
    assert.ok(g.beside, `#${g.id}'s reason is in its own panel`);
  }
  assert.match(greyed.find((g) => g.id === 'dModel').why, /trained english model fixes these/);
  await page.screenshot({ path: join(screenshotDir, 'controls-why-1280.png') });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.locator('#controls-why').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'controls-why-375.png') });
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.getByRole('button', { name: 'Use random weights' }).click();
  await page.waitForFunction(() => /^Random weights/.test(document.getElementById('model-badge').textContent));
  for (const id of ['tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask']) {
    assert.equal(await page.isDisabled(`#${id}`), false, `${id} works on random weights`);
  }
  assert.deepEqual(await page.evaluate(greyedOut, '#walkthrough-view .sidebar'), [], 'nothing greyed out on random weights');
  assert.equal(await page.isVisible('#controls-why'), false);
  await page.waitForFunction(() => document.getElementById('model').value === '');

  // Q, K and V are n × d_k, d_k = d_model / heads: each change redraws them in the new shape.
  const shapesAfter = async (select, value) => {
    const before = await page.evaluate(drawnShapes);
    await page.selectOption(select, value);
    await page.waitForFunction((old) => {
      const now = [...document.querySelectorAll('#matrices .matrix-slot canvas')].map((c) => `${c.dataset.rows}×${c.dataset.cols}`);
      return now.length && now.join() !== old.join();
    }, before, { timeout: 15000 });
    return page.evaluate(drawnShapes);
  };
  const n = Number((await page.evaluate(drawnShapes))[0].split('×')[0]);
  assert.ok(n > 1);
  const heads = Number(await page.inputValue('#heads'));
  assert.deepEqual(await shapesAfter('#dModel', '32'), Array(3).fill(`${n}×${32 / heads}`), 'd_model 32');
  assert.deepEqual(await shapesAfter('#heads', '2'), Array(3).fill(`${n}×16`), 'd_model 32, 2 heads');
  await page.waitForFunction(() => document.querySelectorAll('#heads-view .head-tile').length === 2);
  await page.screenshot({ path: join(screenshotDir, 'controls-why-random-1280.png') });
  assert.deepEqual(problems(), []);
  await page.context().close();
});

test('a tutorial preset says why it greys out the text and the layer\'s controls; "Back to your text" frees them', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#model=random&preset=seed004-multi`);
  await settled(page);
  const greyed = await page.evaluate(greyedOut, '#walkthrough-view .sidebar');
  for (const id of ['text', 'dModel', 'heads', 'seed']) assert.ok(greyed.some((g) => g.id === id), `${id} is greyed out by the preset`);
  for (const g of greyed) assert.ok(g.why.length > 10 && g.beside, `#${g.id} says why, beside it`);
  await page.screenshot({ path: join(screenshotDir, 'controls-why-preset-1280.png') });
  await page.getByRole('button', { name: 'Back to your text' }).click();
  await page.waitForFunction(() => !document.getElementById('dModel').disabled && !document.getElementById('text').disabled);
  assert.equal(await page.inputValue('#preset'), '');
  assert.deepEqual(problems(), []);
  await page.context().close();
});

const upload = (name, bytes) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });

/** Loads `files` in Your model, then shows Circuits once its presets were checked for that model. */
async function circuitsWith(files, fileName) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 40000 });
  await page.setInputFiles('#model-files', files);
  await page.waitForSelector('body[data-model-loads="1"]', { timeout: 40000 });
  await page.click('#tab-circuits');
  await page.waitForFunction((name) => document.body.dataset.circuitsPresets === `files:${name}`, fileName, { timeout: 40000 });
  return { page, problems };
}

test('Circuits: presets the loaded tokenizer cannot spell are greyed out with why; GPT-2\'s vocabulary keeps them', async () => {
  const { page, problems } = await circuitsWith([upload('tiny-Q8_0.gguf', llamaQ8WithTokenizer())], 'tiny-Q8_0.gguf');
  const greyed = await page.evaluate(greyedOut, '#circuits-presets');
  assert.deepEqual(greyed.map((g) => g.id).sort(), ['circuits-preset-factual', 'circuits-preset-ioi']);
  const ioi = greyed.find((g) => g.id === 'circuits-preset-ioi').why;
  assert.match(ioi, /^The IOI preset cannot run on this model: this tokenizer spells “ Mary” as 5 tokens \(␣ M a r y\) and “ John” as 5 \(␣ J o h n\)/);
  assert.match(greyed.find((g) => g.id === 'circuits-preset-factual').why, /^The factual-recall preset cannot run on this model: /);
  assert.equal(await page.isDisabled('#circuits-preset-induction'), false, 'induction runs on any vocabulary');
  // The reasons are what would fail: the page's own answer box reads " Mary" as several tokens.
  await page.fill('#circuits-answer-a', ' Mary');
  await page.waitForFunction(() => /is 5 tokens for this model/.test(document.getElementById('circuits-answer-a-info').textContent));
  await page.locator('#circuits-presets').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'circuits-presets-refused-1280.png') });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.locator('#circuits-presets').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'circuits-presets-refused-375.png') });
  assert.deepEqual(problems(), []);
  await page.context().close();

  const { weights, config } = gpt2SizedCheckpoint({ layers: 2, heads: 2, d: 8, vocab: 50257, context: 32 });
  const { vocab, merges } = gpt2Tokenizer();
  const gpt2 = await circuitsWith([upload('model.safetensors', weights), upload('config.json', JSON.stringify(config)),
    upload('vocab.json', JSON.stringify(vocab)), upload('merges.txt', merges)], 'model.safetensors');
  assert.deepEqual(await gpt2.page.evaluate(greyedOut, '#circuits-presets'), [], 'GPT-2\'s vocabulary spells both presets');
  assert.equal(await gpt2.page.isVisible('#circuits-preset-why'), false);
  assert.deepEqual(gpt2.problems(), []);
  await gpt2.page.context().close();
});
