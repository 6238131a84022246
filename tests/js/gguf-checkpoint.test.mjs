// GGUF files through lens.loadCheckpoint({ weights }): the tiny golden checkpoints as llama.cpp's
// converter writes them (tests/data/gguf, scripts/data/make-gguf-checkpoints.py) — no config, the
// family and sizes from the metadata — give the .safetensors model's numbers (F32 bit for bit, F16
// as the same F16 .safetensors, Q8_0 as its dequantized weights, bit for bit, while it keeps its
// blocks in memory), from bytes or a Blob, for llama, qwen2, qwen3, phi3, gptneox (Pythia),
// gemma2, gemma3 and gpt2; Llama 3's rope_freqs.weight as config.json's llama3 rope_scaling;
// quantized files of every kept type within 1.2× their tensors' bytes in the tab; refused
// files (tests/data/malformed-gguf) are refused with their messages and the module works after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { DATA_DIR, loadLens } from './support.mjs';
import { assertGoldenForward, familyGolden, gpt2Golden, llamaGolden } from './checkpoint-support.mjs';

const lens = await loadLens();

const gguf = (name) => new Uint8Array(readFileSync(`${DATA_DIR}gguf/${name}`));
// Gemma's files stand for the config llama.cpp's rules give (query_pre_attn_scalar = head_dim,
// Gemma 3's fixed pattern of six layers), written beside them: the golden's weights, not its numbers.
const ggufConfig = (name) => readFileSync(`${DATA_DIR}gguf/${name}`, 'utf8');
const CASES = [
  { name: 'llama', golden: () => llamaGolden('llama-f32'), family: 'llama' },
  { name: 'qwen2', golden: () => llamaGolden('qwen2-f32'), family: 'qwen2' },
  // rows of 48 (qwen3) and 112 values (phi3's ffn_down), no whole Q8_0 blocks: F32 and F16 only
  { name: 'qwen3', golden: () => familyGolden('qwen3-f32'), family: 'qwen3', q8: false },
  { name: 'phi3', golden: () => familyGolden('phi3-f32'), family: 'phi3', q8: false },
  { name: 'pythia', golden: () => familyGolden('pythia-f32'), family: 'gpt_neox' },
  { name: 'gemma2', golden: () => ({ ...familyGolden('gemma2-f32'), config: ggufConfig('gemma2.config.json'), ownNumbers: false }), family: 'gemma2', q8: false },
  // the golden's three layers twice (so that the sixth is global), F16 only
  { name: 'gemma3', golden: () => ({ ...familyGolden('gemma3-pattern-f32'), config: ggufConfig('gemma3.config.json'), ownNumbers: false }), family: 'gemma3_text', q8: false, f32: false },
  { name: 'gpt2', golden: () => gpt2Golden('tiny-f32'), family: 'gpt2' },
];

// Two models' logits and attention on the same ids, equal bit for bit.
function assertSameForward(a, b, ids, what) {
  const x = a.forward(ids, { n: ids.length });
  const y = b.forward(ids, { n: ids.length });
  assert.deepEqual(Array.from(x.logits), Array.from(y.logits), `${what}: logits`);
  assert.equal(x.attention.length, y.attention.length);
  x.attention.forEach((layer, l) => assert.deepEqual(Array.from(layer), Array.from(y.attention[l]), `${what}: attention ${l}`));
}

const idsOf = (expected) => Int32Array.from(expected.ids.data, Number);

test('an F32 GGUF file loads with no config and gives the .safetensors model\'s numbers', async () => {
  for (const { name, golden, family, f32 = true } of CASES) {
    if (!f32) continue;
    const { weights, config, expected, metadata, ownNumbers = true } = golden();
    const fromGguf = await lens.loadCheckpoint({ weights: gguf(`${name}-f32.gguf`) });
    const fromSafetensors = await lens.loadCheckpoint({ weights, config });
    try {
      assert.equal(fromGguf.family, family);
      assert.deepEqual(fromGguf.config, fromSafetensors.config, `${name}: the config read from the metadata`);
      assert.deepEqual(fromGguf.weights.formats, { F32: fromGguf.weights.formats.F32 });
      assertSameForward(fromGguf, fromSafetensors, idsOf(expected), name);
      if (ownNumbers) assertGoldenForward(fromGguf, expected, metadata ?? { layers: String(fromGguf.config.layers) }, name);
    } finally {
      fromGguf.dispose();
      fromSafetensors.dispose();
    }
  }
});

test('F16 and Q8_0 GGUF files: the model of the same F16 weights, and of the dequantized ones', async () => {
  for (const { name, golden, q8 = true } of CASES) {
    const { config, expected } = golden();
    const files = [[`${name}-f16.gguf`, `${name}-f16.safetensors`, 'F16'],
      [`${name}-q8_0.gguf`, `${name}-q8_0.dequantized.safetensors`, 'Q8_0']];
    for (const [file, twin, format] of q8 ? files : files.slice(0, 1)) {
      // a Blob: read by range, as a file picked in the page is
      const fromGguf = await lens.loadCheckpoint({ weights: new Blob([gguf(file)]) });
      const fromTwin = await lens.loadCheckpoint({ weights: gguf(twin), config });
      try {
        assert.ok(fromGguf.weights.formats[format] > 0, `${file}: ${JSON.stringify(fromGguf.weights)}`);
        assert.ok(fromGguf.weights.formats.F32 > 0, `${file}: norms stay F32`);
        assert.equal(fromGguf.weights.bytes <= gguf(file).length, true);
        // the parameters' memory: 2-byte matrices (F16) or the blocks (Q8_0), ≤ 1.2× the tensors'
        // bytes in the file; the F16 twin's (2-byte as well), or under 0.4 of the float32 twin's
        const { memory, bytes } = fromGguf.weights;
        const twinMemory = fromTwin.weights.memory;
        assert.ok(memory <= 1.2 * bytes, `${file}: ${memory} bytes in memory for ${bytes} in the file`);
        assert.ok(format === 'F16' ? memory === twinMemory : memory < 0.4 * twinMemory, `${file}: ${memory} vs ${twinMemory}`);
        assertSameForward(fromGguf, fromTwin, idsOf(expected), file);
      } finally {
        fromGguf.dispose();
        fromTwin.dispose();
      }
    }
  }
});

test('a Llama 3 GGUF file\'s rope_freqs.weight gives the llama3 rope_scaling of its config.json', async () => {
  // make-gguf-checkpoints.py writes llama3-f32's factors as llama.cpp's converter does, in float32
  const { weights, config, expected, metadata } = llamaGolden('llama3-f32');
  const fromGguf = await lens.loadCheckpoint({ weights: new Blob([gguf('llama3-f32.gguf')]) });
  const fromSafetensors = await lens.loadCheckpoint({ weights, config });
  try {
    assert.equal(fromGguf.family, 'llama');
    assert.deepEqual(fromGguf.config.rope, fromSafetensors.config.rope);
    assert.equal(fromGguf.config.rope.scaling, 'llama3');
    assert.equal(fromGguf.config.rope.scaled, true);
    // the frequencies agree to float32's rounding of the stored factors, not bit for bit: both
    // models are held to PyTorch's golden rule (within 4x its float32 error of the float64 run)
    assertGoldenForward(fromGguf, expected, metadata, 'llama3 GGUF');
    assertGoldenForward(fromSafetensors, expected, metadata, 'llama3 .safetensors');
  } finally {
    fromGguf.dispose();
    fromSafetensors.dispose();
  }
});

test('GGUF files of every quantized type keep their blocks: their formats, and memory within 1.2x', async () => {
  const files = {
    'kquants.gguf': { F32: 3, Q4_0: 1, Q4_K: 3, Q5_K: 2, Q6_K: 2, Q8_0: 1 },
    'quants32.gguf': { F32: 3, Q4_0: 2, Q4_1: 2, Q5_0: 2, Q5_1: 2, Q8_0: 1 },
  };
  for (const [file, formats] of Object.entries(files)) {
    const m = await lens.loadCheckpoint({ weights: new Blob([gguf(file)]) });
    try {
      assert.deepEqual({ ...m.weights.formats }, formats, file);
      assert.ok(m.weights.memory <= 1.2 * m.weights.bytes, `${file}: ${JSON.stringify(m.weights)}`);
      // float32 would take 4 bytes a value; the blocks take 0.56 (Q4_0) … 1.06 (Q8_0)
      const values = Object.values(m.parameterShapes).reduce((sum, shape) => sum + shape.reduce((a, b) => a * b, 1), 0);
      assert.ok(m.weights.memory < values * 1.5, `${file}: ${m.weights.memory} bytes for ${values} values`);
      const ids = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6]);
      const out = m.forward(ids, { n: ids.length });
      assert.ok(out.logits.every(Number.isFinite), `${file}: finite logits`);
      // a quantized weight reads back as its dequantized float values
      const q = m.parameters()['layers.0.attn.in_proj_weight'];
      assert.ok(q.length > 0 && q.every(Number.isFinite) && q.some((v) => v !== 0), file);
    } finally {
      m.dispose();
    }
  }
});

// A generation's steps from a model with kept blocks (the one-row kernel) and from a model of the
// same values in float32: the same greedy ids, each step's probability and attention within `tol`.
function assertSameSteps(kept, floats, ids, tol, what) {
  const a = kept.generate(ids, { maxTokens: 6, temperature: 0 });
  const b = floats.generate(ids, { maxTokens: 6, temperature: 0 });
  assert.deepEqual(Array.from(a.ids), Array.from(b.ids), `${what}: greedy ids`);
  a.steps.forEach((step, k) => {
    const other = b.steps[k];
    assert.ok(Math.abs(step.probability - other.probability) <= tol,
      `${what} step ${k}: probability ${step.probability} vs ${other.probability}`);
    step.attention.forEach((row, l) => row.forEach((w, i) => {
      assert.ok(Math.abs(w - other.attention[l][i]) <= tol, `${what} step ${k} layer ${l}: attention ${i} ${w} vs ${other.attention[l][i]}`);
    }));
  });
}

// The wasm kernels over kept blocks (the prompt kernel of a forward, the one-row kernel of a
// generation step) against the same model with every weight the reference's float32 value: a
// forward bit for bit; a generation's steps within float32 rounding — the one-row kernel scales
// each group's sum once (within float32's summation bound of the float64 product: the C++ kernel
// tests). The golden checkpoints' Q8_0 files (small weights) within 1e-5; kquants/quants32 (every
// kept type, random blocks of weights up to ±4, whose scores and logits are large enough that a
// float32 rounding moves a probability by ~3e-4) within 2e-3 — a wrong block, scale or offset moves
// them by tenths.
test('the wasm kernels over every kept quantized type give the numbers of the float32 dequantized weights', async () => {
  for (const { name, golden } of CASES.filter((c) => c.q8 !== false)) {
    const { expected } = golden();
    const kept = await lens.loadCheckpoint({ weights: gguf(`${name}-q8_0.gguf`) });
    const floats = await lens.loadCheckpoint({ weights: gguf(`${name}-q8_0.dequantized.safetensors`), config: golden().config });
    try {
      assertSameSteps(kept, floats, idsOf(expected), 1e-5, `${name}-q8_0`);
    } finally {
      kept.dispose();
      floats.dispose();
    }
  }
  for (const file of ['kquants.gguf', 'quants32.gguf']) {
    const kept = await lens.loadCheckpoint({ weights: gguf(file) });
    const floats = await lens.loadCheckpoint({ weights: gguf(file.replace('.gguf', '.dequantized.gguf')) });
    try {
      assert.deepEqual(Object.keys(floats.weights.formats), ['F32'], file);
      const ids = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]);
      assertSameForward(kept, floats, ids, file);
      assertSameSteps(kept, floats, ids, 2e-3, file);
    } finally {
      kept.dispose();
      floats.dispose();
    }
  }
});

test('a GGUF file with a config, or a .safetensors file without one, is refused by name', async () => {
  const { weights, config } = llamaGolden('llama-f32');
  await assert.rejects(lens.loadCheckpoint({ weights: gguf('llama-f32.gguf'), config }),
    /this is a GGUF file, whose metadata holds its config: give loadCheckpoint no config/);
  await assert.rejects(lens.loadCheckpoint({ weights }), /loadCheckpoint needs config \(config.json's text or the parsed object\)/);
});

test('GGUF files the core cannot read are refused, saying why, and the module works after', async () => {
  const dir = `${DATA_DIR}malformed-gguf/`;
  const expected = JSON.parse(readFileSync(`${dir}expected.json`, 'utf8'));
  assert.ok(Object.keys(expected).length >= 15);
  for (const [file, message] of Object.entries(expected)) {
    const started = performance.now();
    await assert.rejects(lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(`${dir}${file}`)) }),
      (error) => error.message.includes(message), `${file}: refused, saying "${message}"`);
    assert.ok(performance.now() - started < 1000, `${file}: refused in under a second`);
  }
  const m = await lens.loadCheckpoint({ weights: gguf('qwen2-f32.gguf') });
  assert.equal(m.config.layers, 2);
  m.dispose();
});
