// Shared browser-test fixtures: serve dist/ on a free localhost port and drive Debian's
// Chromium with playwright-core (never a downloaded browser).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

/**
 * Starts scripts/serve.mjs on a free port; resolves to { url, stop }. With `csp` every response
 * carries a Content-Security-Policy header: `true` for the strict one (scripts/csp.mjs), or a
 * policy string. With `probe` (a file path) every HTML page loads that script first
 * (tests/e2e/engines/probe.js: the engine-neutral error and request recorder). `dir` serves
 * another folder instead of dist/.
 */
export function serveDist({ csp = false, probe = null, dir = 'dist' } = {}) {
  const args = ['scripts/serve.mjs', '--port', '0', '--dir', dir];
  if (csp) args.push('--csp', ...(typeof csp === 'string' ? [csp] : []));
  if (probe) args.push('--probe', probe);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (match) resolve({ url: match[0], stop: () => child.kill() });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

/** Launches Chromium (playwright gives each launch a fresh temporary profile). */
export async function launchBrowser() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  return { browser, close: () => browser.close() };
}

/**
 * Opens a page that records console errors, page errors and every request that leaves
 * `origin`; returns { page, problems } where problems() lists them.
 */
export async function openPage(browser, origin, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const issues = [];
  page.on('console', (message) => {
    if (message.type() === 'error') issues.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => issues.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) {
      issues.push(`request left the origin: ${url}`);
    }
  });
  return { page, problems: () => issues };
}

export const screenshotDir = join(root, 'build', 'screenshots');

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
 * A page hash with random weights (`model=random`) unless it names a model: the page itself
 * opens on the `english` trained model; the tests written for random weights and word tokens
 * open it with this.
 */
export function withRandomWeights(hash = '') {
  if (/(^#|&)model=/.test(hash)) return hash;
  return hash && hash !== '#' ? `${hash}&model=random` : '#model=random';
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
