// Screenshots of the built page for a person to look at: desktop and 375-px phone, light and
// dark, into build/screenshots/, in Chromium, Firefox or WebKit (scripts/lib/drivers.mjs).
// Usage: node scripts/measure/screenshot.mjs [hash] [name] [trainMs] [--engine chromium|firefox|webkit|all]
// (files: NAME-LABEL.png in Chromium, NAME-ENGINE-LABEL.png in the others). With a hash holding
// tab=train (the Train view), it starts training and shoots after trainMs (default 6000).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { screenshotDir, serveDist } from '../lib/browser.mjs';
import { ENGINES, launchEngine } from '../lib/drivers.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--engine');
const engineArg = at >= 0 ? args.splice(at, 2)[1] : 'chromium';
const engines = engineArg === 'all' ? ENGINES : [engineArg];
const hash = args[0] ?? '';
const name = args[1] ?? 'page';
const trainMs = Number(args[2] ?? 6000);
const train = /(^|[#&])tab=train(&|$)/.test(hash);
mkdirSync(screenshotDir, { recursive: true });
const server = await serveDist();
try {
  for (const engineName of engines) {
    const engine = await launchEngine(engineName);
    try {
      for (const [label, viewport, theme] of [['desktop', { width: 1280, height: 900 }, 'light'],
        ['phone', { width: 375, height: 812 }, 'light'], ['desktop-dark', { width: 1280, height: 900 }, 'dark']]) {
        const page = await engine.newPage(viewport);
        try {
          await page.goto(server.url + hash);
          await page.waitFor(() => document.body.dataset.ready === 'true', null, 20000);
          // The theme button cycles auto -> light -> dark.
          while (await page.evaluate(() => document.documentElement.dataset.theme ?? 'auto') !== theme) await page.click('#theme');
          if (train) {
            await page.waitFor(() => document.body.dataset.trainReady === 'true', null, 30000);
            await page.click('#train-run');
            await new Promise((resolve) => setTimeout(resolve, trainMs));
          }
          await new Promise((resolve) => setTimeout(resolve, 300));
          const file = join(screenshotDir, `${name}${engineName === 'chromium' ? '' : `-${engineName}`}-${label}.png`);
          await page.screenshot(file, { fullPage: true });
          const width = await page.evaluate(() => [innerWidth, document.documentElement.scrollWidth]);
          console.log(file, `viewport ${width[0]} px, page ${width[1]} px wide`);
        } finally {
          await page.close();
        }
      }
    } finally {
      await engine.close();
    }
  }
} finally {
  server.stop();
}
