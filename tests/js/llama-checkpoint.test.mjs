// Llama-family checkpoints (llama, qwen2, mistral) through the API: from files and from shards,
// the numbers of the PyTorch reference that follows transformers' eager code, the config the core
// read, and the refusals by name. (By Hub id: tests/js/hub.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { loadLens, splitSafetensors } from './support.mjs';
import { LLAMA_CASES, assertGoldenForward, assertRefusalsListed, llamaGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const idsOf = (expected) => Int32Array.from(expected.ids.data, Number);

test('every family matches PyTorch: logits and every layer\'s attention (query heads)', async () => {
  for (const name of LLAMA_CASES) {
    const { weights, config, expected, metadata } = llamaGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      assert.equal(m.family, metadata.family, name);
      assert.equal(m.config.kvHeads, Number(metadata.kv_heads), name);
      assert.equal(m.config.headDim, Number(metadata.head_dim), name);
      assert.equal(m.config.heads, Number(metadata.heads), name);
      assert.equal(m.config.norm, 'rms-norm');
      assert.equal(m.config.rope.pairing, 'rotate-half');
      assertGoldenForward(m, expected, metadata, name);
      assert.throws(() => m.tokenize('hi'), /this (Llama|Qwen2|Mistral) checkpoint needs its own tokenizer: pass loadCheckpoint its tokenizer.json/);
    } finally {
      m.dispose();
    }
  }
});

test('the config the core read: window, biases, tied, rope scaling', async () => {
  const load = async (name) => {
    const { weights, config } = llamaGolden(name);
    return lens.loadCheckpoint({ weights, config });
  };
  const mistral = await load('mistral-f32');
  assert.equal(mistral.config.window, 5);
  assert.equal(mistral.config.tied, false);
  mistral.dispose();
  const qwen2 = await load('qwen2-f32');
  assert.equal(qwen2.config.window, 0);
  assert.equal(qwen2.config.tied, true);
  assert.ok(qwen2.parameterNames.includes('layers.0.attn.in_proj_bias'));
  assert.ok(!qwen2.parameterNames.includes('layers.0.attn.out_proj.bias'));
  qwen2.dispose();
  const llama3 = await load('llama3-f32');
  assert.equal(llama3.config.rope.scaled, true);
  assert.equal(llama3.config.rope.base, 500000);
  assert.equal(llama3.config.headDim, 24);
  assert.deepEqual(llama3.parameterShapes['layers.0.attn.out_proj.weight'], [64, 96]);
  llama3.dispose();
});

test('shards given as an array load as the single file does, in any order of reads', async () => {
  const { weights, config, expected } = llamaGolden('mistral-f32');
  const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  const { files } = splitSafetensors(weights, (name) => (name.startsWith('model.layers.2.') || name === 'lm_head.weight' ? 1 : 0), names);
  const ids = idsOf(expected);
  const single = await lens.loadCheckpoint({ weights, config });
  const fractions = [];
  const sharded = await lens.loadCheckpoint({ weights: files, config, onProgress: (f) => fractions.push(f) });
  try {
    assert.deepEqual(sharded.forward(ids).logits, single.forward(ids).logits);
    assert.ok(fractions.length > 1 && fractions.at(-1) === 1, 'progress over both shards reaches 1');
    assert.ok(fractions.every((f, i) => i === 0 || f >= fractions[i - 1]), 'progress never goes back');
  } finally {
    single.dispose();
    sharded.dispose();
  }
  await assert.rejects(lens.loadCheckpoint({ weights: [files[0]], config }),
    /config.json says num_hidden_layers 3 but the checkpoint has 2 layers \(model.layers.0 … model.layers.1\)/);
  await assert.rejects(lens.loadCheckpoint({ weights: [], config }), /an empty array of shards/);
  await assert.rejects(lens.loadCheckpoint({ weights: [files[0], 'x'], config }), /needs weights\[1\]: model.safetensors/);
});

test('switches the core does not implement are refused by name; the module keeps working', async () => {
  await assertRefusalsListed(lens, 'llama');
  const { weights, config } = llamaGolden('llama-f32');
  const refused = async (change, pattern) => {
    await assert.rejects(lens.loadCheckpoint({ weights, config: { ...config, ...change } }), pattern);
  };
  await refused({ rope_scaling: { rope_type: 'yarn', factor: 4 } }, /rope_scaling has type 'yarn'; supported: none \(null or 'default'\) and 'llama3'/);
  await refused({ rope_scaling: { type: 'dynamic', factor: 2 } }, /rope_scaling has type 'dynamic'/);
  await refused({ hidden_act: 'gelu_pytorch_tanh' }, /hidden_act is 'gelu_pytorch_tanh'; supported: silu/);
  await refused({ model_type: 'gemma' }, /model_type 'gemma'; supported: gpt2, llama, qwen2, mistral/);
  await refused({ num_key_value_heads: 3 }, /heads must be a multiple of kv_heads/);
  await refused({ tie_word_embeddings: true }, /lm_head.weight differs from model.embed_tokens.weight/);
  await refused({ attention_bias: true }, /no tensor 'model.layers.0.self_attn.q_proj.bias'/);
  const qwen2 = llamaGolden('qwen2-f32');
  await assert.rejects(lens.loadCheckpoint({ weights: qwen2.weights, config: { ...qwen2.config, use_sliding_window: true } }),
    /use_sliding_window true/);
  const m = await lens.loadCheckpoint({ weights, config });
  assert.equal(m.forward([1, 2, 3]).logits.length, 3 * 96);
  m.dispose();
});

test('attentionLayer: a standalone layer (K/V heads, rotate-half RoPE, biases, window) reproduces every layer', async () => {
  for (const name of ['llama-bf16', 'llama3-f32', 'qwen2-f32', 'mistral-f32', 'smollm2-f16']) {
    const { weights, config, expected } = llamaGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const ids = idsOf(expected);
      const attention = m.forward(ids).attention;
      for (let l = 0; l < m.config.layers; ++l) {
        const found = m.attentionLayer(l, ids, { n: ids.length });
        const layer = lens.createLayer(found.config);
        try {
          layer.setWeights(found.weights);
          const r = layer.forward(found.input, { n: ids.length, ...found.mask });
          let worst = 0;
          for (let i = 0; i < r.attention.length; ++i) worst = Math.max(worst, Math.abs(r.attention[i] - attention[l][i]));
          assert.ok(worst < 2e-6, `${name} layer ${l}: ${worst}`);
          assert.equal(layer.config.kvHeads, m.config.kvHeads);
        } finally {
          layer.dispose();
        }
      }
      if (name === 'mistral-f32') assert.deepEqual(m.attentionLayer(0, ids, { n: ids.length }).mask, { mask: 'sliding-window', window: 5 });
      if (name === 'llama3-f32') assert.equal(m.attentionLayer(0, ids, { n: ids.length }).config.rope.frequencies.length, 12);
    } finally {
      m.dispose();
    }
  }
});
