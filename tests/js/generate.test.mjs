// model.generate and model.ablate through the API (docs/API.md, "Real models": generate, ablate):
// greedy generation equals forward + nextTokens at every step (ids, probabilities and each layer's
// attention row, bit for bit) for checkpoints and a shipped trained model; seeded sampling
// replays, and a sampled run cut into calls (the prompt + the tokens so far, the same seed)
// equals one call; onToken streams the steps; stop ids and a checkpoint's eos; ablation moves nextTokens
// and [] restores it bit for bit, in forward and in generate; every refused option is named.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertThrowsMessage, loadLens, withTrainedModel } from './support.mjs';
import { llamaGolden, smallGpt2Files } from './checkpoint-support.mjs';

const lens = await loadLens();

// A GPT-2-family checkpoint with GPT-2's tokenizer cut to 300 ids, and config.json's eos_token_id.
async function smallGpt2(eos) {
  const files = smallGpt2Files({ layers: 2, heads: 2, d: 16, vocab: 300, context: 48 });
  const config = eos === undefined ? files.config : { ...files.config, eos_token_id: eos };
  return lens.loadCheckpoint({ weights: files.weights, config,
    tokenizer: { vocab: files.vocab, merges: files.merges } });
}

// Greedy generation against forward + nextTokens(1) of the sequence so far at every step.
function assertGreedyEqualsForward(model, prompt, maxTokens, what) {
  const streamed = [];
  const result = model.generate(prompt, { maxTokens, onToken: (step) => streamed.push(step) });
  assert.ok(result.ids instanceof Int32Array, what);
  assert.equal(result.ids.length, maxTokens, what);
  assert.deepEqual(streamed, result.steps, `${what}: onToken saw every step, in order`);
  const { layers, heads } = model.config;
  const sequence = Array.from(prompt);
  result.steps.forEach((step, k) => {
    const n = sequence.length;
    const out = model.forward(Int32Array.from(sequence), { n });
    const [top] = model.nextTokens(1);
    assert.equal(step.id, top.id, `${what}: token ${k}`);
    assert.equal(result.ids[k], top.id, `${what}: token ${k}`);
    assert.equal(step.probability, top.probability, `${what}: probability of token ${k}`);
    assert.equal(step.attention.length, layers);
    for (let l = 0; l < layers; ++l) {
      assert.ok(step.attention[l] instanceof Float32Array);
      assert.equal(step.attention[l].length, heads * n, `${what}: [heads * t], t = prompt + ${k}`);
      for (let h = 0; h < heads; ++h) {
        const row = out.attention[l].subarray((h * n + n - 1) * n, (h * n + n) * n);
        assert.deepEqual(step.attention[l].subarray(h * n, (h + 1) * n), row, `${what}: token ${k} layer ${l} head ${h}`);
      }
    }
    sequence.push(step.id);
  });
  return result;
}

test('greedy generate equals forward + nextTokens at every step: checkpoints', async () => {
  const gpt = await smallGpt2();
  try {
    const prompt = gpt.tokenize('the model writes').ids;
    const result = assertGreedyEqualsForward(gpt, prompt, 20, 'gpt2 with a tokenizer');
    assert.deepEqual(result.steps.map((s) => s.token), gpt.tokenTexts(result.ids));
  } finally {
    gpt.dispose();
  }
  for (const name of ['qwen2-f32', 'mistral-f32']) { // grouped-query heads; a sliding window of 5
    const { weights, config, expected } = llamaGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const prompt = Int32Array.from(expected.ids.data, Number);
      const result = assertGreedyEqualsForward(m, prompt, 16, name);
      assert.ok(result.steps.every((s) => s.token === null), 'no tokenizer: token null');
    } finally {
      m.dispose();
    }
  }
});

test('greedy generate equals forward + nextTokens at every step: a shipped trained model and createModel', async () => {
  await withTrainedModel(lens, 'english', (english) => {
    assertGreedyEqualsForward(english, english.encode('the cat sat on the '), 24, 'english');
    // Each step's token is its character in the model's alphabet.
    const g = english.generate(english.encode('the cat sat on the '), { maxTokens: 8 });
    assert.equal(g.steps.map((s) => s.token).join(''), english.decode(g.ids));
  });
  const model = lens.createModel({ vocab: 20, context: 32, dModel: 32, heads: 4, layers: 2, positional: 'rope', mlp: true, seed: 3 });
  try {
    assertGreedyEqualsForward(model, [1, 2, 3, 4, 5], 20, 'createModel with RoPE');
  } finally {
    model.dispose();
  }
});

test('seeded sampling replays; another seed writes something else', async () => {
  await withTrainedModel(lens, 'english', (english) => {
    const prompt = english.encode('once upon a ');
    const options = { maxTokens: 40, temperature: 1.3, topK: 30, topP: 0.97, seed: 12345 };
    const a = english.generate(prompt, options);
    const b = english.generate(prompt, options);
    assert.deepEqual(a, b);
    const c = english.generate(prompt, { ...options, seed: 54321 });
    assert.notDeepEqual(Array.from(c.ids), Array.from(a.ids));
    // Each sampled token's probability is the full forward's softmax of it.
    const sequence = Array.from(prompt);
    a.steps.forEach((step) => {
      english.forward(Int32Array.from(sequence));
      const all = english.nextTokens(english.config.vocab);
      assert.equal(step.probability, all.find((t) => t.id === step.id).probability);
      sequence.push(step.id);
    });
    // topK 1 is greedy at any temperature.
    assert.deepEqual(english.generate(prompt, { maxTokens: 10, temperature: 5, topK: 1, seed: 9 }).ids,
      english.generate(prompt, { maxTokens: 10 }).ids);
  });
});

test('a sampled run cut into calls equals one call with the same seed (8 then 12 tokens); another seed differs', async () => {
  const english = await lens.trainedModel('english');
  const gpt = await smallGpt2();
  try {
    for (const [what, model, prompt] of [['english', english, english.encode('once upon a ')],
      ['gpt2', gpt, gpt.tokenize('the model writes').ids]]) {
      const options = { temperature: 1.1, topK: 40, topP: 0.98, seed: 987654321, stop: [] };
      const whole = model.generate(prompt, { ...options, maxTokens: 20 });
      assert.equal(whole.ids.length, 20, what);
      assert.notDeepEqual(Array.from(whole.ids), Array.from(model.generate(prompt, { maxTokens: 20, stop: [] }).ids),
        `${what}: sampled, not the greedy run`);
      const first = model.generate(prompt, { ...options, maxTokens: 8 });
      const rest = model.generate(Int32Array.from([...prompt, ...first.ids]), { ...options, maxTokens: 12 });
      assert.deepEqual([...first.ids, ...rest.ids], Array.from(whole.ids), `${what}: 8 + 12 tokens = 20 in one call`);
      assert.deepEqual([...first.steps, ...rest.steps], whole.steps, `${what}: the same steps (probabilities, attention rows)`);
      const other = model.generate(prompt, { ...options, maxTokens: 20, seed: 987654322 });
      assert.notDeepEqual(Array.from(other.ids), Array.from(whole.ids), `${what}: another seed, another run`);
    }
  } finally {
    english.dispose();
    gpt.dispose();
  }
});

test('stop ids end the generation (kept as its last token); a checkpoint stops at its eos', async () => {
  const plain = await smallGpt2();
  const prompt = plain.tokenize('the model writes').ids;
  const free = plain.generate(prompt, { maxTokens: 20 });
  plain.dispose();
  const eos = free.ids[5];
  const first = free.ids.indexOf(eos);
  const gpt = await smallGpt2([eos, 299]);
  try {
    assert.deepEqual(gpt.eos, [eos, 299]);
    assert.deepEqual(Array.from(gpt.generate(prompt, { maxTokens: 20 }).ids), Array.from(free.ids.subarray(0, first + 1)));
    assert.deepEqual(gpt.generate(prompt, { maxTokens: 20, stop: [] }).ids, free.ids);
    assert.equal(gpt.generate(prompt, { maxTokens: 20, stop: [free.ids[0]] }).ids.length, 1);
  } finally {
    gpt.dispose();
  }
  const model = lens.createModel({ vocab: 20, context: 16, seed: 2 });
  assert.equal(model.generate([1, 2, 3], { maxTokens: 13 }).ids.length, 13, 'no eos: maxTokens');
  model.dispose();
});

test('ablate moves nextTokens, [] restores it bit for bit; generate uses the ablated heads', async () => {
  await withTrainedModel(lens, 'english', (english) => {
    const prompt = english.encode('the cat sat on the ');
    const plain = english.forward(prompt);
    const before = english.nextTokens(5);
    assert.deepEqual(english.ablated, []);
    english.ablate([{ layer: 1, head: 0 }, { layer: 0, head: 2, scale: 0.5 }]);
    assert.deepEqual(english.ablated, [{ layer: 1, head: 0, scale: 0 }, { layer: 0, head: 2, scale: 0.5 }]);
    const ablated = english.forward(prompt);
    assert.notDeepEqual(ablated.logits, plain.logits);
    assert.deepEqual(ablated.attention[0], plain.attention[0], 'a head\'s attention weights stay its own');
    assert.notDeepEqual(english.nextTokens(5), before);
    assertGreedyEqualsForward(english, prompt, 12, 'english, ablated');
    english.ablate([]);
    assert.deepEqual(english.ablated, []);
    const restored = english.forward(prompt);
    assert.deepEqual(restored.logits, plain.logits);
    assert.deepEqual(restored.attention, plain.attention);
    assert.deepEqual(english.nextTokens(5), before);
  });
  // A checkpoint: ablating every head of a layer equals zeroing its out_proj weight (no o_proj
  // bias in qwen2).
  const { weights, config, expected } = llamaGolden('qwen2-f32');
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const ids = Int32Array.from(expected.ids.data, Number);
    m.ablate([0, 1, 2, 3].map((head) => ({ layer: 1, head })));
    const ablated = m.forward(ids).logits;
    m.ablate([]);
    const w = m.parameters()['layers.1.attn.out_proj.weight'];
    m.setParameters({ 'layers.1.attn.out_proj.weight': new Float32Array(w.length) });
    assert.deepEqual(m.forward(ids).logits, ablated);
  } finally {
    m.dispose();
  }
});

test("forward's ablate option ablates those heads in that call only; next gives its next tokens", async () => {
  const { weights, config, expected } = llamaGolden('qwen2-f32');
  const m = await lens.loadCheckpoint({ weights, config });
  try {
    const ids = Int32Array.from(expected.ids.data, Number);
    const heads = [{ layer: 1, head: 0 }, { layer: 0, head: 2, scale: 0.5 }];
    const plain = m.forward(ids, { next: 5 });
    assert.deepEqual(plain.next, m.nextTokens(5), 'next: this forward\'s nextTokens');
    m.ablate(heads);
    const standing = m.forward(ids, { next: 5 });
    m.ablate([]);
    const once = m.forward(ids, { ablate: heads, next: 5 });
    assert.deepEqual(once.logits, standing.logits, 'the call\'s heads ablate as ablate() does, bit for bit');
    assert.deepEqual(once.attention, standing.attention);
    assert.deepEqual(once.next, standing.next);
    assert.notDeepEqual(once.logits, plain.logits);
    assert.deepEqual(m.ablated, [], 'the model\'s own ablation is left as it was');
    assert.deepEqual(m.forward(ids).logits, plain.logits);
    m.ablate(heads);
    const none = m.forward(ids, { ablate: [] });
    assert.deepEqual(none.logits, plain.logits, 'ablate: [] runs the whole model');
    assert.equal(m.ablated.length, 2, 'and keeps the standing heads');
    assert.deepEqual(m.forward(ids).logits, standing.logits);
    assertThrowsMessage(() => m.forward(ids, { ablate: { layer: 0 } }), /forward's ablate must be an array of \{ layer, head, scale\? \}/);
    assertThrowsMessage(() => m.forward(ids, { ablate: [{ layer: 9, head: 0 }] }), /cannot ablate layer 9 head 0/);
    assertThrowsMessage(() => m.forward(ids, { next: -1 }), /next must be an integer from 0/);
    assert.equal(m.ablated.length, 2, 'a refused call changes nothing');
  } finally {
    m.dispose();
  }
});

test('generate and ablate refuse bad options by name; the model stays usable', async () => {
  const model = lens.createModel({ vocab: 20, context: 16, dModel: 16, heads: 4, layers: 2, seed: 4 });
  const prompt = [1, 2, 3, 4];
  const bad = [
    [{ maxTokenz: 3 }, /unknown generate options key 'maxTokenz'; expected one of: maxTokens, temperature, topK, topP, seed, stop, onToken/],
    [{ maxTokens: 0 }, /maxTokens must be at least 1, got 0/],
    [{ maxTokens: 13 }, /the prompt's 4 tokens and maxTokens 13 make 17 positions, past the model's context of 16 \(maxTokens can be at most 12 after this prompt\)/],
    [{ maxTokens: -1 }, /maxTokens must be an integer from 0 to 4294967295, got -1/],
    [{ temperature: -0.1 }, /temperature must be 0 \(greedy\) or a finite number above 0, got -0.1/],
    [{ temperature: NaN }, /temperature must be 0 \(greedy\) or a finite number above 0, got NaN/],
    [{ temperature: '1' }, /temperature must be a number, got "1"/],
    [{ topP: 0 }, /topP must be above 0 and at most 1 \(1 keeps every token\), got 0/],
    [{ topP: 1.5 }, /topP must be above 0 and at most 1/],
    [{ topK: -1 }, /topK must be an integer from 0 to 4294967295, got -1/],
    [{ topK: 2.5 }, /topK must be an integer/],
    [{ seed: 2 ** 32 }, /seed must be an integer from 0 to 4294967295/],
    [{ stop: [20] }, /stop id 20 is out of range: the vocabulary has ids 0 to 19/],
    [{ stop: 3 }, /stop must be an Int32Array or an array of integers, got 3/],
    [{ onToken: 'yes' }, /onToken must be a function \(step\) => \{\}, got "yes"/],
  ];
  for (const [options, message] of bad) assertThrowsMessage(() => model.generate(prompt, options), message);
  assert.equal(model.generate(prompt).ids.length, 12, 'the default maxTokens: 20, or what the context leaves');
  assertThrowsMessage(() => model.generate([], {}), /generate needs a prompt of at least one token/);
  assertThrowsMessage(() => model.generate([1, 20]), /token id 20 at index 1 is out of range/);
  assertThrowsMessage(() => model.generate(prompt, null), /generate options must be an object, got null/);
  assertThrowsMessage(() => model.generate(prompt, {
    onToken: () => model.generate(prompt),
  }), /generate is already running on this model \(onToken cannot start another\)/);
  assert.throws(() => model.generate(prompt, { onToken: () => { throw new Error('stop here'); } }), /stop here/);

  model.ablate([{ layer: 0, head: 1 }]);
  const ablateBad = [
    [{ layer: 0, head: 1 }, /ablate expects an array of \{ layer, head, scale\? \} \(or \[\] to restore\), got an object/],
    [[null], /ablate's heads\[0\] must be \{ layer, head, scale\? \}, got null/],
    [[{ layer: 0, head: 1, weight: 1 }], /unknown ablate heads\[0\] key 'weight'; expected one of: layer, head, scale/],
    [[{ layer: 2, head: 0 }], /cannot ablate layer 2 head 0: the model has layers 0 to 1 and heads 0 to 3/],
    [[{ layer: 0, head: 4 }], /cannot ablate layer 0 head 4: the model has layers 0 to 1 and heads 0 to 3/],
    [[{ layer: -1, head: 0 }], /heads\[0\].layer must be an integer from 0 to 4294967295, got -1/],
    [[{ layer: 0, head: 0, scale: 2 }], /the scale of layer 0 head 0 must be between 0 \(ablated\) and 1 \(kept\), got 2$/],
    [[{ layer: 0, head: 0, scale: NaN }], /the scale of layer 0 head 0 must be between 0 \(ablated\) and 1 \(kept\), got NaN$/],
    [[{ layer: 0, head: 0, scale: '0' }], /heads\[0\].scale must be a number, got "0"/],
    [[{ layer: 1, head: 3 }, { layer: 1, head: 3, scale: 0.5 }], /layer 1 head 3 is listed twice in the ablation/],
  ];
  for (const [heads, message] of ablateBad) assertThrowsMessage(() => model.ablate(heads), message);
  assert.deepEqual(model.ablated, [{ layer: 0, head: 1, scale: 0 }], 'the ablation in force stays');

  // Still usable: generate works, and replaced the last forward's results.
  model.forward(Int32Array.from(prompt));
  assert.equal(model.generate(prompt, { maxTokens: 3 }).ids.length, 3);
  assertThrowsMessage(() => model.nextTokens(1), /nextTokens needs a forward first/);
  model.forward(Int32Array.from(prompt));
  assert.equal(model.nextTokens(1).length, 1);

  // Disposed from onToken: the next step says so.
  assertThrowsMessage(() => model.generate(prompt, { maxTokens: 5, onToken: () => model.dispose() }),
    /this model was disposed/);
});
