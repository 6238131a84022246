// Screenshots of the built page for a person to look at: desktop and 375-px phone, light and
// dark, into build/screenshots/. Usage: node scripts/screenshot.mjs [hash] [name] [trainMs]
// With a hash holding tab=train (the Train view), it starts training, shoots after trainMs
// (default 6000) mid-training, then pauses.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, screenshotDir, serveDist } from '../tests/e2e/browser.mjs';

const hash = process.argv[2] ?? '';
const name = process.argv[3] ?? 'page';
const trainMs = Number(process.argv[4] ?? 6000);
const train = /(^|[#&])tab=train(&|$)/.test(hash);
mkdirSync(screenshotDir, { recursive: true });
const server = await serveDist();
const { browser, close } = await launchBrowser();
try {
  for (const [label, viewport, scheme] of [['desktop', { width: 1280, height: 900 }, 'light'],
    ['phone', { width: 375, height: 812 }, 'light'], ['desktop-dark', { width: 1280, height: 900 }, 'dark']]) {
    const { page, problems } = await openPage(browser, server.url, viewport);
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(server.url + hash);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    if (train) {
      await page.waitForSelector('body[data-train-ready="true"]', { timeout: 30000 });
      await page.click('#train-run');
      await page.waitForTimeout(trainMs);
    }
    await page.waitForTimeout(300);
    const file = join(screenshotDir, `${name}-${label}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(file, problems().length ? problems() : 'no problems');
    await page.context().close();
  }
} finally {
  await close();
  server.stop();
}
