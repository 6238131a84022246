// Reading a matrix, in Chromium: at 43, 128 and 512 tokens every heatmap of the walkthrough draws
// labels that never overlap and stay inside the canvas, the hovered cell's row and column labels
// among them (on the focus colour), and says "every Nth … labelled" when some are left out; the
// same for the generation heatmap and the blog example's snapshot heatmaps. Q/K/V and A·V fit their
// box by default and scroll with a visible cue once zoomed in. The cell inspector and the equations of every stage
// fit their box at 1280 and 375 px, or scroll with a visible cue. The label boxes are the ones the
// heatmap leaves on its canvas as it draws (canvas.drawnLabels), each checked for drawn pixels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserFixture, hoverCell, openPage, screenshotDir, withRandomWeights } from './browser.mjs';
import { circuitsTable, loadGpt2Files } from './circuits-fixture.mjs';

const live = browserFixture();
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 800 };
const WORDS = 'the quick brown fox jumps over a lazy dog while reading about attention matrices and their many labelled tokens'.split(' ');
const words = (n) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' ');
const ENGLISH_43 = 'The quick brown fox jumps over the lazy dog.'.slice(0, 43); // 43 characters: the english model's tokens

/** Opens the walkthrough on `hash` and waits for `n` rows. */
async function openWalkthrough(hash, n, viewport) {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
  await page.goto(live.server.url + hash);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await page.waitForFunction((k) => document.querySelector('#matrices canvas')?.dataset.rows === String(k), n, { timeout: 30000 });
  return { page, problems };
}

/** Hovers cell (row, col) of the walkthrough's first heatmap, its canvas first scrolled to the middle of the screen. */
async function hover(page, row, col) {
  await page.mouse.move(0, 0); // the same point over the next stage's canvas would move nothing
  await page.locator('#matrices .matrix-slot canvas').first().evaluate((c) => c.scrollIntoView({ block: 'center' }));
  await hoverCell(page, 0, row, col);
}

/** Shows stage `id` of the walkthrough and waits until its heatmaps are drawn. */
async function showStage(page, id) {
  await page.click(`#stage-list [data-stage="${id}"]`);
  await page.waitForFunction((s) => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === s &&
    document.querySelector('#matrices .matrix-slot')?.dataset.step !== undefined, id);
}

/**
 * In the page: the labels drawn on `canvas` and what is wrong with them: two boxes that overlap, a
 * box outside the canvas, a box with no pixel of text in it (compared with the canvas's corner, the
 * surface), a focused label without the focus colour. Also the note under the heatmap, if shown.
 */
function drawnLabels(canvas) {
  const boxes = canvas.drawnLabels ?? [];
  const width = parseFloat(canvas.style.width);
  const height = parseFloat(canvas.style.height);
  const ratio = canvas.width / width;
  const ctx = canvas.getContext('2d');
  const surface = Array.from(ctx.getImageData(0, 0, 1, 1).data);
  const problems = [];
  boxes.forEach((a, i) => {
    if (a.x < -0.01 || a.y < -0.01 || a.x + a.w > width + 0.01 || a.y + a.h > height + 0.01) {
      problems.push(`${a.axis} “${a.text}” at ${a.x.toFixed(1)},${a.y.toFixed(1)} ${a.w}×${a.h} is outside ${width}×${height}`);
    }
    for (const b of boxes.slice(i + 1)) {
      if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) problems.push(`“${a.text}” overlaps “${b.text}”`);
    }
    const pixels = ctx.getImageData(Math.round(a.x * ratio), Math.round(a.y * ratio), Math.max(1, Math.round(a.w * ratio)),
      Math.max(1, Math.round(a.h * ratio))).data;
    let ink = false;
    let orange = false;
    for (let k = 0; k < pixels.length; k += 4) {
      if (Math.abs(pixels[k] - surface[0]) + Math.abs(pixels[k + 1] - surface[1]) + Math.abs(pixels[k + 2] - surface[2]) > 60) ink = true;
      if (pixels[k] === 255 && pixels[k + 1] === 140 && pixels[k + 2] === 0) orange = true;
    }
    if (!ink) problems.push(`nothing drawn in the box of “${a.text}”`);
    if (a.focus && !orange) problems.push(`the focused label “${a.text}” is not on the focus colour`);
  });
  const note = canvas.closest('figure').querySelector('.heatmap-labels-note');
  return { problems, rows: Number(canvas.dataset.rows), cols: Number(canvas.dataset.cols),
    boxes: boxes.map(({ axis, index, focus, text }) => ({ axis, index, focus, text })),
    note: note && note.getClientRects().length ? note.textContent : '' };
}

/**
 * Checks one heatmap's drawn labels: no problem, the hovered cell's row and column labels drawn
 * and focused, and the note naming the step between the labels drawn when some are left out.
 */
function assertLabels(drawn, where, hovered = null) {
  assert.deepEqual(drawn.problems, [], where);
  for (const [axis, count] of [['row', drawn.rows], ['col', drawn.cols]]) {
    const indices = drawn.boxes.filter((b) => b.axis === axis && !b.focus).map((b) => b.index).sort((a, b) => a - b);
    const shown = new Set(drawn.boxes.filter((b) => b.axis === axis).map((b) => b.index));
    if (shown.size === count) continue;
    // Some left out: drawn every k-th (k from the drawn boxes), and the note says "every k-th".
    if (indices.length < 2) {
      assert.match(drawn.note, /[Ee]very \d+(st|nd|rd|th) /, `${where}: the note for the ${axis}s left out`);
      continue;
    }
    const step = Math.min(...indices.slice(1).map((index, k) => index - indices[k])); // (the focused labels' neighbours are left out)
    assert.ok(step > 1, `${where}: ${axis} labels ${indices.slice(0, 5)}`);
    assert.match(drawn.note, new RegExp(`[Ee]very ${step}(st|nd|rd|th) `), `${where}: the note for ${axis}s drawn every ${step}`);
  }
  if (hovered) {
    // The pointer lands on whole pixels: a cell of one or two px may be the next one.
    const near = (b, axis, index) => b.axis === axis && b.focus && Math.abs(b.index - index) <= (hovered.slack ?? 0);
    assert.ok(drawn.boxes.some((b) => near(b, 'row', hovered.row)), `${where}: the hovered row's label`);
    assert.ok(drawn.boxes.some((b) => near(b, 'col', hovered.col)), `${where}: the hovered column's label`);
  }
}

/** In the page: each of the walkthrough's heatmap frames: does it overflow, is its cue shown. */
function matrixFrames() {
  return [...document.querySelectorAll('#matrices .heatmap-scroll')].map((s) => {
    const cues = [...s.parentElement.querySelectorAll(':scope > .scroll-cue')].filter((c) => c.getClientRects().length &&
      getComputedStyle(c).visibility !== 'hidden');
    return { wide: s.scrollWidth > s.clientWidth, tall: s.scrollHeight > s.clientHeight, cues: cues.length,
      canvas: s.querySelector('canvas').getBoundingClientRect().width, box: s.clientWidth };
  });
}

for (const n of [43, 128, 512]) {
  test(`${n} tokens: every stage's labels fit without overlapping; the hovered cell's are drawn; the left-out ones are named`, async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const { page, problems } = await openWalkthrough(withRandomWeights(`#text=${encodeURIComponent(words(n))}`), n, viewport);
      const stages = await page.locator('#stage-list button').evaluateAll((bs) => bs.map((b) => b.dataset.stage));
      for (const [s, stage] of stages.entries()) {
        await showStage(page, stage);
        const canvas = page.locator('#matrices .matrix-slot canvas').first();
        const { rows, cols, cell } = await canvas.evaluate((c) => ({ rows: +c.dataset.rows, cols: +c.dataset.cols, cell: +c.dataset.cell }));
        const hovered = { row: Math.floor((rows * 2) / 3), col: Math.floor(cols / 3) + 1, slack: cell < 3 ? 1 : 0 };
        const where = `${n} tokens, ${viewport.width} px, stage ${s + 1} (${stage})`;
        await hover(page, hovered.row, hovered.col);
        await page.waitForFunction(() => document.querySelector('#matrices canvas').drawnLabels?.filter((b) => b.focus).length === 2, null,
          { timeout: 5000 }).catch(() => assert.fail(`${where}: no focused labels after hovering ${JSON.stringify(hovered)}`));
        assertLabels(await canvas.evaluate(drawnLabels), where, hovered);
        if (s === 0 || s === 8) {
          await page.locator('.walk-body').screenshot({ path: join(screenshotDir, `labels-${n}-step${s + 1}-${viewport.width}.png`) });
        }
      }
      assert.deepEqual(problems(), []);
      await page.context().close();
    }
  });
}

test('hovering a cell never scrolls the page, even where the panel shown below the walkthrough comes first in the document (375 px)', async () => {
  // On a phone the Controls panel is drawn after the walkthrough but comes before it in the document:
  // Chromium's scroll anchoring picked it, and the page jumped by the inspector's growth (170 px).
  const { page } = await openWalkthrough(withRandomWeights(`#text=${encodeURIComponent(words(43))}`), 43, PHONE);
  await showStage(page, 'embedding');
  await page.locator('#matrices .matrix-slot canvas').first().evaluate((c) => c.scrollIntoView({ block: 'center' }));
  const before = await page.evaluate(() => ({ y: window.scrollY, inspector: document.querySelector('.inspector').offsetHeight }));
  await hoverCell(page, 0, 28, 22);
  await page.waitForFunction((h) => document.querySelector('.inspector').offsetHeight > h, before.inspector);
  await page.waitForTimeout(300); // a scroll anchoring adjustment lands with the next layout
  assert.equal(await page.evaluate(() => window.scrollY), before.y, 'the page scrolled while the reader only pointed at a cell');
  await page.close();
});

test('Q/K/V and A·V fit their box by default (43 and 128 tokens); zoomed in, the box scrolls with a visible cue', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    for (const [n, hash] of [[43, `#text=${encodeURIComponent(ENGLISH_43)}`], [128, withRandomWeights(`#text=${encodeURIComponent(words(128))}`)]]) {
      const { page, problems } = await openWalkthrough(hash, n, viewport);
      for (const stage of ['qkv', 'context']) {
        await showStage(page, stage);
        const where = `${n} tokens, ${viewport.width} px, ${stage}`;
        const frames = await page.evaluate(matrixFrames);
        assert.ok(frames.length >= 1, where);
        frames.forEach((f, i) => {
          assert.ok(!f.wide && !f.tall, `${where}, matrix ${i + 1}: fits its box by default (${JSON.stringify(f)})`);
          assert.equal(f.cues, 0, `${where}, matrix ${i + 1}: no cue when it fits`);
        });
        if (n === 43) await page.locator('#matrices').screenshot({ path: join(screenshotDir, `labels-fit-${stage}-${viewport.width}.png`) });
        // Zoom in: more than the box holds, and the cue says so.
        const zoomIn = page.locator('#matrices .matrix-slot').first().getByRole('button', { name: 'Zoom in' });
        await zoomIn.click();
        await zoomIn.click();
        await page.waitForFunction(() => {
          const s = document.querySelector('#matrices .heatmap-scroll');
          return s.scrollWidth > s.clientWidth || s.scrollHeight > s.clientHeight;
        });
        const [zoomed] = await page.evaluate(matrixFrames);
        assert.ok(zoomed.cues >= 1, `${where}: zoomed in, the cue is shown (${JSON.stringify(zoomed)})`);
        if (n === 43 && stage === 'qkv') await page.locator('#matrices .matrix-slot').first().screenshot({ path: join(screenshotDir, `labels-zoomed-${viewport.width}.png`) });
        await page.locator('#matrices .matrix-slot').first().getByRole('button', { name: 'Fit the width' }).click();
      }
      assert.deepEqual(problems(), []);
      await page.context().close();
    }
  }
});

/**
 * In the page: the inspector's box and every equation and table in it, and the stage's equations: each that overflows
 * sideways, and whether a cue is shown over its frame — [{ what, overflows, cue }].
 */
function inspectorFit() {
  const inspector = document.getElementById('inspector');
  const shown = (e) => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const out = [{ what: 'inspector', overflows: inspector.scrollWidth > inspector.clientWidth, cue: false }];
  for (const box of [...inspector.querySelectorAll('.katex-display, .terms-scroll'), ...document.querySelectorAll('#equation .katex-display')]) {
    const frame = box.closest('.scroll-frame');
    const scroller = frame?.firstElementChild ?? box;
    const overflows = box.scrollWidth > box.clientWidth || scroller.scrollWidth > scroller.clientWidth;
    const cue = shown(frame?.querySelector(':scope > .scroll-cue-right'));
    out.push({ what: box.className, overflows, cue, width: `${box.scrollWidth}/${box.clientWidth}` });
  }
  return out;
}

test('the cell inspector and the equations of every stage fit their box at 1280 and 375 px, or scroll with a visible cue', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const { page, problems } = await openWalkthrough(`#text=${encodeURIComponent(ENGLISH_43)}`, 43, viewport);
    const stages = await page.locator('#stage-list button').evaluateAll((bs) => bs.map((b) => b.dataset.stage));
    for (const stage of stages) {
      await showStage(page, stage);
      const canvas = page.locator('#matrices .matrix-slot canvas').first();
      const { rows, cols } = await canvas.evaluate((c) => ({ rows: Number(c.dataset.rows), cols: Number(c.dataset.cols) }));
      const cell = { row: Math.min(rows - 1, 14), col: Math.min(cols - 1, 8) };
      await hover(page, cell.row, cell.col);
      await page.waitForFunction(({ row, col }) => {
        const where = document.querySelector('#inspector .inspector-where')?.textContent ?? '';
        return where.includes(`= ${row})`) && where.includes(`= ${col})`);
      }, cell);
      await page.waitForTimeout(50); // a resize observer's turn
      const fit = await page.evaluate(inspectorFit);
      const where = `${viewport.width} px, ${stage}`;
      assert.equal(fit[0].overflows, false, `${where}: the inspector's box`);
      for (const box of fit.slice(1)) assert.equal(box.cue, box.overflows, `${where}: ${box.what} (${box.width}) overflows = cue shown`);
      if (stage === 'weights' || stage === 'context') {
        await page.locator('#inspector').screenshot({ path: join(screenshotDir, `inspector-${stage}-${viewport.width}.png`) });
      }
    }
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('the blog example\'s snapshot heatmaps: labels apart and inside, the hovered cell\'s drawn; a wide one shows its cue', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(`${live.server.url}blog-example.html`);
    await page.waitForFunction(() => [...document.querySelectorAll('attention-lens')]
      .every((e) => e.shadowRoot?.querySelector('.lens')?.dataset.status === 'ready'), null, { timeout: 60000 });
    const elements = page.locator('attention-lens[snapshot]');
    for (let i = 0; i < await elements.count(); ++i) {
      const canvas = elements.nth(i).locator('.matrices canvas').first();
      const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell, rows: +c.dataset.rows,
        cols: +c.dataset.cols }));
      const hovered = { row: g.rows - 1, col: Math.floor(g.cols / 2) };
      await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
      const frame = await canvas.evaluate((c) => c.parentElement.getBoundingClientRect().width);
      const x = g.left + (hovered.col + 0.5) * g.cell;
      if (x < frame) {
        await canvas.hover({ position: { x, y: g.top + (hovered.row + 0.5) * g.cell } });
        await canvas.evaluate((c, col) => new Promise((resolve) => {
          const check = () => (c.drawnLabels?.some((b) => b.focus && b.index === col) ? resolve() : requestAnimationFrame(check));
          check();
        }), hovered.col);
      }
      const where = `${viewport.width} px, snapshot ${i + 1}`;
      assertLabels(await canvas.evaluate(drawnLabels), where, x < frame ? hovered : null);
      // Wider than the element: the frame scrolls, and says so.
      const fit = await canvas.evaluate((c) => {
        const s = c.closest('.heatmap-scroll');
        const cue = s.parentElement.querySelector(':scope > .scroll-cue-right');
        return { wide: s.scrollWidth > s.clientWidth, cue: Boolean(cue?.getClientRects().length), inside: s.getBoundingClientRect().right <=
          c.getRootNode().host.getBoundingClientRect().right + 0.5 };
      });
      assert.ok(fit.inside, `${where}: the heatmap's frame inside the element`);
      assert.equal(fit.cue, fit.wide, `${where}: the cue shown exactly when it scrolls sideways`);
      await elements.nth(i).screenshot({ path: join(screenshotDir, `labels-snapshot${i + 1}-${viewport.width}.png`) });
    }
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('the generation heatmap: labels apart and inside its box, the hovered cell\'s drawn, the left-out ones named', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const { page, problems } = await openPage(live.chrome.browser, live.server.url, viewport);
    await page.goto(`${live.server.url}#tab=model`);
    await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
    await page.waitForSelector('#model-next li', { timeout: 30000 });
    await page.click('#model-example');
    const before = Number(await page.evaluate(() => document.body.dataset.modelGenerated ?? 0));
    await page.fill('#model-gen-tokens', '24');
    await page.fill('#model-gen-temperature', '0');
    await page.click('#model-gen-start');
    await page.waitForFunction((b) => Number(document.body.dataset.modelGenerated ?? 0) > b, before, { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector('#model-gen-map')?.dataset.rows === '24' &&
      document.querySelector('#model-gen-map canvas')?.dataset.rows === '24');
    const canvas = page.locator('#model-gen-map canvas');
    await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
    const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell, rows: +c.dataset.rows,
      cols: +c.dataset.cols }));
    const hovered = { row: g.rows - 2, col: g.cols - 3 };
    await canvas.hover({ position: { x: g.left + (hovered.col + 0.5) * g.cell, y: g.top + (hovered.row + 0.5) * g.cell } });
    await page.waitForFunction((col) => document.querySelector('#model-gen-map canvas').drawnLabels?.some((b) => b.focus && b.index === col),
      hovered.col);
    const where = `${viewport.width} px, generation`;
    assertLabels(await canvas.evaluate(drawnLabels), where, hovered);
    const fit = await page.evaluate(() => {
      const s = document.querySelector('#model-gen-map .heatmap-scroll');
      const cue = s.parentElement.querySelector(':scope > .scroll-cue-right');
      return { wide: s.scrollWidth > s.clientWidth, cue: Boolean(cue?.getClientRects().length), right: s.getBoundingClientRect().right, width: innerWidth };
    });
    assert.ok(fit.right <= fit.width, `${where}: the frame inside the page`);
    assert.equal(fit.cue, fit.wide, `${where}: the cue shown exactly when it scrolls sideways`);
    await page.locator('#model-gen-map').screenshot({ path: join(screenshotDir, `labels-generation-${viewport.width}.png`) });
    assert.deepEqual(problems(), []);
    await page.context().close();
  }
});

test('Circuits at 375 px: the 12-head patching map\'s labels apart, its numbers in cells or on hover (with a hint); the logit lens scrolls with a cue', async () => {
  const { page, problems } = await openPage(live.chrome.browser, live.server.url, PHONE);
  await page.goto(`${live.server.url}#tab=model`);
  await page.waitForSelector('body[data-model-ready="true"]', { timeout: 40000 });
  await loadGpt2Files(page, { layers: 2, heads: 12, d: 24, vocab: 50257, context: 32 });
  await page.click('#tab-circuits');
  await page.waitForFunction(() => document.getElementById('circuits-model').textContent.startsWith('model.safetensors: 2 layers × 12 heads'));
  await page.waitForFunction(() => !document.getElementById('circuits-preset-ioi').disabled);
  const drawn = async (act, kind) => {
    const before = Number(await page.evaluate(() => document.body.dataset.circuitsDrawn ?? 0));
    await act();
    await page.waitForFunction(({ b, k }) => Number(document.body.dataset.circuitsDrawn ?? 0) > b && document.body.dataset.circuitsShown === k,
      { b: before, k: kind }, { timeout: 40000 });
  };
  await drawn(() => page.click('#circuits-preset-ioi'), 'heads');
  const table = await (await page.waitForFunction(circuitsTable)).jsonValue();
  assert.equal(table.colLabels.length, 12);
  assert.match(await page.textContent('#circuits-detail'), /^Point at, tap or focus a cell to read its number/);
  const canvas = page.locator('#circuits-map canvas');
  await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
  const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell }));
  const hovered = { row: 1, col: 10 };
  await canvas.hover({ position: { x: g.left + (hovered.col + 0.5) * g.cell, y: g.top + (hovered.row + 0.5) * g.cell } });
  await page.waitForFunction(() => /^layer /.test(document.getElementById('circuits-detail').textContent));
  const labels = await canvas.evaluate(drawnLabels);
  assertLabels(labels, '375 px, patching over 12 heads', hovered);
  assert.deepEqual(labels.boxes.filter((b) => b.axis === 'col').map((b) => b.text).sort(), table.colLabels.slice().sort(), 'every head labelled');
  // The hovered cell's number, as the screen-reader table has it (4 decimals).
  const detail = await page.textContent('#circuits-detail');
  const [, number] = detail.match(/^layer L2, head H11: (\S+)$/) ?? [];
  assert.ok(number !== undefined, detail);
  assert.ok(Math.abs(Number(number) - Number(table.cells[1][10])) < 1e-4, `${detail} vs ${table.cells[1][10]}`);
  assert.ok(g.cell >= 16, `cells of ${g.cell} px hold their numbers where they fit`);
  await page.locator('#circuits-map').screenshot({ path: join(screenshotDir, 'labels-circuits-patching-375.png') });

  await drawn(() => page.check('input[name="circuits-show"][value="lens"]'), 'lens');
  const lens = await page.evaluate(() => {
    const s = document.querySelector('#circuits-map .heatmap-scroll');
    const cue = s.parentElement.querySelector(':scope > .scroll-cue-right');
    return { wide: s.scrollWidth > s.clientWidth, cue: Boolean(cue?.getClientRects().length), right: s.getBoundingClientRect().right,
      width: document.documentElement.clientWidth, page: document.documentElement.scrollWidth };
  });
  assert.ok(lens.right <= lens.width && lens.page <= lens.width, `the lens's frame inside the page: ${JSON.stringify(lens)}`);
  assert.equal(lens.cue, lens.wide, `the lens scrolls sideways with a visible cue: ${JSON.stringify(lens)}`);
  assertLabels(await canvas.evaluate(drawnLabels), '375 px, logit lens');
  await page.locator('#circuits-map').screenshot({ path: join(screenshotDir, 'labels-circuits-lens-375.png') });
  assert.deepEqual(problems(), []);
  await page.context().close();
});
