// lens.loadCheckpoint: Hugging Face GPT-2 checkpoints (tests/data/gpt2, PyTorch golden data from
// scripts/data/make-gpt2-golden.py) as Uint8Array and Blob, progress, the returned model, every refused
// file's message (the module keeps working, nothing leaks), and the wasm memory a ~55 MB load
// takes against the file's size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

import { MODULE_URL, literal, loadLens, writeSafetensors } from './support.mjs';
import {
  assertAsAccurate, gpt2Config, gpt2Golden, gpt2SizedCheckpoint, gpt2Tensors, gpt2Tokenizer,
} from './checkpoint-support.mjs';

const lens = await loadLens();
const GOLDEN = ['tiny-f32', 'tiny-f16', 'bare-f32', 'bare-bf16'];

async function rejects(promise, pattern) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof Error);
    assert.match(error.message, pattern);
    return true;
  });
}

test('GPT-2 checkpoints match PyTorch to float32 precision (Uint8Array and Blob)', async () => {
  for (const [i, name] of GOLDEN.entries()) {
    const { weights, config, expected, layers } = gpt2Golden(name);
    const gpt = await lens.loadCheckpoint({ weights: i % 2 ? new Blob([weights]) : weights, config });
    try {
      assert.deepEqual(
        { layers: gpt.config.layers, heads: gpt.config.heads, dModel: gpt.config.dModel, vocab: gpt.config.vocab, context: gpt.config.context },
        { layers: config.n_layer, heads: config.n_head, dModel: config.n_embd, vocab: config.vocab_size, context: config.n_positions });
      assert.equal(gpt.config.gelu, 'tanh');
      const ids = Int32Array.from(expected.ids.data);
      const out = gpt.forward(ids, { n: ids.length, batch: 1 });
      assertAsAccurate(out.logits, expected.logits32.data, expected.logits64.data, `${name} logits`);
      assert.equal(out.attention.length, layers);
      for (let l = 0; l < layers; ++l) {
        assertAsAccurate(out.attention[l], expected[`attn32.${l}`].data, expected[`attn64.${l}`].data,
          `${name} attention of layer ${l}`);
      }
      // The model is a createModel-like model: traces and head scores come for free.
      const traced = gpt.forward(ids.subarray(0, 4), { n: 4, trace: true });
      assert.equal(traced.steps.length, layers);
      assert.equal(gpt.headScores().length, layers * config.n_head);
    } finally {
      gpt.dispose();
    }
  }
});

test('a Blob is read in chunks with progress up to 1', async () => {
  const { weights, config } = gpt2Golden('bare-f32');
  const fractions = [];
  const phases = [];
  const gpt = await lens.loadCheckpoint({ weights: new Blob([weights]), config, onProgress: (f, now) => {
    fractions.push(f);
    phases.push(now);
  } });
  gpt.dispose();
  assert.ok(fractions.length >= 3 * 12);
  // Files: reading them is preparing the weights, the phase's fraction the first argument.
  assert.deepEqual(phases, fractions.map((f) => ({ phase: 'prepare', fraction: f })));
  for (let i = 1; i < fractions.length; ++i) assert.ok(fractions[i] > fractions[i - 1]);
  assert.equal(fractions.at(-1), 1);
});

test('a GPT-2-sized vocabulary gets GPT-2\'s tokenizer, loaded beside the module', async () => {
  const gpt = await lens.loadCheckpoint(gpt2SizedCheckpoint());
  try {
    const { ids } = gpt.tokenize('Hello world');
    assert.deepEqual(Array.from(ids), [15496, 995]);
    const out = gpt.forward(ids, { n: 2 });
    assert.equal(out.logits.length, 2 * 50257);
    assert.ok(out.logits.every(Number.isFinite));
  } finally {
    gpt.dispose();
  }
  // The same tokenizer given explicitly, as { vocab, merges } and as tokenizer.json.
  const { vocab, merges } = gpt2Tokenizer();
  const mergeLines = merges.split('\n').filter((line) => line && !line.startsWith('#'));
  for (const tokenizer of [{ vocab, merges }, { model: { type: 'BPE', vocab, merges: mergeLines } }]) {
    const gpt2 = await lens.loadCheckpoint({ ...gpt2SizedCheckpoint(), tokenizer });
    assert.deepEqual(Array.from(gpt2.tokenize(" it's 2024!").ids), [340, 338, 48609, 0]);
    gpt2.dispose();
  }
});

test('refused checkpoints name what was found and what is supported; the module keeps working', async () => {
  const { weights, config } = gpt2Golden('tiny-f32');
  const warm = await lens.loadCheckpoint({ weights, config });
  warm.dispose();
  const before = lens.memory().allocatedBytes;

  const renamed = (from, to) => {
    const tensors = gpt2Tensors({ layers: 2, d: 32, vocab: 64, context: 32 });
    tensors[to] = tensors[from];
    delete tensors[from];
    return writeSafetensors(tensors);
  };
  const tiny = gpt2Config({ layers: 2, d: 32, vocab: 64, context: 32 });
  await rejects(lens.loadCheckpoint({ weights: renamed('wte.weight', 'bert.embeddings.word_embeddings.weight'), config: tiny }),
    /this looks like a BERT checkpoint .*supported: the GPT-2 family/);
  await rejects(lens.loadCheckpoint({ weights: renamed('h.0.attn.c_attn.weight', 'model.layers.0.self_attn.q_proj.weight'), config: tiny }),
    /this looks like a Llama checkpoint/);
  await rejects(lens.loadCheckpoint({ weights, config: { ...config, n_embd: 64 } }),
    /tensor 'transformer.wte.weight' has shape \[64, 32\], config.json \(n_embd 64, vocab_size 64, n_positions 32\) needs \[64, 64\]/);
  // A GPT-2 config.json relabelled 'llama': the Llama family's keys are read, and named when absent.
  await rejects(lens.loadCheckpoint({ weights, config: { ...config, model_type: 'llama' } }),
    /config.json has no hidden_size; a Llama config.json has hidden_size, num_hidden_layers/);
  await rejects(lens.loadCheckpoint({ weights, config: { ...config, model_type: 'bert' } }),
    /config.json has model_type 'bert'; supported: gpt2, llama, qwen2, mistral/);
  await rejects(lens.loadCheckpoint({ weights, config: { ...config, n_layer: undefined } }),
    /config.json has no n_layer/);
  await rejects(lens.loadCheckpoint({ weights: new Blob([weights.subarray(0, weights.length - 1000)]), config }),
    /past the end of the data buffer/);
  await rejects(lens.loadCheckpoint({ weights: weights.subarray(0, 6), config }),
    /too short for the 8-byte header length/);
  const { vocab, merges } = gpt2Tokenizer();
  await rejects(lens.loadCheckpoint({ weights, config, tokenizer: { vocab, merges } }),
    /the tokenizer has 50257 tokens but the model's vocabulary has 64/);
  await rejects(lens.loadCheckpoint({ weights, config, tokenizer: { vocab: { a: 0, b: 2 }, merges: '' } }),
    /the tokenizer's vocab has no token with id 1/);
  await rejects(lens.loadCheckpoint({ weights: 'model.safetensors', config }),
    /loadCheckpoint needs weights: model.safetensors, pytorch_model.bin \(or an array of its shards\) or a .gguf file as a Uint8Array, ArrayBuffer or Blob, got/);
  await rejects(lens.loadCheckpoint({ weights, config, extra: 1 }), /unknown loadCheckpoint options key 'extra'/);
  assert.equal(lens.memory().allocatedBytes, before, 'a refused load frees what it allocated');

  const gpt = await lens.loadCheckpoint({ weights, config });
  assert.throws(() => gpt.tokenize('hi'), /this checkpoint has 64 token ids, fewer than GPT-2's tokenizer's 50257: pass loadCheckpoint a tokenizer/);
  assert.equal(gpt.forward(Int32Array.of(1, 2, 3), { n: 3 }).logits.length, 3 * 64);
  gpt.dispose();
});

test('a ~55 MB checkpoint loads in less than 1.5x its size of wasm memory', async () => {
  // A fresh module instance, so its heap starts small.
  const fresh = await (await import(`${MODULE_URL.href}?memory`)).loadAttentionLens();
  const sizes = { layers: 1, heads: 4, d: 256, vocab: 50257, context: 64 };
  const file = writeSafetensors(gpt2Tensors(sizes));
  const blob = new Blob([file]);
  const heapBefore = fresh.memory().heapBytes;
  const gpt = await fresh.loadCheckpoint({ weights: blob, config: gpt2Config(sizes) });
  const heapAfter = fresh.memory().heapBytes;
  const ratio = (heapAfter - heapBefore) / file.length;
  console.log(`# checkpoint ${(file.length / 1e6).toFixed(1)} MB: wasm heap ${(heapBefore / 1e6).toFixed(1)} -> ` +
    `${(heapAfter / 1e6).toFixed(1)} MB (growth ${ratio.toFixed(2)}x the file, GPT-2 tokenizer included)`);
  assert.ok(ratio < 1.5, `heap grew ${ratio.toFixed(2)}x the file size`);
  assert.equal(gpt.forward(gpt.tokenize('memory').ids, { n: 1 }).logits.length, 50257);
  gpt.dispose();
});

test('the malformed GPT-2 corpus gives its expected messages through loadCheckpoint', async () => {
  const dir = new URL('../data/malformed-gpt2/', import.meta.url);
  const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
  const config = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));
  const files = readdirSync(dir).filter((f) => f.endsWith('.safetensors')).sort();
  assert.deepEqual(files, Object.keys(expected).sort(), 'the folder and expected.json list the same files');
  const seed = new Uint8Array(readFileSync(new URL('../fuzz/seeds-gpt2/valid-f16-prefix-lmhead-buffers.safetensors', import.meta.url)));
  let before;
  for (const pass of [1, 2]) { // the second pass allocates nothing the first (static tables) did not
    if (pass === 2) before = lens.memory().allocatedBytes;
    for (const [name, message] of Object.entries(expected)) {
      const bytes = new Uint8Array(readFileSync(new URL(name, dir)));
      await rejects(lens.loadCheckpoint({ weights: new Blob([bytes]), config }), literal(message));
    }
  }
  assert.equal(lens.memory().allocatedBytes, before, 'refused loads free what they allocated');
  const gpt = await lens.loadCheckpoint({ weights: seed, config });
  assert.ok(gpt.forward([1, 2, 3]).logits.every(Number.isFinite));
  gpt.dispose();
});
