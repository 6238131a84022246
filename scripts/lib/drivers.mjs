// One small driver interface over three engines, for the shared page checks
// (tests/e2e/engines/checks.mjs) and the measurement tools (scripts/measure/): Chromium through
// playwright-core, Firefox (firefox-esr) through puppeteer-core over WebDriver BiDi, WebKit
// (WebKitGTK's MiniBrowser) through WebKitWebDriver and selenium-webdriver under a private Xvfb.
// Every launched process is killed by close().
//
// launchEngine(name) -> { name, version, newPage(viewport) -> Page, close() }
// Page: goto(url), evaluate(fn, arg), waitFor(fn, arg, timeout), click(selector),
//   type(selector, text) (real keystrokes at the end of the field), press(key) ('End', 'Backspace',
//   'ArrowRight', 'ArrowLeft', 'Enter', 'Escape': to the focused element), fill(selector, value) (sets the value, one input event), mouseMove(x, y) (viewport
//   pixels), screenshot(path, { fullPage }), close(); requests() (every URL requested, workers'
//   included) and consoleLog() (the console's messages and page errors) in Chromium and Firefox only; a
//   waitFor that times out says what the page showed and its last console messages.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS } from './browser.mjs';

export const ENGINES = ['chromium', 'firefox', 'webkit'];
export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const MINIBROWSER = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

const root = fileURLToPath(new URL('../../', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** In the page: what a timed-out wait reports of it (the page's state flags, its visible messages). */
function pageState() {
  const shown = (e) => !e.hidden && e.textContent.trim() && e.getClientRects().length > 0;
  return JSON.stringify({ state: { ...document.body.dataset },
    messages: [...document.querySelectorAll('[role="alert"], [role="status"], [aria-live]')].filter(shown)
      .map((e) => `${e.id ? `#${e.id}` : e.tagName.toLowerCase()}: ${e.textContent.trim().slice(0, 160)}`).slice(0, 12) });
}

/**
 * Polls `fn(arg)` in the page until it returns something truthy; resolves to that value. A timeout's
 * message says what the page showed then and the last console messages, so a failure in CI explains itself.
 */
async function poll(page, fn, arg, timeout = 15000, what = fn.toString()) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await page.evaluate(fn, arg);
    if (value) return value;
    if (Date.now() > end) {
      const state = await page.evaluate(pageState).catch((error) => `(the page's state could not be read: ${error.message})`);
      const log = page.consoleLog?.().slice(-10).join('\n  ') || '(none recorded)';
      throw new Error(`timed out after ${timeout} ms waiting for ${what.slice(0, 200)}\n the page: ${state}\n its last console messages:\n  ${log}`);
    }
    await sleep(40);
  }
}

/** In the page: sets a field's value and fires one input event (what a paste does). */
function setValue([selector, value]) {
  const field = document.querySelector(selector);
  field.focus();
  field.value = value;
  field.dispatchEvent(new Event('input', { bubbles: true }));
}

/** In the page: focuses a field with the caret at its end. */
function focusEnd(selector) {
  const field = document.querySelector(selector);
  field.focus();
  field.setSelectionRange(field.value.length, field.value.length);
}

function common(page) {
  page.waitFor = (fn, arg, timeout, what) => poll(page, fn, arg, timeout, what);
  page.fill = (selector, value) => page.evaluate(setValue, [selector, value]);
  return page;
}

/**
 * A playwright or puppeteer page (their methods used here have the same names) as a driver
 * page; `context` is closed with it.
 */
function protocolPage(p, context) {
  const requests = [];
  const consoleLog = [];
  p.on('request', (request) => requests.push(request.url()));
  p.on('console', (message) => consoleLog.push(`${message.type()}: ${message.text().slice(0, 300)}`));
  p.on('pageerror', (error) => consoleLog.push(`page error: ${String(error?.message ?? error).slice(0, 300)}`));
  return common({
    requests: () => [...requests],
    consoleLog: () => [...consoleLog],
    goto: (url) => p.goto(url),
    evaluate: (fn, arg) => p.evaluate(fn, arg),
    click: (selector) => p.click(selector),
    type: async (selector, text) => {
      await p.evaluate(focusEnd, selector);
      await p.keyboard.type(text);
    },
    press: (key) => p.keyboard.press(key),
    mouseMove: (x, y) => p.mouse.move(x, y),
    screenshot: (path, { fullPage = false } = {}) => p.screenshot({ path, fullPage }),
    close: () => context.close(),
  });
}

async function launchChromium() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  return {
    version: `Chromium ${browser.version()}`,
    async newPage(viewport) {
      const context = await browser.newContext({ viewport });
      return protocolPage(await context.newPage(), context);
    },
    close: () => browser.close(),
  };
}

async function launchFirefox() {
  const puppeteer = (await import('puppeteer-core')).default;
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX_PATH, headless: true,
    protocol: 'webDriverBiDi' });
  return {
    version: `Firefox ${(await browser.version()).replace(/^firefox\//, '')}`,
    async newPage(viewport) {
      const context = await browser.createBrowserContext();
      const p = await context.newPage();
      await p.setViewport(viewport);
      return protocolPage(p, context);
    },
    close: () => browser.close(),
  };
}

const freePort = () => new Promise((resolve, reject) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  }).on('error', reject);
});

/** Resolves once `port` accepts HTTP (WebKitWebDriver's /status). */
async function waitForHttp(url, timeout = 10000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not up yet */ }
    await sleep(50);
  }
  throw new Error(`${url} did not answer`);
}

async function launchWebKit() {
  const { Builder, Key, Origin } = await import('selenium-webdriver');
  const children = [];
  // SIGTERM first (Xvfb then removes its lock and socket), SIGKILL whatever is left after 3 s.
  const killAll = async () => {
    const alive = () => children.filter((child) => child.exitCode === null && child.signalCode === null);
    for (const child of alive().reverse()) child.kill('SIGTERM');
    for (let i = 0; i < 60 && alive().length; ++i) await sleep(50);
    for (const child of alive()) child.kill('SIGKILL');
  };
  // If node exits without close() (an uncaught error), nothing is left running.
  const onExit = () => children.forEach((child) => child.kill('SIGTERM'));
  process.once('exit', onExit);
  let driver;
  try {
    // A private X server on a free display (the MiniBrowser needs one): Xvfb writes its number.
    const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1920x1200x24', '-nolisten', 'tcp'],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(xvfb);
    const display = await new Promise((resolve, reject) => {
      xvfb.stdout.once('data', (d) => resolve(`:${String(d).trim()}`));
      xvfb.once('exit', (code) => reject(new Error(`Xvfb exited with ${code}`)));
    });
    const port = await freePort();
    // WebDriver reports a crashed web process as an error with no message: what WebKitWebDriver
    // and the MiniBrowser print goes to build/webkit-driver.log (the last session's).
    mkdirSync(join(root, 'build'), { recursive: true });
    const log = openSync(join(root, 'build', 'webkit-driver.log'), 'w');
    const webdriver = spawn(WEBKIT_DRIVER, [`--port=${port}`], { stdio: ['ignore', log, log],
      env: { ...process.env, DISPLAY: display, WAYLAND_DISPLAY: '', G_MESSAGES_DEBUG: process.env.G_MESSAGES_DEBUG ?? '' } });
    closeSync(log);
    children.push(webdriver);
    await waitForHttp(`http://127.0.0.1:${port}/status`);
    driver = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
    }).build();
  } catch (error) {
    await killAll();
    throw error;
  }
  const caps = await driver.getCapabilities();
  const keys = { End: Key.END, Backspace: Key.BACK_SPACE, ArrowRight: Key.ARROW_RIGHT, ArrowLeft: Key.ARROW_LEFT, Enter: Key.ENTER,
    Escape: Key.ESCAPE };
  const evaluate = (fn, arg) => driver.executeScript(`return (${fn}).apply(null, arguments)`, arg);
  let open = false;
  return {
    version: `WebKitGTK ${caps.get('browserVersion')} MiniBrowser`,
    async newPage(viewport) {
      // One WebDriver session is one browser window: pages are opened one after the other.
      if (open) throw new Error('webkit: one page at a time');
      open = true;
      // The window's outer size: the viewport is what is left inside the MiniBrowser's chrome.
      await driver.manage().window().setRect({ x: 0, y: 0, width: viewport.width, height: viewport.height });
      const inner = await driver.executeScript('return [innerWidth, innerHeight]');
      const [dw, dh] = [viewport.width - inner[0], viewport.height - inner[1]];
      if (dw || dh) await driver.manage().window().setRect({ width: viewport.width + dw, height: viewport.height + dh });
      return common({
        goto: (url) => driver.get(url),
        evaluate,
        click: async (selector) => (await driver.findElement({ css: selector })).click(),
        type: async (selector, text) => {
          await evaluate(focusEnd, selector);
          await driver.actions().sendKeys(text).perform();
        },
        press: (key) => driver.actions().sendKeys(keys[key] ?? key).perform(),
        mouseMove: (x, y) => driver.actions().move({ origin: Origin.VIEWPORT, x: Math.round(x), y: Math.round(y) }).perform(),
        screenshot: async (path, { fullPage = false } = {}) => {
          // WebDriver shoots the viewport: for the full page, the window grows to the document.
          const height = fullPage ? await evaluate(() => document.documentElement.scrollHeight) : 0;
          if (height > viewport.height) await driver.manage().window().setRect({ width: viewport.width + dw, height: height + dh });
          writeFileSync(path, await driver.takeScreenshot(), 'base64');
          if (height > viewport.height) await driver.manage().window().setRect({ width: viewport.width + dw, height: viewport.height + dh });
        },
        close: async () => {
          open = false;
          await driver.get('about:blank');
        },
      });
    },
    async close() {
      try {
        await Promise.race([driver.quit(), sleep(5000)]);
      } catch { /* the processes are killed below */ }
      await killAll();
      process.off('exit', onExit);
    },
  };
}

/** Launches `name` (one of ENGINES). */
export async function launchEngine(name) {
  const launch = { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit }[name];
  if (!launch) throw new Error(`unknown engine ${name}: one of ${ENGINES.join(', ')}`);
  const engine = await launch();
  return { name, ...engine };
}
