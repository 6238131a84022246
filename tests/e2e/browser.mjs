// Shared browser-test fixtures: node:test hooks that serve dist/ and launch Chromium, page
// instrumentation, and readers of the drawn heatmaps. Serving and launching are
// scripts/lib/browser.mjs's (re-exported here), which the measurement tools share.
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { launchBrowser, screenshotDir, serveDist } from '../../scripts/lib/browser.mjs';

export {
  CHROMIUM_ARGS, launchBrowser, openPage, screenshotDir, serveDist, withRandomWeights,
} from '../../scripts/lib/browser.mjs';

/**
 * From before any script of the page runs: counts wasm instantiations (window.__wasmInstances),
 * records Content-Security-Policy violations of the document (window.__cspViolations, as
 * "directive blocked-uri") and dismisses dialogs, listing them in the returned { dialogs }.
 */
export async function instrument(page) {
  const dialogs = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  await page.addInitScript(() => {
    window.__wasmInstances = 0;
    window.__cspViolations = [];
    for (const name of ['instantiate', 'instantiateStreaming']) {
      const original = WebAssembly[name];
      if (!original) continue;
      WebAssembly[name] = function (...args) {
        window.__wasmInstances += 1;
        return original.apply(this, args);
      };
    }
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return { dialogs };
}

/** Moves the mouse over cell (row, col) of the slotIndex-th heatmap of the page's walkthrough. */
export async function hoverCell(page, slotIndex, row, col) {
  const canvas = page.locator('#matrices .matrix-slot canvas').nth(slotIndex);
  const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, top: +c.dataset.top, cell: +c.dataset.cell }));
  await canvas.hover({ position: { x: g.left + (col + 0.5) * g.cell, y: g.top + (row + 0.5) * g.cell } });
}

/**
 * Registers node:test hooks that serve dist/ and launch Chromium for a test file; returns
 * { server, chrome }, filled in before the first test runs.
 */
export function browserFixture(serveOptions = {}) {
  const live = { server: null, chrome: null };
  before(async () => {
    live.server = await serveDist(serveOptions);
    live.chrome = await launchBrowser();
    mkdirSync(screenshotDir, { recursive: true });
  });
  after(async () => {
    await live.chrome?.close();
    live.server?.stop();
  });
  return live;
}

/**
 * In the page: the numbers the heatmap in `figureSelector` draws (its screen-reader table), row
 * by row, once the table is built; else null.
 */
export function heatmapTable(figureSelector) {
  const figure = document.querySelector(figureSelector);
  if (figure?.dataset.table !== 'ready') return null;
  return [...figure.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)));
}

/**
 * The numbers a heatmap draws, once its table is built. Checked and read in one evaluation: a
 * redraw between the two would empty the table.
 */
export async function tableNumbers(page, figureSelector) {
  return (await page.waitForFunction(heatmapTable, figureSelector)).jsonValue();
}

/**
 * In the page: the walkthrough's shown menus whose chosen text is wider than the room inside them
 * (a cut "the model's o…"): [{ id, text, width, room }] (px; the text measured in the menu's font).
 */
export function cutSelects() {
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('#walkthrough-view .controls select')].filter((s) => s.offsetParent !== null).map((s) => {
    const style = getComputedStyle(s);
    ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const text = s.selectedOptions[0]?.textContent ?? '';
    const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return { id: s.id, text, width: Math.ceil(ctx.measureText(text).width), room };
  }).filter((x) => x.width > x.room);
}

/**
 * In the page: what sticks out sideways from its panel in the view `viewSelector` (the tab shown):
 * each visible element that no scrolling or clipping box holds and whose right edge passes its
 * .panel's content box — the way a 1-px-too-wide file picker widens a phone's page in one engine and
 * not another. [`tag#id.class: right > edge`].
 */
export function sticksOut(viewSelector) {
  const out = [];
  for (const panel of document.querySelectorAll(`${viewSelector} .panel`)) {
    if (!panel.getClientRects().length) continue;
    const style = getComputedStyle(panel);
    const edge = panel.getBoundingClientRect().right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
    for (const e of panel.querySelectorAll('*')) {
      if (!e.getClientRects().length || e.closest('.sr-only, .sr-table')) continue;
      let held = false;
      for (let a = e.parentElement; a && a !== panel; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') held = true;
      }
      const right = e.getBoundingClientRect().right;
      if (!held && right > edge + 0.5) out.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className}: ${right.toFixed(1)} > ${edge.toFixed(1)}`);
    }
  }
  return out;
}
