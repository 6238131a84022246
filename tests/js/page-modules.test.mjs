// The page's pure modules (no DOM): URL-hash state, NumPy-style printing, CSV export, embed
// snippets, and the tutorial presets against the NumPy data.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { makeScale, matrixPixels } from '../../web/shared/colors.js';
import { createEngine, PREVIEW_SIDE } from '../../web/shared/engine.js';
import { elementSnippet, iframeSnippet, stateFromAttributes } from '../../web/shared/embed-snippet.js';
import { stepCsv } from '../../web/views/walkthrough/exporting.js';
import { formatBytes, numpyArrayString } from '../../web/shared/format.js';
import { buildPreset } from '../../web/shared/presets.js';
import { catalogOf } from '../../web/shared/catalog.js';
import { DEFAULTS, hashToState, makeSchema, stateToHash } from '../../web/shared/state.js';
import { assertClose, loadLens, numpyPath, readSafetensors, withTrainedModel } from './support.mjs';

// The settings' schema takes its choice lists from the core's catalog.
const schema = makeSchema(catalogOf(await loadLens()));

test('the URL hash round-trips every field and omits defaults', () => {
  assert.equal(stateToHash(DEFAULTS, schema), '');
  const state = { ...DEFAULTS, text: 'a & b = c?#', heads: 8, mask: 'sliding-window', window: 5, cells: [[1, 2], [3, 0]],
    scale: false, cross: true, source: 'über naïve', stage: 'scores', head: 3, preset: 'seed004-multi', view: 'lines' };
  const hash = stateToHash(state, schema);
  assert.match(hash, /^#/);
  const { state: back, ignored } = hashToState(hash, schema);
  assert.deepEqual(ignored, []);
  assert.deepEqual(back, state);
});

test('a hostile or broken hash falls back to defaults field by field and says what it ignored', () => {
  const { state, ignored } = hashToState('#text=%3Cimg%20src%3Dx%3E&heads=999&dModel=63&mask=javascript:alert(1)' +
    '&cells=1.2,x&seed=-1&__proto__=1&constructor=2&stage=scores', schema);
  assert.equal(state.text, '<img src=x>'); // kept as text; the page renders it with textContent
  assert.equal(state.heads, DEFAULTS.heads);
  assert.equal(state.dModel, DEFAULTS.dModel);
  assert.equal(state.mask, DEFAULTS.mask);
  assert.deepEqual(state.cells, []);
  assert.equal(state.seed, DEFAULTS.seed);
  assert.equal(state.stage, 'scores');
  assert.deepEqual(ignored.sort(), ['__proto__', 'cells', 'constructor', 'dModel', 'heads', 'mask', 'seed']);
  assert.equal(Object.getPrototypeOf(state), Object.prototype);
  assert.equal(hashToState('#text=' + 'x'.repeat(50000), schema).state.text.length, 20000);
});

test('colour scales: the 256-colour pixel table is the scale\'s own colours from min to max', () => {
  const packed = ([r, g, b]) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  const signed = Float32Array.from([-3, 0.5, 2, -Infinity]);
  for (const [kind, data] of [['probability', new Float32Array([0.2, 0.8])], ['sequential', signed], ['diverging', signed]]) {
    const scale = makeScale(kind, data);
    assert.equal(scale.table.length, 256);
    for (let i = 0; i < 256; ++i) {
      assert.equal(scale.table[i], packed(scale.rgb(scale.min + ((scale.max - scale.min) * i) / 255)), `${kind} ${i}`);
    }
  }
  // The ranges: probabilities [0, 1]; sequential [min, max] of the finite values; diverging ±max|v|.
  assert.deepEqual([makeScale('probability', signed).min, makeScale('probability', signed).max], [0, 1]);
  assert.deepEqual([makeScale('sequential', signed).min, makeScale('sequential', signed).max, makeScale('sequential', signed).masked], [-3, 2, true]);
  assert.deepEqual([makeScale('diverging', signed).min, makeScale('diverging', signed).max], [-3, 3]);
  // Viridis runs from #440154 to #fde725; blue–red from #053061 to #67001f.
  assert.deepEqual([makeScale('probability', signed).table[0], makeScale('probability', signed).table[255]],
    [packed([0x44, 0x01, 0x54]), packed([0xfd, 0xe7, 0x25])]);
  assert.deepEqual([makeScale('diverging', signed).table[0], makeScale('diverging', signed).table[255]],
    [packed([0x05, 0x30, 0x61]), packed([0x67, 0x00, 0x1f])]);
});

test('matrixPixels: one pixel per cell through the table, −∞ transparent, and pooled blocks keep their peak', () => {
  // 3 × 4 probabilities with a masked cell.
  const data = Float32Array.from([0, 0.25, 0.5, 1, 0.75, -Infinity, 0.1, 0.2, 0.3, 0.4, 0.6, 0.9]);
  const scale = makeScale('probability', data);
  const pixels = matrixPixels({ data, rows: 3, cols: 4 }, scale, 1, new Uint32Array(12).fill(7));
  data.forEach((v, i) => {
    const want = v === -Infinity ? 0 : scale.table[Math.round(v * 255)];
    assert.equal(pixels[i], want, `cell ${i} (${v})`);
  });
  // A signed matrix: min and max take the ends of the table.
  const signed = Float32Array.from([-2, 0, 1, 2]);
  const diverging = makeScale('diverging', signed);
  assert.deepEqual(Array.from(matrixPixels({ data: signed, rows: 2, cols: 2 }, diverging, 1, new Uint32Array(4))),
    [diverging.table[0], diverging.table[128], diverging.table[191], diverging.table[255]]);
  // 7 × 7 cells in 3 × 3 blocks (the last row and column of blocks are partial): a single 1 among
  // zeros lights its block only; an all-masked block stays transparent.
  const big = new Float32Array(49);
  big[3 * 7 + 4] = 1; // row 3, column 4: block (1, 1)
  for (const i of [6 * 7 + 0, 6 * 7 + 1, 6 * 7 + 2]) big[i] = -Infinity; // block (2, 0) is row 6, columns 0-2
  const pooled = matrixPixels({ data: big, rows: 7, cols: 7 }, scale, 3, new Uint32Array(9));
  assert.deepEqual(Array.from(pooled), [scale.table[0], scale.table[0], scale.table[0],
    scale.table[0], scale.table[255], scale.table[0],
    0, scale.table[0], scale.table[0]]);
});

test('past PREVIEW_SIDE tokens the engine sends every head max-pooled by the core, not the weights', async () => {
  const lens = await loadLens();
  const engine = createEngine(lens);
  const text = (count) => Array.from({ length: count }, (_, i) => `w${i % 37}`).join(' ');
  const small = engine.compute({ ...DEFAULTS, text: text(PREVIEW_SIDE), heads: 2, dModel: '32' });
  assert.equal(small.headPreviews, null, 'up to PREVIEW_SIDE tokens the tiles draw the weights themselves');
  assert.equal(small.attention.length, 2 * PREVIEW_SIDE * PREVIEW_SIDE);
  const n = 2 * PREVIEW_SIDE + 3; // step 3: 172 × 172 blocks, the last ones partial
  const r = engine.compute({ ...DEFAULTS, text: text(n), heads: 2, dModel: '32', mask: 'causal' });
  assert.equal(r.attention, undefined, 'the full weights stay in the core');
  const { step, rows, cols, data } = r.headPreviews;
  assert.deepEqual([step, rows, cols, data.length], [3, 172, 172, 2 * 172 * 172]);
  // The same state through the API, weights returned: each preview cell is its block's largest.
  const layer = lens.createLayer({ dModel: 32, heads: 2, seed: DEFAULTS.seed, positional: DEFAULTS.positional });
  const weights = layer.forward(layer.embed(lens.tokenize(text(n)).ids), { n, mask: 'causal' }).attention;
  layer.dispose();
  for (let h = 0; h < 2; ++h) {
    for (let pr = 0; pr < rows; pr += 7) {
      for (let pc = 0; pc < cols; pc += 5) {
        let best = -Infinity;
        for (let i = pr * step; i < Math.min(n, (pr + 1) * step); ++i) {
          for (let j = pc * step; j < Math.min(n, (pc + 1) * step); ++j) best = Math.max(best, weights[(h * n + i) * n + j]);
        }
        assert.equal(data[(h * rows + pr) * cols + pc], best, `head ${h} block (${pr}, ${pc})`);
      }
    }
  }
  // The head on screen is still traced in full (its weights step is n × n).
  assert.equal(r.steps.find((s) => s.id === 'weights').data.length, n * n);
});

test('numpyArrayString prints like NumPy (outputs captured from numpy 1.24.2 in Debian 12)', () => {
  // str(np.round(np.array([[0.25, 0.235], [0, -0.1]]), 3))
  assert.equal(numpyArrayString([0.25, 0.235, 0, -0.1], [2, 2], 3), '[[ 0.25   0.235]\n [ 0.    -0.1  ]]');
  // str(np.round(np.array([[0.5, 1], [0, 0]]), 3))
  assert.equal(numpyArrayString([0.5, 1, 0, 0], [2, 2], 3), '[[0.5 1. ]\n [0.  0. ]]');
  // np.random.seed(1); str(np.round(np.random.randn(4, 8), 4)), first row
  const printed = numpyArrayString([1.62434536, -0.61175641, -0.52817175, -1.07296862, 0.86540763, -2.3015387,
    1.74481176, -0.7612069], [1, 8], 4);
  assert.equal(printed, '[[ 1.6243 -0.6118 -0.5282 -1.073   0.8654 -2.3015  1.7448 -0.7612]]');
});

test('CSV export quotes separators and neutralises formula-like labels', () => {
  const csv = stepCsv({ rows: 2, cols: 2, rowAxis: 'query', colAxis: 'key', rowLabels: ['=SUM(A1)', 'a,b'],
    colLabels: ['"q"', '@x'], data: Float32Array.from([0.5, -Infinity, 1, 0]) });
  assert.equal(csv, 'query \\ key,"""q""",\'@x\n\'=SUM(A1),0.5,-inf\n"a,b",1,0\n');
});

test('embed snippets escape the text and round-trip through the element\'s attribute parser', () => {
  const state = { ...DEFAULTS, text: 'He said "<b>hi</b>" & left', heads: 2, mask: 'causal', stage: 'scores', head: 1 };
  const snippet = elementSnippet(state);
  assert.ok(!snippet.includes('<b>'), snippet);
  assert.match(snippet, /text="He said &quot;&lt;b&gt;hi&lt;\/b&gt;&quot; &amp; left"/);
  const attributes = {};
  for (const [, name, value] of snippet.matchAll(/ ([a-z-]+)="([^"]*)"/g)) {
    attributes[name] = value.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  delete attributes.src;
  const { state: parsed, problems } = stateFromAttributes((name) => attributes[name] ?? null, schema);
  assert.deepEqual(problems, []);
  for (const key of ['text', 'heads', 'mask', 'stage', 'head']) assert.deepEqual(parsed[key], state[key], key);
  assert.match(iframeSnippet('https://example.org/?a=1#text="x"'), /src="https:\/\/example.org\/\?a=1#text=&quot;x&quot;"/);
  assert.equal(formatBytes(1536), '1.54 kB');
});

test('the tutorial presets rebuild the seeds\' inputs and reproduce their NumPy results', async () => {
  const lens = await loadLens();
  const cases = [
    ['seed001-causal', 'seed001_causal', (t) => ({ x: t.X, output: t.Y, attention: t.A })],
    ['seed004-single', 'seed004_single_head', (t) => ({ x: t.X, output: t.output, attention: t.weights })],
    ['seed004-multi', 'seed004_multi_head', (t) => ({ x: t.X, output: t.output, attention: t.all_weights })],
    ['seed004-pytorch', 'seed004_pytorch_compare', (t) => ({ x: t.X, output: t.out_np })],
  ];
  for (const [id, file, pick] of cases) {
    const want = pick(readSafetensors(numpyPath(file)).tensors);
    const preset = buildPreset(lens, id);
    assertClose(preset.x, want.x.data, { atol: 1e-6, rtol: 1e-6, what: `${id} X` });
    const layer = lens.createLayer(preset.config);
    try {
      layer.setWeights(preset.weights);
      const r = layer.forward(preset.x, { n: preset.tokens.length, mask: preset.mask });
      assertClose(r.output, want.output.data, { atol: 1e-5, rtol: 1e-5, what: `${id} output` });
      if (want.attention) assertClose(r.attention, want.attention.data, { atol: 1e-6, rtol: 1e-5, what: `${id} attention` });
      assert.ok(preset.printout(r).length > 0);
    } finally {
      layer.dispose();
    }
  }
  assert.throws(() => buildPreset(lens, 'nope'), /unknown tutorial preset 'nope'/);
});

test('the page opens on the english trained model; model=random in its URL is random weights, and both round-trip', async () => {
  const { PAGE_MODEL, PAGE_TEXT, pageDefaults, pageSchema } = await import('../../web/page-settings.js');
  const page = pageSchema(catalogOf(await loadLens()));
  const bare = hashToState('', page, pageDefaults);
  assert.deepEqual(bare, { state: { ...DEFAULTS, model: PAGE_MODEL, text: PAGE_TEXT, cells: [] }, ignored: [] });
  assert.equal(stateToHash(bare.state, page, pageDefaults), '');
  const random = hashToState('#model=random', page, pageDefaults);
  assert.deepEqual(random, { state: { ...DEFAULTS, cells: [] }, ignored: [] }, 'random weights and the shared default text');
  assert.equal(stateToHash(random.state, page, pageDefaults), '#model=random');
  const induction = { ...DEFAULTS, model: 'induction', text: 'abcabc', cells: [] };
  assert.deepEqual(hashToState(stateToHash(induction, page, pageDefaults), page, pageDefaults).state, induction);
  const typed = { ...DEFAULTS, text: 'the bank', cells: [] }; // random weights, another text
  assert.equal(stateToHash(typed, page, pageDefaults), '#text=the+bank&model=random');
  assert.deepEqual(hashToState('#text=the+bank&model=random', page, pageDefaults).state, typed);
  // The shared defaults (the element's) are unchanged: no model.
  assert.equal(DEFAULTS.model, '');
  assert.equal(stateToHash({ ...DEFAULTS }, schema), '');
});

test('the greyed controls show what the weights on screen fix, whatever the settings say', async () => {
  const { fixedControls } = await import('../../web/views/walkthrough/controls.js');
  const lens = await loadLens();
  const trainedInfo = Object.fromEntries(lens.trainedModels.map((name) => [name, lens.trainedModelInfo(name)]));
  // The settings a refused input left behind (word tokens, sinusoidal, no mask) under the english model.
  const stale = { ...DEFAULTS, model: 'english', tokenizer: 'word', positional: 'sinusoidal', mask: 'none', dModel: 128, heads: 8 };
  const english = trainedInfo.english.config;
  assert.deepEqual(fixedControls(stale, null, trainedInfo),
    { tokenizer: 'char', positional: english.positional, mask: 'causal', dModel: english.dModel, heads: english.heads });
  assert.equal(fixedControls({ ...stale, model: '' }, null, trainedInfo), null, 'random weights: the reader\'s controls');
  assert.equal(fixedControls({ ...stale, model: 'gpt5' }, null, trainedInfo), null);
  // A layer opened from the Your model view (a GPT-2 checkpoint) or the Train view wins over both.
  const checkpoint = { source: 'checkpoint', config: { dModel: 768, heads: 12, positional: 'none' }, modelConfig: { positional: 'learned' } };
  assert.deepEqual(fixedControls(stale, checkpoint, trainedInfo), { tokenizer: 'bpe', positional: 'learned', mask: 'causal', dModel: 768, heads: 12 });
  const train = { config: { dModel: 32, heads: 2, positional: 'rope' } };
  assert.deepEqual(fixedControls({ ...stale, model: '' }, train, trainedInfo), { tokenizer: 'char', positional: 'rope', mask: 'causal', dModel: 32, heads: 2 });
  assert.throws(() => lens.trainedModelInfo('gpt5'), /unknown trained model "gpt5"; the shipped models are: induction, english/);
});

test('the greyed controls say why: the trained model, the opened layer or the tutorial preset, with the way back to every knob', async () => {
  const { whyFixed } = await import('../../web/views/walkthrough/controls-why.js');
  const lens = await loadLens();
  const trainedInfo = Object.fromEntries(lens.trainedModels.map((name) => [name, lens.trainedModelInfo(name)]));
  const english = whyFixed({ ...DEFAULTS, model: 'english' }, null, trainedInfo);
  assert.match(english.controls.text, /^The trained english model fixes these/);
  assert.deepEqual([english.controls.action, english.controls.label], ['random', 'Use random weights']);
  assert.match(english.input, /presets and cross-attention need random weights/);
  assert.deepEqual(whyFixed({ ...DEFAULTS, model: '' }, null, trainedInfo), { controls: null, input: null }, 'random weights: every knob works');
  assert.match(whyFixed({ ...DEFAULTS, model: '' }, { source: 'checkpoint' }, trainedInfo).controls.text, /opened from Your model/);
  assert.match(whyFixed({ ...DEFAULTS, model: 'english' }, { source: 'train' }, trainedInfo).controls.text, /opened from the Train view/);
  const preset = whyFixed({ ...DEFAULTS, model: '', preset: 'seed004-multi' }, null, trainedInfo);
  assert.deepEqual([preset.controls.action, preset.controls.label], ['own-text', 'Back to your text']);
});

test('the engine reads typed text in a shipped model\'s alphabet and says which characters it read as others', async () => {
  const lens = await loadLens();
  const engine = createEngine(lens);
  await withTrainedModel(lens, 'english', (english) => {
    engine.useTrainedModel(english);
    const state = { ...DEFAULTS, model: 'english', mask: 'causal', text: 'The bank will not loan money.' };
    const result = engine.compute(state);
    assert.deepEqual(result.queryTokens, Array.from('the bank will not loan money.'));
    assert.deepEqual(result.mapped, [{ position: 0, typed: 'T', read: 't', how: 'lowercase' }]);
    assert.equal(result.readNote, "Read in the english model's alphabet: 1 capital as lowercase.");
    // The drawn weights are the model's on the mapped text (layer 1, every head).
    const ids = english.encode('the bank will not loan money.');
    const { attention } = english.forward(ids, { n: ids.length });
    assertClose(result.attention, attention[0], { atol: 1e-5, what: 'walkthrough layer 1 vs model.forward' });
    // Text in the alphabet reads as itself, with nothing to say.
    const plain = engine.compute({ ...state, text: 'the bank' });
    assert.deepEqual([plain.mapped, plain.readNote], [[], '']);
    // Random weights have no alphabet.
    const random = engine.compute({ ...DEFAULTS, model: '', text: 'The bank' });
    assert.deepEqual([random.mapped, random.readNote], [[], '']);
  });
});
