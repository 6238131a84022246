// loadAttentionLens({ threads }): the threaded build (dist/attention-lens-threads.mjs) in node, and
// its numbers against the single-threaded build's, bit for bit: a model wide enough that its
// products split over the threads (forward, next tokens, generation, loss and gradients, training
// steps), the attention layer (its heads split over the threads) and a BF16 Llama-family checkpoint (weights kept 2-byte). Bad thread counts are named.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assertThrowsMessage, MODULE_URL, SINGLE_FILE_URL } from './support.mjs';
import { llamaGolden } from './checkpoint-support.mjs';

const api = await import(MODULE_URL.href);
const single = await api.loadAttentionLens();
const threaded = await api.loadAttentionLens({ threads: 2 });

// wide enough that a 24-token forward and a generation step split (vocab 512, d 512, MLP 2 048)
const WIDE = { vocab: 512, context: 64, dModel: 512, heads: 8, layers: 2, mlp: true, seed: 3 };

function ids(count, vocab, seed) {
  return Int32Array.from({ length: count }, (_, i) => (i * 7919 + seed * 104729) % vocab);
}

// Everything the model computes for these ids, as plain arrays.
function results(lens) {
  const model = lens.createModel(WIDE);
  const input = ids(48, WIDE.vocab, 1);
  const out = model.forward(input, { n: 24, batch: 2 });
  const next = model.nextTokens(5);
  const greedy = model.generate(input.subarray(0, 8), { maxTokens: 10 });
  const sampled = model.generate(input.subarray(0, 8), { maxTokens: 10, temperature: 0.8, topK: 40, seed: 9 });
  const { loss, gradients } = model.lossAndGradients(input, ids(48, WIDE.vocab, 2), { n: 24, batch: 2 });
  const trainer = lens.createTrainer(model, { task: 'copy', batch: 4, seed: 2 });
  const report = trainer.step(3, { evaluate: false });
  const trained = model.forward(input, { n: 24, batch: 2 }).logits;
  const result = {
    logits: Array.from(out.logits), attention: out.attention.map((a) => Array.from(a)), next,
    greedy: Array.from(greedy.ids), probabilities: greedy.steps.map((s) => s.probability),
    sampled: Array.from(sampled.ids), loss, gradients: Object.values(gradients).map((g) => Array.from(g)),
    trainedLoss: report.loss, trained: Array.from(trained),
  };
  trainer.dispose?.();
  model.dispose();
  return result;
}

test('loadAttentionLens({ threads: 2 }) in node: the threaded build, two threads', () => {
  assert.equal(single.threads, 1);
  assert.equal(threaded.threads, 2);
  assert.equal(threaded.simd, single.simd);
});

test('two threads compute what one thread does, bit for bit (model, generation, gradients, training)', () => {
  const one = results(single);
  const two = results(threaded);
  for (const key of Object.keys(one)) assert.deepEqual(two[key], one[key], key);
});

test('BF16 and F16 Llama-family checkpoints with two threads: the same logits, attention and generation', async () => {
  for (const name of ['llama-bf16', 'smollm2-f16']) {
  const golden = llamaGolden(name);
  const load = (lens) => lens.loadCheckpoint({ weights: golden.weights, config: golden.config });
  const [a, b] = [await load(single), await load(threaded)];
  const prompt = Int32Array.from(golden.expected.ids.data, Number);
  const outA = a.forward(prompt, { n: prompt.length });
  const outB = b.forward(prompt, { n: prompt.length });
  assert.deepEqual(Array.from(outB.logits), Array.from(outA.logits));
  assert.deepEqual(outB.attention.map((x) => Array.from(x)), outA.attention.map((x) => Array.from(x)));
  const genA = a.generate(prompt, { maxTokens: 6 });
  const genB = b.generate(prompt, { maxTokens: 6 });
  assert.deepEqual(Array.from(genB.ids), Array.from(genA.ids));
  a.dispose();
  b.dispose();
  }
});

// The attention layer's forward for these options, each head's output on the layer's pool.
function layerResults(lens, config, x, options) {
  const layer = lens.createLayer(config);
  const out = layer.forward(x, options);
  const result = { output: Array.from(out.output), attention: out.attention ? Array.from(out.attention) : null,
    steps: out.steps?.map((s) => [s.id, s.head, Array.from(s.data)]) ?? null };
  layer.dispose();
  return result;
}

test('the attention layer with two threads: every head computed as one thread does, bit for bit (flash and materialising, masks, ALiBi, grouped-query, cross, traced)', () => {
  const n = 96;
  const x = single.numpyRandn(7, n * 128).map((v) => v * 0.5);
  const kv = single.numpyRandn(8, 40 * 128);
  const cases = [
    [{ dModel: 128, heads: 8, seed: 1 }, { n, mask: 'causal', weights: false }],
    [{ dModel: 128, heads: 8, seed: 1 }, { n, mask: 'none' }],
    [{ dModel: 128, heads: 8, kvHeads: 2, positional: 'rope', seed: 2 }, { n, mask: 'sliding-window', window: 17, weights: false }],
    [{ dModel: 128, heads: 8, positional: 'alibi', seed: 3 }, { n, mask: 'causal' }],
    [{ dModel: 128, heads: 4, seed: 4 }, { n, kv: Float32Array.from(kv), kvN: 40, weights: false }],
    [{ dModel: 128, heads: 4, seed: 5 }, { n: 12, mask: 'causal', trace: true }],
  ];
  for (const [config, options] of cases) {
    const input = Float32Array.from(x.subarray(0, options.n * 128));
    const one = layerResults(single, config, input, options);
    const two = layerResults(threaded, config, input, options);
    assert.ok(one.output.some((v) => v !== 0), 'the layer computed something');
    assert.deepEqual(two, one, JSON.stringify({ config, mask: options.mask, weights: options.weights }));
  }
});

test('threads: an integer from 1 to 16 or "auto"; other values are named', async () => {
  for (const bad of [0, 17, 1.5, 'many', null, -1]) {
    await assert.rejects(api.loadAttentionLens({ threads: bad }), /threads must be/, String(bad));
  }
  const auto = await api.loadAttentionLens({ threads: 'auto' });
  assert.ok(auto.threads >= 1 && auto.threads <= 8, `auto gave ${auto.threads}`);
  // The single-file build has no threaded module beside it: one thread, the same API.
  const inlined = await (await import(SINGLE_FILE_URL.href)).loadAttentionLens({ threads: 2 });
  assert.equal(inlined.threads, 1);
  assertThrowsMessage(() => threaded.createModel({ ...WIDE, vocab: 1 }), /vocab/);
});
