// Accessibility: axe-core's WCAG 2.0/2.1 A and AA rules on the page (light and dark; drawn, with
// the inspector open on a cell, on a second stage, with the line view and the embed dialog) and
// on the embed (the example post and a page of <attention-lens> elements), and on the Circuits view
// (the logit lens drawn with a cell focused, attribution with its bars and a head's pattern open, an
// answer refused), with zero violations.
// axe is injected as a script's content, so it runs under the pages' strict CSP test server too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { browserFixture, hoverCell, withRandomWeights } from './browser.mjs';

const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

const live = browserFixture();

async function openThemed(path, colorScheme) {
  const context = await live.chrome.browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(live.server.url + (path === '' || path.startsWith('#') ? withRandomWeights(path) : path));
  return { page, context, errors };
}

/** Runs axe on the document (shadow roots included); returns the violations, readable. */
async function audit(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async (tags) => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' >> ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`) }));
  }, TAGS);
  return violations;
}

/** Collects the violations of each state audited; check() fails listing all of them. */
function auditLog() {
  const found = [];
  return {
    async audit(page, where) {
      for (const v of await audit(page)) found.push({ where, ...v });
    },
    check() {
      const text = found.map((v) => `- [${v.where}] ${v.id} (${v.impact}): ${v.help}\n` +
        v.nodes.map((n) => `    ${n}`).join('\n')).join('\n');
      assert.equal(found.length, 0, `${found.length} axe violation(s):\n${text}`);
    },
  };
}

async function pageSettled(page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#matrices canvas') !== null);
  await page.waitForFunction(() => [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready'));
}

/** Waits until every <attention-lens> has rendered (ready or showing its error) with its tables. */
async function elementsSettled(page) {
  await page.waitForFunction(() => {
    const all = [...document.querySelectorAll('attention-lens')];
    return all.length > 0 && all.every((e) => ['ready', 'error'].includes(e.shadowRoot?.querySelector('.lens')?.dataset.status) &&
      [...e.shadowRoot.querySelectorAll('figure')].every((f) => f.dataset.table !== 'pending'));
  }, null, { timeout: 30000 });
}

for (const colorScheme of ['light', 'dark']) {
  test(`the page has no WCAG 2 A/AA violations (${colorScheme})`, async () => {
    const { page, context, errors } = await openThemed('', colorScheme);
    const log = auditLog();
    try {
      await pageSettled(page);
      assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), colorScheme === 'dark');
      await log.audit(page, `${colorScheme}, drawn`);

      await hoverCell(page, 0, 2, 1); // the inspector open on a cell
      await page.waitForSelector('[data-testid="cell-value"]');
      await log.audit(page, `${colorScheme}, inspector open`);

      await page.click('#stage-list [data-stage="scores"]'); // a second stage, per head
      await pageSettled(page);
      await hoverCell(page, 0, 3, 2);
      await page.waitForSelector('[data-testid="cell-value"]');
      await log.audit(page, `${colorScheme}, scores stage`);

      await page.click('#view-lines');
      await log.audit(page, `${colorScheme}, line view`);
      await page.click('#view-grid');

      await page.click('#embed'); // the embed-snippet dialog
      await page.waitForSelector('#embed-close', { state: 'visible' });
      await log.audit(page, `${colorScheme}, embed dialog`);
      await page.click('#embed-close');
      log.check();
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test(`the Circuits view has no WCAG 2 A/AA violations (${colorScheme})`, async () => {
    const { page, context, errors } = await openThemed('#tab=circuits&circuitShow=lens', colorScheme);
    const log = auditLog();
    const drawn = (kind) => page.waitForFunction((k) => document.body.dataset.circuitsShown === k &&
      document.querySelector('#circuits-map figure')?.dataset.table === 'ready', kind, { timeout: 40000 });
    try {
      await drawn('lens');
      await page.focus('#circuits-map canvas');
      await page.keyboard.press('ArrowRight');
      await log.audit(page, `${colorScheme}, logit lens, a cell focused`);
      await page.fill('#circuits-answer-a', 'xy'); // two tokens: refused, said beside the box
      await page.waitForFunction(() => document.getElementById('circuits-answer-a').getAttribute('aria-invalid') === 'true');
      await page.fill('#circuits-answer-a', '');
      await page.click('#circuits-preset-induction');
      await page.check('input[name="circuits-show"][value="attribution"]');
      await drawn('attribution');
      const c = await page.evaluate(() => ({ ...document.querySelector('#circuits-map canvas').dataset }));
      await page.click('#circuits-map canvas', { position: { x: Number(c.left) + 0.5 * Number(c.cell), y: Number(c.top) + 0.5 * Number(c.cell) } });
      await page.waitForFunction(() => document.querySelector('#circuits-head-map figure')?.dataset.table === 'ready');
      await log.audit(page, `${colorScheme}, attribution and a head's pattern`);
      log.check();
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test(`the embed has no WCAG 2 A/AA violations (${colorScheme})`, async () => {
    const { page, context, errors } = await openThemed('blog-example.html', colorScheme);
    const log = auditLog();
    try {
      await elementsSettled(page);
      await log.audit(page, `${colorScheme}, example post`);

      // Elements in other states: full (tokens, head picker, legend, explanation), an invalid
      // attribute (its message), several matrices; then a cell focused from the keyboard.
      await page.route(live.server.url + 'a11y-embed.html', (route) => route.fulfill({
        status: 200, contentType: 'text/html; charset=utf-8', body: `<!doctype html><html lang="en"><head>
<meta charset="utf-8"><title>embed states</title><link rel="icon" href="data:,">
<script src="attention-lens-element.js" defer></script></head><body><main>
<attention-lens text="The cat sat on the mat" step="scores" head="2"></attention-lens>
<attention-lens text="a b c" mask="bogus" heads="3"></attention-lens>
<attention-lens text="x y z" positional="rope" step="qkv" heads="2" d-model="8"></attention-lens>
</main></body></html>` }));
      await page.goto(live.server.url + 'a11y-embed.html');
      await elementsSettled(page);
      await log.audit(page, `${colorScheme}, element states`);
      await page.locator('attention-lens').first().locator('canvas').first().focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowDown');
      await log.audit(page, `${colorScheme}, element cell focused`);
      log.check();
      assert.deepEqual(errors, []);

      // The audit sees inside the elements' shadow roots: an image without alt text there fails.
      await page.evaluate(() => document.querySelector('attention-lens').shadowRoot.append(document.createElement('img')));
      assert.deepEqual((await audit(page)).map((v) => v.id), ['image-alt']);
    } finally {
      await context.close();
    }
  });
}
