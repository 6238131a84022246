// The families of issue 31 in the Your model view (Chromium): one tiny checkpoint per family
// (tests/data/families: GPT-NeoX/Pythia in F16, Qwen3, Gemma 3 and OLMo 2 in BF16, Gemma 2 and
// Phi-3 in F32) loaded by Hub id from the local stand-in of the Hub with a tokenizer.json of its
// own; the typed text's heads drawn as the public API computes them in the same browser; Gemma's
// local and global layers tagged as the golden data's per-layer windows say (the generator's
// metadata, not the page); the facts line naming the family as the core does; a head opened in the
// walkthrough, its block's q/k norms, soft-cap and partial rotary shown as steps of their own. The
// Hub menu (the picker folded): the Text box within the first screen at 1280 × 900 and right after
// the picker at 375 × 800, an entry chosen by keyboard, gated gemma-3-270m's message, a Pythia
// training checkpoint loaded as that revision (screenshots yourmodel-picker-{1280,375}.png).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, screenshotDir, serveDist, tableNumbers } from './browser.mjs';
import { apiHubCheckpoint, assertHeadsDrawn, expectedLayerTags, FAMILY_CASES, familyId as idOf, familyRepos, headFigure } from './hub-fixture.mjs';
import { familyGolden } from '../js/checkpoint-support.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';
import { strictCspAlso } from '../../scripts/lib/csp.mjs';

const TEXT = 'the cat sat on the mat and the dog ran in';

let hub;
let server;
let chrome;
before(async () => {
  // The family cases, gemma-3-270m's id gated (the Hub's GatedRepo answer), and the Pythia case as
  // pythia-70m's training checkpoint step1000 (the picker's revision menu).
  hub = await startStandIn({ ...familyRepos(), 'google/gemma-3-270m': familyRepos(['gemma3-bf16'])[idOf('gemma3-bf16')],
    'EleutherAI/pythia-70m@step1000': familyRepos(['pythia-f16'])[idOf('pythia-f16')] }, { gated: ['google/gemma-3-270m'] });
  [server, chrome] = await Promise.all([serveDist({ csp: strictCspAlso([hub.endpoint, hub.storage]) }), launchBrowser()]);
  mkdirSync(screenshotDir, { recursive: true });
});
after(async () => {
  await chrome?.close();
  server?.stop();
  await hub?.close();
});

/** The page's problems but its requests to the stand-in of the Hub. */
const ownProblems = (problems) => problems().filter((p) => !p.startsWith(`request left the origin: ${hub.endpoint}`) &&
  !p.startsWith(`request left the origin: ${hub.storage}`));

test('each new family loads by Hub id with its tokenizer: every head as the API draws it, Gemma\'s local layers tagged, a head in the walkthrough', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  try {
    await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
    await page.waitForSelector('#model-hub-pick optgroup', { state: 'attached', timeout: 30000 });
    const families = await page.evaluate(async () => {
      const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
      return (await loadAttentionLens()).catalog.families;
    });
    for (const name of FAMILY_CASES) {
      const { config, metadata } = familyGolden(name);
      const id = idOf(name);
      await page.fill('#model-hub-id', id);
      await page.click('#model-hub-load');
      await page.waitForFunction((want) => document.querySelector('#model-status').textContent.startsWith(want), `${id} from ${hub.endpoint}:`,
        { timeout: 30000 });
      assert.equal(await page.locator('#model-error').isHidden(), true, `${name}: ${await page.textContent('#model-error')}`);
      const family = families.find((f) => f.name === metadata.family);
      assert.ok(family, `${name}: the core lists ${metadata.family}`);
      assert.ok((await page.textContent('#model-facts')).startsWith(`${family.displayName} · ${config.num_hidden_layers} layers`), name);

      const api = await page.evaluate(apiHubCheckpoint, { hub: id, endpoint: hub.endpoint, text: TEXT });
      await page.fill('#model-text', TEXT);
      await page.waitForFunction((n) => document.querySelector('#model-text-info').textContent.startsWith(`${n} tokens`), api.n);
      const sizes = { layers: config.num_hidden_layers, heads: config.num_attention_heads };
      assert.equal(await page.locator('#model-head-grid [role="button"], #model-head-grid canvas').count() >= sizes.layers * sizes.heads, true);
      await assertHeadsDrawn((layer, head) => tableNumbers(page, headFigure(layer, head)), sizes, api);

      // Local and global layers: tagged as the golden data's windows say; the legend shown with them only.
      const tags = await page.$$eval('#model-head-grid .head-layer-title', (titles) => titles.map((t) => t.querySelector('span')?.textContent ?? null));
      const want = expectedLayerTags(metadata);
      assert.deepEqual(tags, want ?? tags.map(() => null), `${name}: layer tags`);
      assert.equal(await page.locator('#model-heads-layers').isVisible(), want !== null, `${name}: the tags' legend`);
      if (want) {
        const local = want.filter((t) => t !== 'global').length;
        assert.match(await page.textContent('#model-heads-layers'), new RegExp(`^${local} of the ${want.length} layers are local: each query sees only the last \\d+ tokens`));
        await page.screenshot({ path: join(screenshotDir, `yourmodel-${name}.png`), fullPage: true });
      }

      // A head of the last layer opens in the walkthrough as that layer of this checkpoint.
      const last = sizes.layers - 1;
      await page.click(`${headFigure(last, 0)} canvas`);
      await page.waitForSelector('#model-head-dialog[open]');
      if (want) assert.match(await page.textContent('#model-head-info'), new RegExp(`^(Reads K/V head 1\\. )?Layer ${last + 1} is ${want[last] === 'global' ? 'global' : 'local'}`));
      await page.click('#model-head-walkthrough');
      await page.waitForSelector('#walkthrough-view:not([hidden])');
      await page.waitForFunction((t) => document.querySelector('#model-badge').textContent.startsWith(t),
        `Your model (${family.displayName} checkpoint), layer ${last + 1} of ${sizes.layers}`, { timeout: 30000 });
      assert.equal(await page.locator('#error').isHidden(), true, `${name}: ${await page.textContent('#error')}`);
      await assertOwnSteps(page, name, id, last);
      await page.click('#tab-model');
      await page.waitForSelector('#model-view:not([hidden])');
    }
    assert.deepEqual(ownProblems(problems), []);
  } finally {
    await page.close();
  }
});

/** The opened layer's traced steps by the public API in the same page: { n, steps: { 'id/head': values } }. */
async function apiLayerSteps({ hub, endpoint, text, layer }) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens();
  const m = await lens.loadCheckpoint({ hub, endpoint });
  const { ids } = m.tokenize(text);
  const { steps } = m.forward(ids, { n: ids.length, trace: true });
  const out = { n: ids.length, steps: Object.fromEntries(steps[layer].filter((s) => s.head <= 0).map((s) => [`${s.id}/${s.head}`, Array.from(s.data)])) };
  m.dispose();
  return out;
}

/** The matrices on screen once drawn: [{ step, head, values: rows of numbers }]. */
async function drawnMatrices(page) {
  await page.waitForFunction(() => document.querySelector('#matrices figure') !== null &&
    [...document.querySelectorAll('#matrices figure')].every((f) => f.dataset.table === 'ready'));
  return page.$$eval('#matrices .matrix-slot', (slots) => slots.map((slot) => ({ step: slot.dataset.step, head: Number(slot.dataset.head),
    values: [...slot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))) })));
}

/**
 * The walkthrough of a family's layer shows what its block computes as steps of its own: the q/k
 * norms (Qwen3, Gemma 3, OLMo 2) after V and before RoPE, with the numbers the API's model trace
 * has (the table's rounding: 1e-4 + 1e-3 relative); Gemma 2's soft-cap after the scaling; Pythia's
 * partial rotary said in the RoPE stage.
 */
async function assertOwnSteps(page, name, id, layer) {
  const stages = await page.$$eval('#stage-list [data-stage]', (buttons) => buttons.map((b) => b.dataset.stage));
  const family = name.split('-')[0];
  const normed = ['qwen3', 'gemma3', 'olmo2'].includes(family);
  assert.equal(stages.includes('qk-norm'), normed, `${name}: a q/k norm stage (${stages})`);
  assert.equal(stages.includes('capped'), family === 'gemma2', `${name}: a soft-cap stage (${stages})`);
  if (normed) {
    assert.ok(stages.indexOf('qkv') < stages.indexOf('qk-norm') && stages.indexOf('qk-norm') < stages.indexOf('rope'), `${name}: ${stages}`);
    await page.click('#stage-list [data-stage="qk-norm"]');
    await page.waitForFunction(() => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === 'qk-norm');
    assert.match(await page.textContent('#stage-text'), /root mean square/);
    assert.ok((await page.textContent('#equation')).length > 0, `${name}: the q/k norm's equation`);
    const api = await page.evaluate(apiLayerSteps, { hub: id, endpoint: hub.endpoint, text: TEXT, layer });
    const drawn = await drawnMatrices(page);
    assert.deepEqual(drawn.map((d) => d.step), ['q_normed', 'k_normed'], name);
    for (const { step, head, values } of drawn) {
      const want = api.steps[`${step}/${head}`];
      assert.ok(want && values.length === api.n, `${name}: ${step} head ${head}`);
      values.flat().forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-4 + 1e-3 * Math.abs(want[i]),
        `${name} ${step} head ${head}, cell ${i}: drawn ${v}, API ${want[i]}`));
    }
    await page.screenshot({ path: join(screenshotDir, `walkthrough-${name}-qk-norm.png`), fullPage: true });
  }
  if (family === 'gemma2') {
    await page.click('#stage-list [data-stage="capped"]');
    await page.waitForFunction(() => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === 'capped');
    assert.match(await page.textContent('#stage-text'), /c·tanh\(s \/ c\) with c = \d/);
    assert.deepEqual((await drawnMatrices(page)).map((d) => d.step), ['capped'], name);
  }
  if (family === 'pythia') {
    await page.click('#stage-list [data-stage="rope"]');
    await page.waitForFunction(() => document.querySelector('#stage-list [aria-current="step"]')?.dataset.stage === 'rope');
    assert.match(await page.textContent('#stage-text'), /Only the first r = \d+ of the head's \d+ dimensions turn/);
  }
}

test('the Hub menu folds the picker: the Text box on the first screen; an entry chosen by keyboard fills the id box and its facts line; ' +
  'gated gemma says what to do; a Pythia training checkpoint loads that revision; at 375 px', async () => {
  const { page, problems } = await openPage(chrome.browser, server.url);
  const where = () => page.evaluate(() => {
    const top = (selector) => Math.round(document.querySelector(selector).getBoundingClientRect().top + scrollY);
    return { text: top('#model-text'), pick: top('#model-hub-pick'), files: top('#model-files'), height: innerHeight,
      scroll: document.documentElement.scrollWidth, width: innerWidth };
  });
  try {
    await page.goto(`${server.url}#tab=model&hubEndpoint=${encodeURIComponent(hub.endpoint)}`);
    await page.waitForSelector('body[data-model-ready="true"]', { timeout: 30000 });
    await page.waitForSelector('#model-hub-pick optgroup', { state: 'attached' });
    let at = await where();
    // At 1280 × 900 (openPage's) the Text box starts within the first screen, below the picker,
    // its first lines shown; with a Pythia entry chosen (its facts line and checkpoints' menu) its top still is.
    assert.ok(at.pick < at.text && at.text < at.files && at.text + 60 <= at.height, `1280 × 900: ${JSON.stringify(at)}`);
    console.log(`# the Text box's top: ${at.text} px at 1280 × 900`);

    // By keyboard: the menu focused by its label, the next entry chosen with the arrow key.
    await page.getByLabel('Listed', { exact: true }).focus();
    await page.selectOption('#model-hub-pick', 'openai-community/gpt2');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.inputValue('#model-hub-id'), 'distilbert/distilgpt2');
    assert.match(await page.textContent('#model-hub-line'), /^distilbert\/distilgpt2 · 353 MB · GPT-2 · 82 M parameters$/);
    assert.equal(await page.locator('#model-hub-revision-row').isHidden(), true, 'no checkpoints menu but for Pythia');

    // Pythia's training checkpoints: a menu shown for a Pythia entry only, named by its label; the one chosen is loaded.
    await page.selectOption('#model-hub-pick', 'EleutherAI/pythia-70m');
    const menu = page.getByLabel('Training checkpoint', { exact: false });
    assert.equal(await menu.isVisible(), true);
    assert.equal(await menu.evaluate((s) => s.options.length), 154);
    assert.deepEqual(await menu.evaluate((s) => [s.options[0].value, s.options[1].value, s.options[153].value]), ['', 'step142000', 'step0']);
    at = await where();
    assert.ok(at.text < at.height, `1280 × 900, Pythia chosen: ${JSON.stringify(at)}`);
    console.log(`# the Text box's top: ${at.text} px at 1280 × 900 with Pythia's checkpoints menu`);
    await page.screenshot({ path: join(screenshotDir, 'yourmodel-picker-1280.png') });
    // gemma-3-270m: gated on the stand-in; its facts line says so, and Load says what to do.
    await page.selectOption('#model-hub-pick', 'google/gemma-3-270m');
    assert.equal(await page.inputValue('#model-hub-id'), 'google/gemma-3-270m');
    assert.match(await page.textContent('#model-hub-line'), /· gated: accept its licence on the Hub$/);
    await page.click('#model-hub-load');
    await page.waitForFunction(() => !document.querySelector('#model-error').hidden && document.querySelector('#model-error').textContent !== '');
    assert.match(await page.textContent('#model-error'), new RegExp("^Could not load google/gemma-3-270m: repository 'google/gemma-3-270m' on " +
      `${hub.endpoint.replace(/\./g, '\\.')} is gated: .*To use it: open ${hub.endpoint.replace(/\./g, '\\.')}/google/gemma-3-270m, log in and accept ` +
      'the licence there, then download its config\\.json, model\\.safetensors and tokenizer\\.json .*drop them into the page'));
    await page.selectOption('#model-hub-pick', 'EleutherAI/pythia-70m');
    await menu.selectOption('step1000');
    await page.click('#model-hub-load');
    const start = `EleutherAI/pythia-70m @ step1000 from ${hub.endpoint}:`;
    await page.waitForFunction((s) => document.querySelector('#model-status').textContent.startsWith(s) ||
      document.querySelector('#model-error').textContent.includes('pythia'), start, { timeout: 30000 });
    assert.equal(await page.locator('#model-error').isHidden(), true, await page.textContent('#model-error'));
    assert.equal(hub.count('hub', '/EleutherAI/pythia-70m/resolve/step1000/config.json'), 1);
    assert.deepEqual([await page.inputValue('#model-hub-pick'), await menu.inputValue()], ['EleutherAI/pythia-70m', 'step1000'],
      'the menus show the one loaded');

    // A 375 × 800 phone: the picker, then the Text box (your own files after), nothing wider than the page.
    await page.setViewportSize({ width: 375, height: 800 });
    at = await where();
    assert.ok(at.scroll <= at.width, `375 px: the page is ${at.scroll} px wide`);
    assert.ok(at.pick < at.text && at.text < at.files, `375 × 800: ${JSON.stringify(at)}`);
    console.log(`# the Text box's top: ${at.text} px at 375 × 800 (Pythia chosen)`);
    await page.screenshot({ path: join(screenshotDir, 'yourmodel-picker-375.png'), fullPage: true,
      clip: { x: 0, y: 0, width: 375, height: at.text + 400 } });
    assert.deepEqual(ownProblems(problems).filter((p) => !/status of 401|GatedRepo|gated/i.test(p)), []);
  } finally {
    await page.close();
  }
});
