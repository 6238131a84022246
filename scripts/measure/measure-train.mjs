// Measures the page's Train view in headless Chromium, in the standard config (induction task,
// 2 layers × 4 heads, d_model 64, context 64, lr 1e-3, batch 32, seed 1: the view's defaults):
//  - seconds from Start until a layer-2 head's induction score (the view's score curves,
//    model.headScores on the core's induction probe) passes 0.6, and the steps it took;
//  - frames per second of the page while it trains (requestAnimationFrame callbacks counted);
//  - keystroke-to-redraw in the probe field while it trains: from each key's input event to the
//    end of redrawing every head on the new probe (performance entries 'attention-lens:train-probe').
// Usage: node scripts/measure/measure-train.mjs [--max-seconds 120] [--keys 20]   (after npm run build)
import { launchBrowser, openPage, serveDist } from '../lib/browser.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const maxSeconds = arg('max-seconds', 120);
const keys = arg('keys', 20);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await serveDist();
const { browser, close } = await launchBrowser();
try {
  const { page, problems } = await openPage(browser, server.url);
  await page.goto(`${server.url}#tab=train`);
  await page.waitForSelector('body[data-train-ready="true"]', { timeout: 30000 });
  // Frames counted from Start on; Start clicked from inside the page so its clock starts there.
  await page.evaluate(() => {
    window.__frames = 0;
    const tick = () => {
      window.__frames += 1;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    window.__t0 = performance.now();
    document.querySelector('#train-run').click();
  });
  const formed = await page.waitForFunction(() => {
    const best = Math.max(...[...document.querySelectorAll('.train-curve[data-layer="1"]')]
      .map((f) => JSON.parse(f.dataset.scores || '[]')[1] ?? 0));
    return best > 0.6 ? { seconds: (performance.now() - window.__t0) / 1000, step: Number(document.body.dataset.trainStep), best,
      frames: window.__frames, status: document.querySelector('#train-status').textContent } : null;
  }, null, { timeout: maxSeconds * 1000, polling: 50 }).then((h) => h.jsonValue()).catch(() => null);
  if (formed) {
    console.log(`Induction head (standard config): a layer-2 induction score of ${formed.best.toFixed(2)} after ` +
      `${formed.seconds.toFixed(1)} s from Start, at step ${formed.step} (target: under 30 s)`);
    console.log(`  ${formed.status}`);
    console.log(`Frames per second while training: ${(formed.frames / formed.seconds).toFixed(1)} (requestAnimationFrame, ${formed.frames} frames in ${formed.seconds.toFixed(1)} s)`);
  } else {
    console.log(`Induction head (standard config): NOT formed within ${maxSeconds} s (step ${await page.evaluate(() => document.body.dataset.trainStep)})`);
  }

  // Keystroke → redraw while it keeps training: one key every 150 ms into the probe field.
  await page.focus('#train-probe');
  await page.keyboard.press('End');
  const samples = [];
  const framesBefore = await page.evaluate(() => ({ frames: window.__frames, t: performance.now() }));
  for (let i = 0; i < keys; ++i) {
    await page.evaluate(() => performance.clearMeasures('attention-lens:train-probe'));
    await page.keyboard.press(i % 2 === 0 ? 'x' : 'Backspace');
    const ms = await page.waitForFunction(() => performance.getEntriesByName('attention-lens:train-probe').at(-1)?.duration ?? null,
      null, { timeout: 10000, polling: 'raf' }).then((h) => h.jsonValue()).catch(() => null);
    if (ms !== null) samples.push(ms);
    await page.waitForTimeout(150);
  }
  const framesAfter = await page.evaluate(() => ({ frames: window.__frames, t: performance.now() }));
  const fpsTyping = (framesAfter.frames - framesBefore.frames) / ((framesAfter.t - framesBefore.t) / 1000);
  const status = await page.evaluate(() => document.body.dataset.trainStatus);
  console.log(`Keystroke → every head redrawn on the new probe, while ${status}: median ${median(samples).toFixed(1)} ms, ` +
    `max ${Math.max(...samples).toFixed(1)} ms over ${samples.length} of ${keys} keys; ${fpsTyping.toFixed(1)} frames per second meanwhile`);
  if (problems().length) console.log('problems:', problems());
} finally {
  await close();
  server.stop();
}
