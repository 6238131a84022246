// Serving dist/ and driving Debian's Chromium (playwright-core, never a downloaded browser): shared
// by the browser tests (tests/e2e/) and the measurement tools (scripts/measure/).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

/**
 * Starts scripts/serve.mjs on a free port; resolves to { url, stop }. With `csp` every response
 * carries a Content-Security-Policy header: `true` for the strict one (scripts/lib/csp.mjs), or a
 * policy string. With `probe` (a file path) every HTML page loads that script first
 * (tests/e2e/engines/probe.js: the engine-neutral error and request recorder). `dir` serves
 * another folder instead of dist/. Pages are cross-origin isolated (threads) unless `isolated` is
 * false (or ATTN_ISOLATED=0 is set: the suites as a host without the headers serves them).
 */
export function serveDist({ csp = false, probe = null, dir = 'dist', isolated = process.env.ATTN_ISOLATED !== '0' } = {}) {
  const args = ['scripts/serve.mjs', '--port', '0', '--dir', dir];
  if (!isolated) args.push('--no-isolation');
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
 * A page hash with random weights (`model=random`) unless it names a model: the page itself
 * opens on the `english` trained model; the tests written for random weights and word tokens
 * open it with this.
 */
export function withRandomWeights(hash = '') {
  if (/(^#|&)model=/.test(hash)) return hash;
  return hash && hash !== '#' ? `${hash}&model=random` : '#model=random';
}
