// The npm package as a user gets it: `npm pack` of the built repo, installed offline from the
// tarball into a blank project in a temporary folder, then used (a) from Node, (b) from a page
// bundled by Vite (the wasm found and emitted by the bundler) in headless Chromium, (c) from
// TypeScript with tsc --strict (and a wrong example that must fail), (d) as the <attention-lens>
// element imported from the package. Needs dist/ (bash scripts/build.sh); nothing is downloaded:
// vite, typescript and playwright-core come from this repo's node_modules.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchBrowser, openPage, serveDist } from '../e2e/browser.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

// One forward every consumer runs; its output is compared with the repo's dist/ computing it.
const FORWARD = `
  const layer = lens.createLayer({ dModel: 8, heads: 2, positional: 'sinusoidal', seed: 7 });
  const { ids } = lens.tokenize('the package works');
  const result = layer.forward(layer.embed(ids), { mask: 'causal' });
  const forward = { simd: lens.simd, output: Array.from(result.output), attention: Array.from(result.attention) };
  layer.dispose();`;

let work; // the temporary folder: the tarball, the blank project, npm's cache
let project;
let packed; // npm pack --json's entry: { filename, files: [{ path }], size, … }
let reference; // FORWARD computed by the repo's dist/attention-lens.mjs

function npm(args, cwd) {
  return execFileSync('npm', [...args, '--cache', join(work, 'npm-cache'), '--no-audit', '--no-fund',
    '--loglevel=error', '--offline'], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, npm_config_update_notifier: 'false' } });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'attn-package-'));
  [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], repo));
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'blank', version: '1.0.0', private: true, type: 'module' }));
  npm(['install', join(work, packed.filename)], project);

  const { loadAttentionLens } = await import(join(repo, 'dist', 'attention-lens.mjs'));
  const lens = await loadAttentionLens();
  reference = new Function('lens', `${FORWARD}; return forward;`)(lens);
});

after(() => rmSync(work, { recursive: true, force: true }));

function assertSameForward(actual, where) {
  assert.equal(actual.simd, reference.simd, `${where}: simd`);
  assert.equal(actual.output.length, 3 * 8, `${where}: output length`);
  assert.deepEqual(actual.output, reference.output, `${where}: output differs from the repo's dist/`);
  assert.deepEqual(actual.attention, reference.attention, `${where}: attention differs from the repo's dist/`);
}

test('the tarball holds the built files, types, README and LICENSE, and no sources or tests', () => {
  const files = packed.files.map((f) => f.path).sort();
  for (const name of ['package.json', 'README.md', 'LICENSE', 'dist/attention-lens.mjs', 'dist/attention-lens.wasm',
    'dist/attention-lens.single.mjs', 'dist/attention-lens.d.ts', 'dist/attention-lens-layer.d.ts',
    'dist/attention-lens-model.d.ts', 'dist/attention-lens-checkpoint.d.ts', 'dist/attention-lens-element.js', 'dist/attention-lens-snapshot.js',
    'dist/models/induction.safetensors', 'dist/models/induction.js', 'dist/models/english.safetensors',
    'dist/models/english.js', 'dist/gpt2-encoder.json', 'dist/gpt2-vocab.bpe', 'dist/attention-lens-threads.mjs',
    'dist/attention-lens-threads.wasm', 'dist/attention-lens-threads.worker.js', 'dist/attention-lens-threads.worker.cjs']) {
    assert.ok(files.includes(name), `${name} is missing from the tarball: ${files.join(', ')}`);
  }
  const unwanted = files.filter((f) => /^(tests|cpp|scripts|web|build|node_modules|\.deps)\//.test(f) ||
    /^dist\/(index\.html|assets\/|blog-example\.html)/.test(f));
  assert.deepEqual(unwanted, [], 'the tarball holds files a user does not need');
  assert.ok(files.length <= 23, `${files.length} files: ${files.join(', ')}`);
});

test('npm pack refuses to pack a repository that was not built (no tarball without dist/)', () => {
  const bare = join(work, 'not-built');
  mkdirSync(join(bare, 'scripts'), { recursive: true });
  for (const file of ['package.json', 'README.md', 'LICENSE', 'scripts/check-pack.mjs']) cpSync(join(repo, file), join(bare, file));
  assert.throws(() => npm(['pack', '--pack-destination', bare], bare), /run `npm run build` first/);
  assert.deepEqual(readdirSync(bare).filter((f) => f.endsWith('.tgz')), []);
});

test('Node: import { loadAttentionLens } from "attention-lens" in the blank project runs a forward', () => {
  const script = `import { loadAttentionLens } from 'attention-lens';
    const lens = await loadAttentionLens();
    ${FORWARD}
    const trained = await lens.trainedModel('induction');
    const probe = trained.encode('abcabc');
    const shipped = { names: lens.trainedModels, logits: trained.forward(probe).logits.length };
    console.log(JSON.stringify({ resolved: import.meta.resolve('attention-lens'), forward, shipped }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' } });
  assert.equal(r.status, 0, r.stderr);
  const { resolved, forward, shipped } = JSON.parse(r.stdout);
  assert.deepEqual(shipped.names, ['induction', 'english'], 'the shipped trained models');
  assert.ok(shipped.logits > 0, 'the shipped induction model runs from the package');
  assert.ok(fileURLToPath(resolved).startsWith(join(project, 'node_modules', 'attention-lens')), resolved);
  assertSameForward(forward, 'node');
});

// lib es2022 without the DOM (the types need none; tsc is several times faster without it).
const GOOD_TS = `import { loadAttentionLens, type AttentionLens, type TrainReport } from 'attention-lens';
declare const console: { log(...values: unknown[]): void };

const lens: AttentionLens = await loadAttentionLens();
const layer = lens.createLayer({ dModel: 16, heads: 4, positional: 'rope', seed: 1 });
const result = layer.forward(layer.embed([1, 2, 3]), { mask: 'causal', trace: true });
const weights: Float32Array = result.attention ?? result.output;
const stepIds: string[] = lens.catalog.steps.map((s) => s.id);
const model = lens.createModel({ vocab: 16, context: 8, dModel: 16, heads: 2, layers: 1 });
const trainer = lens.createTrainer(model, { task: 'copy', lr: 1e-3 });
const report: TrainReport = trainer.step(2);
const quiet: TrainReport = trainer.step(3, { evaluate: false });
const heldOut: number = trainer.evaluate().heldOutLoss + trainer.step(1).accuracy + quiet.step;
const logits: Float32Array = model.forward(trainer.encode('ab')).logits;
console.log(weights.length, stepIds.length, report.loss, heldOut, logits.length, lens.catalog.limits.maxHeads);
async function llama(shards: Uint8Array[]) {
  const m = await lens.loadCheckpoint({ weights: shards, config: { model_type: 'qwen2', hidden_size: 64,
    intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 1,
    max_position_embeddings: 128, vocab_size: 72 } });
  const grouped: number = m.config.kvHeads + m.config.headDim + m.config.window;
  const family: string = m.family; // one of lens.catalog.families' names (the core's list grows)
  return [grouped, family, m.config.rope?.pairing];
}
console.log(typeof llama);
model.dispose();
layer.dispose();
`;

// Each line is a type error tsc must report (the line number is checked).
const BAD_TS = [
  `import { loadAttentionLens } from 'attention-lens';`,
  `const lens = await loadAttentionLens();`,
  `lens.createLayer({ dModel: '64' });`, // a string width
  `lens.createLayer({ positional: 'fourier' });`, // not a PositionalKind
  `const n: number = lens.createLayer().forward([1]).output;`, // a Float32Array, not a number
  `lens.createModel().frobnicate();`, // no such method
  `lens.createTrainer(lens.createModel(), { task: 'poetry' });`, // not a TaskName
  `const s: string = lens.catalog.limits.maxHeads;`, // a number
  `lens.createTrainer(lens.createModel()).step(1, { evaluate: 'no' });`, // not a boolean
  `lens.loadCheckpoint({ weights: new Uint8Array(8), config: { model_type: 'gemma', hidden_size: 8 } });`, // not a family
].join('\n');

test('TypeScript: tsc --strict accepts an example of the API and rejects a wrong one', async () => {
  const ts = join(project, 'ts');
  mkdirSync(ts, { recursive: true });
  writeFileSync(join(ts, 'good.ts'), GOOD_TS);
  writeFileSync(join(ts, 'bad.ts'), BAD_TS);
  const check = (file) => new Promise((resolve) => {
    execFile(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
      '--moduleResolution', 'nodenext', '--lib', 'es2022', file], { cwd: project, encoding: 'utf8' },
    (error, stdout, stderr) => resolve({ status: error ? error.code : 0, stdout, stderr }));
  });
  const [good, bad] = await Promise.all([check('ts/good.ts'), check('ts/bad.ts')]);

  assert.equal(good.status, 0, `good.ts should type-check:\n${good.stdout}${good.stderr}`);
  assert.notEqual(bad.status, 0, 'bad.ts type-checked, but it is wrong on every line from line 3');
  const errorLines = new Set([...bad.stdout.matchAll(/bad\.ts\((\d+),\d+\): error TS\d+/g)].map((m) => Number(m[1])));
  assert.deepEqual([...errorLines].sort((a, b) => a - b), [3, 4, 5, 6, 7, 8, 9, 10], `tsc's errors:\n${bad.stdout}`);
});

test('Vite bundles the package (wasm emitted) and the element; both work in Chromium', async (t) => {
  writeFileSync(join(project, 'index.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>vite + attention-lens</title><link rel="icon" href="data:,"></head>
<body><script type="module" src="./main.js"></script></body></html>`);
  writeFileSync(join(project, 'main.js'), `import { loadAttentionLens } from 'attention-lens';
const lens = await loadAttentionLens();
${FORWARD}
window.__forward = forward;`);
  writeFileSync(join(project, 'element.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>element from the package</title><link rel="icon" href="data:,">
<script type="module">import 'attention-lens/element';</script></head>
<body><attention-lens text="The bank will not loan money" heads="2" mask="causal" step="weights" compact></attention-lens></body></html>`);

  await build({
    root: project, configFile: false, logLevel: 'warn',
    build: { outDir: 'out', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096,
      rollupOptions: { input: { index: join(project, 'index.html'), element: join(project, 'element.html') } } },
  });
  const assets = readdirSync(join(project, 'out', 'assets'));
  assert.ok(assets.some((f) => /^attention-lens-.*\.wasm$/.test(f)), `no wasm emitted by Vite: ${assets.join(', ')}`);

  const server = await serveDist({ dir: join(project, 'out') });
  const chrome = await launchBrowser();
  t.after(async () => { await chrome.close(); server.stop(); });

  const { page, problems } = await openPage(chrome.browser, server.url.replace(/\/$/, ''));
  await page.goto(server.url + 'index.html');
  await page.waitForFunction(() => window.__forward, null, { timeout: 30000 });
  assertSameForward(await page.evaluate(() => window.__forward), 'vite page');
  assert.deepEqual(problems(), []);

  const element = await openPage(chrome.browser, server.url.replace(/\/$/, ''));
  await element.page.goto(server.url + 'element.html');
  await element.page.waitForFunction(() => ['ready', 'error'].includes(
    document.querySelector('attention-lens')?.shadowRoot?.querySelector('.lens')?.dataset.status), null, { timeout: 30000 });
  const shown = await element.page.evaluate(() => {
    const root = document.querySelector('attention-lens').shadowRoot;
    const canvas = root.querySelector('canvas');
    return { status: root.querySelector('.lens').dataset.status, rows: Number(canvas?.dataset.rows), cols: Number(canvas?.dataset.cols) };
  });
  assert.deepEqual(shown, { status: 'ready', rows: 6, cols: 6 });
  assert.deepEqual(element.problems(), []);
});
