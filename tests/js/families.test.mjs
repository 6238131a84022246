// The families of issue 31 through the public API in node (tests/data/families: GPT-NeoX/Pythia,
// Qwen3, Gemma 2, Gemma 3 with layer_types and with the older sliding_window_pattern, OLMo 2,
// Phi-3; F32 and the published dtype): logits and every layer's attention within 4× PyTorch
// float32's own error against the float64 run (scripts/data/make-family-golden.py, following
// transformers' eager code), the switches the core read as m.config reports them, and greedy
// generation (the KV cache) against repeated full forwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import { loadLens } from './support.mjs';
import { assertGoldenForward, assertRefusalsListed, familyGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const CASES = readdirSync(new URL('../data/families/', import.meta.url))
  .filter((f) => f.endsWith('.config.json')).map((f) => f.slice(0, -'.config.json'.length)).sort();
const idsOf = (expected) => Int32Array.from(expected.ids.data, Number);

// What each family's config.json switches on, as transformers' modelling files compute it.
const SWITCHES = {
  gpt_neox: { norm: 'layer-norm', mlpKind: 'gelu' },
  qwen3: { norm: 'rms-norm', mlpKind: 'swiglu' },
  gemma2: { norm: 'rms-norm-1+w', mlpKind: 'geglu' },
  gemma3_text: { norm: 'rms-norm-1+w', mlpKind: 'geglu' },
  olmo2: { norm: 'rms-norm', mlpKind: 'swiglu' },
  phi3: { norm: 'rms-norm', mlpKind: 'swiglu' },
};

test('the families\' golden cases are all here (the list below is not empty by accident)', () => {
  assert.deepEqual(new Set(CASES.map((name) => familyGolden(name).metadata.family)), new Set(Object.keys(SWITCHES)));
  assert.equal(CASES.length, 14);
});

for (const name of CASES) {
  test(`${name}: logits and every layer's attention as accurate as PyTorch's float32; the switches read`, async () => {
    const { weights, config, expected, metadata } = familyGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      assert.equal(m.family, metadata.family);
      assert.equal(m.config.layers, Number(metadata.layers));
      assert.equal(m.config.heads, Number(metadata.heads));
      assert.equal(m.config.kvHeads, Number(metadata.kv_heads));
      assert.equal(m.config.headDim, Number(metadata.head_dim));
      assert.equal(m.config.norm, SWITCHES[metadata.family].norm);
      assert.equal(m.config.mlpKind, SWITCHES[metadata.family].mlpKind);
      // Each layer's window as the reference used it ('none': a global layer).
      assert.deepEqual(m.config.layerWindows, metadata.windows.split(',').map((w) => (w === 'none' ? 0 : Number(w))));
      if (metadata.rotary_dim) assert.equal(m.config.rope.rotaryDims, Number(metadata.rotary_dim));
      else assert.equal(m.config.rope.rotaryDims, m.config.headDim);
      assertGoldenForward(m, expected, metadata, name);
    } finally {
      m.dispose();
    }
  });
}

test('each family\'s unimplemented switches are refused by name (refusals.json); the module keeps working', async () => {
  await assertRefusalsListed(lens, 'families');
  const { weights, config } = familyGolden('phi3-f32');
  const m = await lens.loadCheckpoint({ weights, config });
  assert.equal(m.family, 'phi3');
  m.dispose();
});

test('greedy generation with the KV cache picks what repeated full forwards pick, for each family', async () => {
  for (const name of ['pythia-f32', 'qwen3-f32', 'gemma2-f32', 'gemma3-f32', 'olmo2-f32', 'phi3-f32']) {
    const { weights, config, expected } = familyGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      const prompt = idsOf(expected).slice(0, 6);
      const g = m.generate(prompt, { maxTokens: 5, temperature: 0 });
      const sequence = [...prompt];
      for (const id of g.ids) {
        const out = m.forward(Int32Array.from(sequence), { n: sequence.length, logits: 'last' });
        const last = out.logits.subarray(out.logits.length - m.config.vocab);
        let best = 0;
        for (let v = 1; v < last.length; ++v) if (last[v] > last[best]) best = v;
        assert.equal(id, best, `${name}: token ${sequence.length - prompt.length}`);
        sequence.push(id);
      }
    } finally {
      m.dispose();
    }
  }
});
