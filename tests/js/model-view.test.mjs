// What the "Your model" view shows, from the API: the top next tokens (model.nextTokens) against a
// float64 softmax of a real checkpoint's logits, the head finder's seeded probe (model.probe) and
// the core's head scores on it, GPT-2's token texts (tokenTexts); and the view's DOM-free helpers
// (web/views/model/model-data.js): the head table's order, which file a dropped file is, the
// generation heatmap's rows (each step's row of one head, as generate returned it); the view's URL
// keys (text, sampling settings, seed, knocked-out heads, a Hub model's id and revision)
// round-trip and bad ones are dropped, a bad Hub id with what a valid one looks like.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { fileRole, generationMatrix, percent, sortHeads, stripRows } from '../../web/views/model/model-data.js';
import { isHubId, pageDefaults, pageSchema } from '../../web/page-settings.js';
import { catalogOf } from '../../web/shared/catalog.js';
import { DEFAULTS, hashToState, makeSchema, stateToHash } from '../../web/shared/state.js';
import { gpt2Golden, gpt2SizedCheckpoint, gpt2Tokenizer } from './checkpoint-support.mjs';
import { loadLens, withTrainedModel } from './support.mjs';

const lens = await loadLens();

test('nextTokens: the k highest logits, softmax probabilities as float64, ties by id', async () => {
  const { weights, config, expected } = gpt2Golden('tiny-f32');
  const gpt = await lens.loadCheckpoint({ weights, config });
  try {
    const ids = Int32Array.from(expected.ids.data);
    const n = ids.length;
    const { logits } = gpt.forward(ids, { n });
    const v = config.vocab_size;
    const row = logits.subarray((n - 1) * v, n * v);
    const top = gpt.nextTokens(10);
    assert.equal(top.length, 10);
    const max = Math.max(...row);
    const sum = Array.from(row).reduce((s, x) => s + Math.exp(x - max), 0);
    const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    assert.deepEqual(top.map((t) => t.id), order.slice(0, 10));
    for (const t of top) assert.ok(Math.abs(t.probability - Math.exp(row[t.id] - max) / sum) < 1e-12);
    for (let i = 1; i < top.length; ++i) assert.ok(top[i].probability <= top[i - 1].probability);
    assert.equal(top[0].token, null, 'no tokenizer: no text');
    const all = gpt.nextTokens(v + 5);
    assert.equal(all.length, v);
    assert.ok(Math.abs(all.reduce((s, t) => s + t.probability, 0) - 1) < 1e-9);
    // The first sequence's last position, whatever the batch.
    gpt.forward(Int32Array.from([...ids, ...ids.slice().reverse()]), { n, batch: 2 });
    assert.deepEqual(gpt.nextTokens(10), top);
  } finally {
    gpt.dispose();
  }
});

test('nextTokens: ties keep id order; huge logits do not overflow (a tied embedding of equal rows)', async () => {
  const { weights, config } = gpt2Golden('tiny-f32');
  const gpt = await lens.loadCheckpoint({ weights, config });
  try {
    // Every row of the tied embedding the same and large: every logit equal, and huge.
    const d = config.n_embd;
    const v = config.vocab_size;
    const embed = Float32Array.from({ length: v * d }, (_, i) => 300 * Math.sin(i % d));
    gpt.setParameters({ 'embed.weight': embed });
    const { logits } = gpt.forward(Int32Array.of(1, 2), { n: 2 });
    assert.ok(Math.abs(logits[v]) > 100, `logit ${logits[v]}`);
    const top = gpt.nextTokens(3);
    assert.deepEqual(top.map((t) => t.id), [0, 1, 2]);
    for (const t of top) assert.ok(Math.abs(t.probability - 1 / v) < 1e-12, `${t.probability}`);
  } finally {
    gpt.dispose();
  }
});

test("probe: the core's seeded random tokens then their repeat, within vocab and context", async () => {
  const big = await lens.loadCheckpoint(gpt2SizedCheckpoint({ context: 1024 }));
  const small = await lens.loadCheckpoint(gpt2SizedCheckpoint({ vocab: 64, context: 16 }));
  try {
    const probe = big.probe();
    assert.equal(probe.batch, 1);
    assert.equal(probe.n, 50);
    const { ids } = probe;
    assert.deepEqual(Array.from(ids.subarray(25)), Array.from(ids.subarray(0, 25)));
    assert.deepEqual(Array.from(big.probe().ids), Array.from(ids), 'deterministic');
    assert.ok(ids.every((id) => id >= 0 && id < 50257));
    assert.ok(new Set(ids).size > 20, 'random, not constant');
    const short = small.probe();
    assert.equal(short.n, 16);
    assert.ok(short.ids.every((id) => id >= 0 && id < 64));
  } finally {
    big.dispose();
    small.dispose();
  }
});

test('the core measures induction and previous-token scores on the probe; sortHeads orders them', async () => {
  const { weights, config } = gpt2Golden('bare-f32');
  const gpt = await lens.loadCheckpoint({ weights, config });
  try {
    const { ids, n } = gpt.probe();
    const scores = gpt.headScores();
    assert.deepEqual(scores, gpt.headScores({ ids, n }), 'the default probe is probe()');
    assert.equal(scores.length, config.n_layer * config.n_head);
    for (const s of scores) {
      assert.ok(s.induction >= 0 && s.induction <= 1);
      assert.ok(s.previousToken >= 0 && s.previousToken <= 1);
    }
    const sorted = sortHeads(scores, 'induction');
    for (let i = 1; i < sorted.length; ++i) assert.ok(sorted[i].induction <= sorted[i - 1].induction);
    assert.equal(sortHeads(scores, 'previousToken')[0].previousToken, Math.max(...scores.map((s) => s.previousToken)));
  } finally {
    gpt.dispose();
  }
  const withNull = sortHeads([{ layer: 0, head: 0, induction: null }, { layer: 0, head: 1, induction: 0.1 }], 'induction');
  assert.deepEqual(withNull.map((s) => s.head), [1, 0]);
});

test('GPT-2 token texts: Ġ is a space, bytes of a character join, part of one shows its byte', async () => {
  const { vocab } = gpt2Tokenizer();
  const gpt = await lens.loadCheckpoint(gpt2SizedCheckpoint());
  try {
    const texts = gpt.tokenTexts([995, 15496, 198, vocab['Ã©'], vocab['Ã'], 50256]);
    assert.deepEqual(texts, [' world', 'Hello', '\n', 'é', '<0xC3>', '<|endoftext|>']);
    const all = gpt.tokenTexts(Int32Array.from({ length: 50257 }, (_, i) => i));
    assert.equal(all.length, 50257);
    assert.equal(all[127], '<0xC3>');
    assert.throws(() => gpt.tokenTexts([50257]), /token id 50257 is out of range/);
  } finally {
    gpt.dispose();
  }
  const own = await lens.loadCheckpoint({ ...gpt2SizedCheckpoint({ vocab: 258 }),
    tokenizer: { model: { type: 'BPE', vocab: { ...Object.fromEntries(Object.entries(vocab).filter(([, id]) => id < 256)), 'Ġt': 256 },
      merges: ['Ġ t'] }, added_tokens: [{ id: 257, content: '<|endoftext|>' }] } });
  try {
    assert.deepEqual(own.tokenTexts([256, 257]), [' t', '<|endoftext|>']);
  } finally {
    own.dispose();
  }
});

test('fileRole names each checkpoint file; anything else is refused', () => {
  assert.deepEqual(['model.safetensors', 'config.json', 'tokenizer.json', 'vocab.json', 'merges.txt', 'model.bin', 'x.onnx']
    .map(fileRole), ['weights', 'config', 'tokenizer', 'vocab', 'merges', null, null]);
});

test('percent: one decimal, two significant digits for small probabilities, "< 0.01%" below', () => {
  assert.deepEqual([0.123, 1, 0.001, 0.00021, 0.0000199, 1.234e-9, 0].map(percent), ['12.3%', '100%', '0.1%', '0.021%', '< 0.01%', '< 0.01%', '0%']);
});

test('tab=model is a tab of the URL', async () => {
  const { DEFAULTS, hashToState, makeSchema, stateToHash } = await import('../../web/shared/state.js');
  const schema = makeSchema(lens.catalog);
  assert.equal(stateToHash({ ...DEFAULTS, tab: 'model' }, schema), '#tab=model');
  assert.deepEqual(hashToState('#tab=model', schema).ignored, []);
  assert.equal(hashToState('#tab=model', schema).state.tab, 'model');
});

test("the Your model view's URL keys: text, sampling settings, seed and knocked-out heads round-trip; bad values are dropped", () => {
  const schema = makeSchema(catalogOf(lens));
  const settings = { ...DEFAULTS, modelText: 'When Mary & John', genTokens: 12, genTemperature: 0.7, genTopK: 40, genTopP: 0.9, genSeed: 7,
    knock: [{ layer: 0, head: 1 }, { layer: 5, head: 9 }] };
  const hash = stateToHash(settings, schema);
  assert.match(hash, /knock=0\.1%2C5\.9/);
  const { state, ignored } = hashToState(hash, schema);
  assert.deepEqual(ignored, []);
  for (const key of ['modelText', 'genTokens', 'genTemperature', 'genTopK', 'genTopP', 'genSeed', 'knock']) assert.deepEqual(state[key], settings[key], key);
  assert.equal(stateToHash(DEFAULTS, schema), '', 'the defaults are not in the link');
  const bad = hashToState('#knock=0.x&genTopP=2&genTemperature=-1&genTokens=0', schema);
  assert.deepEqual(bad.ignored.sort(), ['genTemperature', 'genTokens', 'genTopP', 'knock']);
  assert.deepEqual(bad.state.knock, []);
});

test("the Your model view's Hub keys: hub (org/name only), hubRevision (not main) and hubFile (a .gguf) round-trip; anything else is dropped and said what it should be", () => {
  const schema = pageSchema(catalogOf(lens));
  const base = pageDefaults({});
  const settings = { ...base, tab: 'model', hub: 'HuggingFaceTB/SmolLM2-135M', hubRevision: 'refs/pr/3', hubEndpoint: 'http://127.0.0.1:9' };
  const hash = stateToHash(settings, schema, pageDefaults);
  assert.match(hash, /[#&]hub=HuggingFaceTB%2FSmolLM2-135M(&|$)/);
  assert.match(hash, /[#&]hubRevision=refs%2Fpr%2F3(&|$)/);
  const { state, ignored } = hashToState(hash, schema, pageDefaults);
  assert.deepEqual(ignored, []);
  for (const key of ['hub', 'hubRevision', 'hubEndpoint']) assert.equal(state[key], settings[key], key);
  // main and no hub are not written.
  assert.doesNotMatch(stateToHash({ ...settings, hubRevision: 'main' }, schema, pageDefaults), /hubRevision/);
  assert.doesNotMatch(stateToHash({ ...settings, hub: '' }, schema, pageDefaults), /[#&]hub=/);
  assert.equal(hashToState('#tab=model', schema, pageDefaults).state.hub, undefined);
  // The forms lens.loadCheckpoint accepts as an id, and only those: no URL, path, markup or '..' / '--'.
  for (const good of ['openai-community/gpt2', 'Qwen/Qwen2.5-0.5B', 'a/b', 'org_1/name.v2_x']) assert.equal(isHubId(good), true, good);
  for (const bad of ['gpt2', 'a/b/c', 'https://huggingface.co/org/name', 'org/../x', 'org/na..me', 'org--x/y', '.org/x', 'org/x-', '<img src=x>/y',
    'org/ name', `org/${'x'.repeat(97)}`, '']) {
    assert.equal(isHubId(bad), false, bad);
    if (bad === '') continue;
    const read = hashToState(`#hub=${encodeURIComponent(bad)}`, schema, pageDefaults);
    assert.deepEqual(read.ignored, ["hub (not a Hugging Face id org/name: letters, digits, '.', '_', '-')"], bad);
    assert.equal(read.state.hub, undefined);
  }
  for (const bad of ['a b', '../x', 'x/./y', 'x//y', 'r'.repeat(101), 'v1?x']) {
    assert.deepEqual(hashToState(`#hubRevision=${encodeURIComponent(bad)}`, schema, pageDefaults).ignored, ['hubRevision (not a branch, tag or commit name)'], bad);
  }
  // hubFile: a GGUF repo's .gguf (up to folders down), round-tripped; absent when none; anything else dropped.
  const gguf = { ...settings, hub: 'bartowski/SmolLM2-135M-Instruct-GGUF', hubRevision: '', hubFile: 'SmolLM2-135M-Instruct-Q8_0.gguf' };
  const ggufHash = stateToHash(gguf, schema, pageDefaults);
  assert.match(ggufHash, /[#&]hubFile=SmolLM2-135M-Instruct-Q8_0\.gguf(&|$)/);
  assert.equal(hashToState(ggufHash, schema, pageDefaults).state.hubFile, gguf.hubFile);
  assert.equal(hashToState('#hubFile=Q4_K_M%2Fx-Q4_K_M.gguf', schema, pageDefaults).state.hubFile, 'Q4_K_M/x-Q4_K_M.gguf');
  assert.doesNotMatch(stateToHash({ ...gguf, hubFile: '' }, schema, pageDefaults), /hubFile/);
  for (const bad of ['model.safetensors', '../x.gguf', '.hidden.gguf', 'a//b.gguf', 'a b.gguf', '<img>.gguf', `${'x'.repeat(300)}.gguf`, '.gguf/x']) {
    const read = hashToState(`#hubFile=${encodeURIComponent(bad)}`, schema, pageDefaults);
    assert.deepEqual(read.ignored, ['hubFile (not a .gguf file name)'], bad);
    assert.equal(read.state.hubFile, undefined);
  }
});

test('generationMatrix: row k is generate step k\'s row of the chosen head, its positions after t not written yet (NaN)', async () => {
  await withTrainedModel(lens, 'english', (english) => {
    const prompt = english.encode('the cat sat ');
    const promptTokens = Array.from('the cat sat ');
    const g = english.generate(prompt, { maxTokens: 9 });
    const { heads, layers } = english.config;
    for (const [layer, head] of [[0, 0], [layers - 1, heads - 1], [1, 2]]) {
      const m = generationMatrix(promptTokens, g.steps, layer, head, heads);
      assert.equal(m.rows, 9);
      assert.equal(m.cols, prompt.length + 8, 'the prompt and every new token but the last');
      assert.deepEqual(m.rowTokens, g.steps.map((s) => s.token));
      assert.deepEqual(m.colTokens, [...promptTokens, ...g.steps.slice(0, 8).map((s) => s.token)]);
      g.steps.forEach((step, k) => {
        const t = prompt.length + k;
        const row = m.data.subarray(k * m.cols, (k + 1) * m.cols);
        assert.deepEqual(row.subarray(0, t), step.attention[layer].subarray(head * t, (head + 1) * t), `layer ${layer} head ${head} row ${k}`);
        assert.ok(Array.from(row.subarray(t)).every(Number.isNaN), `row ${k} after ${t}`);
      });
    }
    assert.deepEqual(generationMatrix(promptTokens, [], 0, 0, heads), { data: new Float32Array(0), rows: 0, cols: 0, rowTokens: [], colTokens: [] });
  });
});

test("stripRows: a generation step's strip as the reader picks its rows — each layer's heads max-pooled, one layer's heads, or every layer × head", async () => {
  await withTrainedModel(lens, 'english', (english) => {
    const prompt = english.encode('the cat sat ');
    const g = english.generate(prompt, { maxTokens: 3 });
    const { heads, layers } = english.config;
    const step = g.steps[2];
    const t = prompt.length + 2;
    // Per layer: at each position the largest weight any of its heads gave it.
    const pooled = stripRows(step.attention, t, heads, 'layers');
    assert.deepEqual([pooled.rows, pooled.labels], [layers, Array.from({ length: layers }, (_, l) => `L${l + 1}`)]);
    for (let l = 0; l < layers; ++l) {
      for (let j = 0; j < t; ++j) {
        const each = Array.from({ length: heads }, (_, h) => step.attention[l][h * t + j]);
        assert.equal(pooled.values[l * t + j], Math.max(...each), `layer ${l} position ${j}`);
        assert.ok(each.includes(pooled.values[l * t + j]), 'a weight a head gave, not a new number');
      }
    }
    // One layer's heads, as the step gives them.
    const one = stripRows(step.attention, t, heads, 'layer', layers - 1);
    assert.deepEqual([one.rows, one.labels[0], one.labels.at(-1)], [heads, 'H1', `H${heads}`]);
    assert.deepEqual(one.values, step.attention[layers - 1]);
    // Every layer × head, layer by layer.
    const all = stripRows(step.attention, t, heads, 'all');
    assert.deepEqual([all.rows, all.labels[heads]], [layers * heads, 'L2 H1']);
    step.attention.forEach((a, l) => assert.deepEqual(all.values.subarray(l * heads * t, (l + 1) * heads * t), a, `layer ${l}`));
  });
});
