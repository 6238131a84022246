// lens.loadCheckpoint with pytorch_model.bin files (tests/data/torch/models, torch.save of the model
// test checkpoints: shared storages, views with an offset, non-contiguous strides, a sharded pair
// with its pytorch_model.bin.index.json): every case equals its .safetensors twin's load bit for
// bit; a legacy-format file and a hostile pickle are refused by name, and the module keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { DATA_DIR, loadLens, readBytes } from './support.mjs';

const lens = await loadLens();
const MODELS = `${DATA_DIR}torch/models/`;
const CASES = JSON.parse(readFileSync(`${MODELS}cases.json`, 'utf8'));

async function rejects(promise, pattern) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof Error);
    assert.match(error.message, pattern);
    return true;
  });
}

/** forward's logits and every layer's attention of both models on the same ids, bit for bit. */
function assertSameModel(a, b) {
  assert.deepEqual(a.config, b.config);
  assert.equal(a.family, b.family);
  const ids = Int32Array.from({ length: 8 }, (_, i) => (i * 7 + 3) % a.config.vocab);
  const x = a.forward(ids);
  const y = b.forward(ids);
  assert.deepEqual(Buffer.from(x.logits.buffer, x.logits.byteOffset, x.logits.byteLength),
    Buffer.from(y.logits.buffer, y.logits.byteOffset, y.logits.byteLength), 'logits bit for bit');
  x.attention.forEach((layer, l) => assert.deepEqual(Array.from(layer), Array.from(y.attention[l]), `attention ${l}`));
}

const ofCase = (c) => ({
  bins: c.bin.map((file) => readBytes(`${MODELS}${file}`)),
  twin: readBytes(`${DATA_DIR}${c.safetensors}`),
  config: readFileSync(`${DATA_DIR}${c.config}`, 'utf8'),
});

test('every pytorch_model.bin case (Uint8Array, ArrayBuffer, Blob; shards as an array) loads equal to its .safetensors twin', async () => {
  assert.ok(CASES.length >= 5);
  for (const c of CASES) {
    const { bins, twin, config } = ofCase(c);
    const expected = await lens.loadCheckpoint({ weights: twin, config });
    try {
      const forms = [
        bins.length === 1 ? bins[0] : bins,
        bins.length === 1 ? new Blob([bins[0]]) : bins.map((b) => new Blob([b])),
        bins.length === 1 ? bins[0].slice().buffer : bins.map((b) => b.slice().buffer),
      ];
      for (const weights of forms) {
        const fractions = [];
        const model = await lens.loadCheckpoint({ weights, config, onProgress: (f) => fractions.push(f) });
        try {
          assertSameModel(model, expected);
          assert.equal(fractions.at(-1), 1, c.name);
        } finally {
          model.dispose();
        }
      }
    } finally {
      expected.dispose();
    }
  }
});

test('the sharded case follows its pytorch_model.bin.index.json', async () => {
  const c = CASES.find((each) => each.name === 'llama-f32-sharded');
  const index = JSON.parse(readFileSync(`${MODELS}llama-f32-sharded.bin.index.json`, 'utf8'));
  const shards = [...new Set(Object.values(index.weight_map))];
  assert.deepEqual(shards, c.bin);
  const { bins, config } = ofCase(c);
  // one shard alone lacks layer 1: the core names what is missing
  await rejects(lens.loadCheckpoint({ weights: [bins[0]], config }), /config.json says num_hidden_layers 2 but the checkpoint has 1 layers \(model\.layers\.0 … model\.layers\.0\)/);
});

test('a legacy-format file and hostile pickles are refused by name; the module keeps working', async () => {
  const c = CASES.find((each) => each.name === 'gpt2-tiny-f16');
  const { bins, twin, config } = ofCase(c);
  const hostile = (name) => readBytes(`${DATA_DIR}malformed-torch/${name}`);
  await rejects(lens.loadCheckpoint({ weights: hostile('legacy-format.bin'), config }),
    /^PyTorch checkpoint: the file is in the legacy PyTorch format \(torch\.save before torch 1\.6/);
  await rejects(lens.loadCheckpoint({ weights: hostile('global-os-system.bin'), config }),
    /the pickle names os\.system, which a weights-only load refuses/);
  await rejects(lens.loadCheckpoint({ weights: hostile('global-builtins-eval.bin'), config }),
    /the pickle names builtins\.eval, which a weights-only load refuses/);
  await rejects(lens.loadCheckpoint({ weights: hostile('zip-entry-deflated.bin'), config }), /entry 'archive\/data\/0' is compressed \(method 8, deflate\)/);
  // a .bin cut short: its end records are gone
  await rejects(lens.loadCheckpoint({ weights: bins[0].subarray(0, bins[0].length - 100), config }), /PyTorch|zip|end/i);
  const model = await lens.loadCheckpoint({ weights: bins[0], config });
  const expected = await lens.loadCheckpoint({ weights: twin, config });
  try {
    assertSameModel(model, expected);
  } finally {
    model.dispose();
    expected.dispose();
  }
});
