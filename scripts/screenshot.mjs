// Screenshots of the built page for a person to look at: desktop and 375-px phone, light and
// dark, into build/screenshots/. Usage: node scripts/screenshot.mjs [hash] [name]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, screenshotDir, serveDist } from '../tests/e2e/browser.mjs';

const hash = process.argv[2] ?? '';
const name = process.argv[3] ?? 'page';
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
