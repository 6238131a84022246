// The bench's GGUF writer (scripts/lib/gguf-writer.mjs) on small Llama shapes: each format's file is
// read by lens.loadCheckpoint (config, tokenizer and tensor formats from its metadata); every quantized
// tensor's blocks, dequantized by an independent reference (make-gguf-golden.py's numpy dequantizer,
// exact in float64, for F16/Q8_0/Q4_0/Q4_K/Q6_K; ggml's dequantize_row_q5_0 written out below for
// Q5_0, which that script does not read), equal the JS quantizer's own reconstruction bit for bit;
// the Q4_K_M mix follows llama.cpp's rules at SmolLM2's shapes; the vocabulary decodes to ASCII.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadLens } from './support.mjs';
import {
  FORMATS, GGML_TYPES, NormalStream, SHAPES, SPECIAL_TOKENS, f16Bits, f16Value, modelTensors, normalValues, promptText,
  ensureModelFile, quantize, tensorBytes, vocabulary, writeModel,
} from '../../scripts/lib/gguf-writer.mjs';

const lens = await loadLens();
const GOLDEN_SCRIPT = fileURLToPath(new URL('../../scripts/data/make-gguf-golden.py', import.meta.url));

// Two small Llama shapes: rows of 256 (every K-quant legal) and rows of 96 (Q4_K → Q5_0 and
// Q6_K → Q8_0 fallbacks, as SmolLM2's 576 and 960; ffn_down's 256-wide rows stay K-quants).
const TINY = {
  k256: { name: 'tiny-256', hidden: 256, layers: 4, heads: 4, kvHeads: 2, ff: 512, vocab: 1024,
    ropeTheta: 10000, eps: 1e-5, context: 256 },
  w96: { name: 'tiny-96', hidden: 96, layers: 4, heads: 3, kvHeads: 1, ff: 256, vocab: 1024,
    ropeTheta: 10000, eps: 1e-5, context: 256 },
};

/**
 * Dequantizes each tensor [{ type, offset, count }] of `file` with make-gguf-golden.py's numpy
 * reference (its float64 values rounded once to float32): a Float32Array per tensor.
 */
function numpyDequantize(file, tensors, dir) {
  const code = `
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("golden", sys.argv[1])
golden = importlib.util.module_from_spec(spec); spec.loader.exec_module(golden)
jobs = json.loads(open(sys.argv[3]).read())
data = open(sys.argv[2], "rb").read()
sizes = {"F16": (1, 2), "Q8_0": (32, 34), "Q4_0": (32, 18), "Q4_K": (256, 144), "Q6_K": (256, 210)}
out = []
for job in jobs:
    block, nbytes = sizes[job["type"]]
    raw = data[job["offset"]:job["offset"] + job["count"] // block * nbytes]
    if job["type"] == "F16":
        values = np.frombuffer(raw, "<f2").astype(np.float64)
    else:
        values = golden.dequantize(job["type"], raw)
    out.append(values.astype("<f4").tobytes())
open(sys.argv[4], "wb").write(b"".join(out))
`;
  const jobsFile = join(dir, 'jobs.json');
  const outFile = join(dir, 'values.f32');
  writeFileSync(jobsFile, JSON.stringify(tensors.map(({ type, offset, count }) => ({ type, offset, count }))));
  const run = spawnSync('/usr/bin/python3', ['-c', code, GOLDEN_SCRIPT, file, jobsFile, outFile], { encoding: 'utf8' });
  assert.equal(run.status, 0, `python3: ${run.stderr}`);
  const all = new Float32Array(new Uint8Array(readFileSync(outFile)).buffer);
  let at = 0;
  return tensors.map(({ count }) => all.slice(at, (at += count)));
}

/** ggml's dequantize_row_q5_0: d (f16), qh (u32), qs[16]; value j + 16 · h = ((nibble | fifth bit · 16) − 16) · d. */
function dequantizeQ5_0(bytes, count) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(count);
  for (let b = 0; b < count / 32; ++b) {
    const at = 22 * b;
    const d = f16Value(view.getUint16(at, true));
    const qh = view.getUint32(at + 2, true);
    for (let j = 0; j < 16; ++j) {
      const byte = view.getUint8(at + 6 + j);
      const x0 = ((byte & 0x0f) | (((qh >>> j) << 4) & 0x10)) - 16;
      const x1 = ((byte >> 4) | ((qh >>> (j + 12)) & 0x10)) - 16;
      out[32 * b + j] = Math.fround(x0 * d);
      out[32 * b + j + 16] = Math.fround(x1 * d);
    }
  }
  return out;
}

/** Index of the first value whose float32 bits differ (NaN-safe), or -1. */
function firstBitDifference(a, b) {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  if (x.length !== y.length) return 0;
  for (let i = 0; i < x.length; ++i) if (x[i] !== y[i]) return i;
  return -1;
}

const counts = (tensors) => {
  const out = {};
  for (const t of tensors) out[t.type] = (out[t.type] ?? 0) + 1;
  return out;
};

test('each format of each small shape: read by loadCheckpoint, and every tensor dequantizes to the quantizer\'s reconstruction bit for bit', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-writer-'));
  try {
    for (const [key, shape] of Object.entries(TINY)) {
      for (const format of FORMATS) {
        const file = join(dir, `${key}-${format}.gguf`);
        const written = [];
        const result = writeModel(file, shape, format, {
          onTensor: (t, q) => written.push({ type: t.type, name: t.name, values: q.values, count: q.values.length }),
        });
        result.tensors.forEach((t, i) => { written[i].offset = t.offset; });
        const bytes = new Uint8Array(readFileSync(file));
        assert.equal(bytes.length, result.fileBytes, `${key} ${format}: file size`);

        // the independent dequantization of the file's bytes
        const byNumpy = written.filter((t) => t.type !== 'F32' && t.type !== 'Q5_0');
        const numpyValues = byNumpy.length ? numpyDequantize(file, byNumpy, dir) : [];
        byNumpy.forEach((t, i) => {
          const at = firstBitDifference(numpyValues[i], t.values);
          assert.equal(at, -1, `${key} ${format} ${t.name} (${t.type}): value ${at} is ${numpyValues[i][at]} by numpy, ${t.values[at]} by the quantizer`);
        });
        for (const t of written.filter((w) => w.type === 'Q5_0')) {
          const raw = bytes.subarray(t.offset, t.offset + (t.count / 32) * 22);
          const at = firstBitDifference(dequantizeQ5_0(raw, t.count), t.values);
          assert.equal(at, -1, `${key} ${format} ${t.name} (Q5_0): value ${at}`);
        }
        for (const t of written.filter((w) => w.type === 'F32')) {
          const stored = new Float32Array(bytes.slice(t.offset, t.offset + 4 * t.count).buffer);
          assert.equal(firstBitDifference(stored, t.values), -1, `${key} ${format} ${t.name}: F32 as written`);
        }

        // the module reads the file (a type it does not read yet must be refused by name)
        let model;
        try {
          model = await lens.loadCheckpoint({ weights: bytes });
        } catch (error) {
          const unread = Object.keys(counts(result.tensors)).filter((type) => type === 'Q5_0');
          assert.ok(unread.length && unread.some((type) => String(error.message).includes(type)),
            `${key} ${format}: refused: ${error.message}`);
          continue;
        }
        try {
          assert.equal(model.family, 'llama');
          assert.deepEqual(
            [model.config.layers, model.config.heads, model.config.kvHeads, model.config.dModel, model.config.vocab],
            [shape.layers, shape.heads, shape.kvHeads, shape.hidden, shape.vocab], `${key} ${format}: config`);
          assert.deepEqual(model.weights.formats, counts(result.tensors), `${key} ${format}: formats`);
          const prompt = promptText(vocabulary(shape.vocab), 16);
          assert.deepEqual(Array.from(model.tokenize(prompt.text).ids), prompt.ids, `${key} ${format}: the prompt's ids`);
        } finally {
          model.dispose();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Writes the k256 shape in each format into a temporary folder, loads it and runs
// check(model, format, before) (before: lens.memory().allocatedBytes just before the load), then
// disposes of the model.
async function eachTinyModel(formats, check) {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-tiny-'));
  try {
    for (const format of formats) {
      const file = join(dir, `${format}.gguf`);
      writeModel(file, TINY.k256, format);
      const before = lens.memory().allocatedBytes;
      const model = await lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(file)) });
      try {
        check(model, format, before);
      } finally {
        model.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// After loading and after a forward and a generation, a GGUF model's wasm memory grows by its
// weights' bytes (within 1.2x) and the activations' (about 1 MB at this size), not by a second
// copy of the weights packed for the kernels: every format is read where it is (F32 and F16
// matrices kept as one-value blocks; before, the first forward packed them once more, F16 as
// float: 2x and 3x the file).
test('a GGUF model holds about its file after a forward and a generation, whatever its format', async () => {
  await eachTinyModel([...FORMATS, 'BF16'], (model, format, before) => {
    const ids = Int32Array.from({ length: 16 }, (_, i) => i + 5);
    model.forward(ids, { n: ids.length });
    model.generate(ids, { maxTokens: 4, temperature: 0 });
    const grown = lens.memory().allocatedBytes - before;
    assert.ok(grown <= 1.2 * model.weights.bytes + 1.5e6,
      `${format}: ${grown} bytes for ${model.weights.bytes} bytes of weights`);
  });
});

// The float formats' matrices, kept as one-value blocks, give a generation step (the one-row
// kernel, over the KV cache) the numbers of a forward of the sequence so far (the prompt kernel):
// the same greedy id and the same float64 probability, bit for bit, at every step.
test('a GGUF model of F32, F16 or BF16 weights: each generated token as a forward of the sequence so far gives it', async () => {
  await eachTinyModel(['F32', 'F16', 'BF16'], (model, format) => {
    assert.deepEqual(Object.keys(model.weights.formats).sort(), [...new Set(['F32', format])].sort(), format);
    const sequence = Array.from({ length: 12 }, (_, i) => (i * 37 + 5) % TINY.k256.vocab);
    const generated = model.generate(Int32Array.from(sequence), { maxTokens: 4, temperature: 0 });
    generated.steps.forEach((step, k) => {
      model.forward(Int32Array.from(sequence), { n: sequence.length });
      const [top] = model.nextTokens(1);
      assert.equal(step.id, top.id, `${format}: token ${k}`);
      assert.equal(step.probability, top.probability, `${format}: probability of token ${k}`);
      sequence.push(step.id);
    });
  });
});

test('the quantizers on blocks worth a case each: zeros, one value, both signs, tiny and huge scales', () => {
  const blocks = [new Float32Array(256), new Float32Array(256).fill(0.5), new Float32Array(256).fill(-3)];
  const spike = new Float32Array(256);
  spike[7] = -1e-3;
  spike[200] = 2e-4;
  const ramp = Float32Array.from({ length: 256 }, (_, i) => (i - 128) * 1e-6);
  const wide = Float32Array.from({ length: 256 }, (_, i) => (i % 2 ? 1 : -1) * (i + 1) * 100);
  blocks.push(spike, ramp, wide);
  const dir = mkdtempSync(join(tmpdir(), 'gguf-quant-'));
  try {
    for (const type of ['F16', 'Q8_0', 'Q4_0', 'Q5_0', 'Q4_K', 'Q6_K']) {
      blocks.forEach((values, b) => {
        const q = quantize(type, values);
        assert.equal(q.bytes.length, (256 / GGML_TYPES[type].block) * GGML_TYPES[type].bytes);
        let expected;
        if (type === 'Q5_0') expected = dequantizeQ5_0(q.bytes, 256);
        else {
          const file = join(dir, 'block.bin');
          writeFileSync(file, q.bytes);
          [expected] = numpyDequantize(file, [{ type, offset: 0, count: 256 }], dir);
        }
        assert.equal(firstBitDifference(expected, q.values), -1, `${type} block ${b}`);
        // a reconstruction close to the values: within two of the format's steps of the block's largest
        // |x|, plus what float16 scales lose below 2^-14 (a subnormal d rounds to a multiple of 2^-24, so
        // up to 2^-25 off, times a quant of up to 15 · 63 for Q4_K)
        const max = values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
        const step = { F16: 2 ** -10, Q8_0: 1 / 127, Q4_0: 1 / 8, Q5_0: 1 / 16, Q4_K: 1 / 15, Q6_K: 1 / 32 }[type];
        for (let i = 0; i < 256; ++i) {
          assert.ok(Math.abs(q.values[i] - values[i]) <= 2 * step * max + 15 * 63 * 2 ** -25, `${type} block ${b} value ${i}: ${q.values[i]} for ${values[i]}`);
        }
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('float16 rounding: to nearest even, subnormals, overflow to inf', () => {
  assert.equal(f16Bits(1), 0x3c00);
  assert.equal(f16Bits(-2), 0xc000);
  assert.equal(f16Bits(65504), 0x7bff);
  assert.equal(f16Bits(65520), 0x7c00);            // halfway to 2^16 rounds to even: inf
  assert.equal(f16Bits(1 + 2 ** -11), 0x3c00);     // a tie, to even
  assert.equal(f16Bits(1 + 3 * 2 ** -11), 0x3c02); // a tie, to even (up)
  assert.equal(f16Bits(2 ** -24), 0x0001);
  assert.equal(f16Bits(2 ** -25), 0x0000);          // a tie with zero: to even
  assert.equal(f16Bits(1.5 * 2 ** -25), 0x0001);
  assert.equal(f16Bits(-0), 0x8000);
  assert.equal(f16Bits(NaN) & 0x7e00, 0x7e00);
  for (let h = 0; h < 0x7c00; h += 7) assert.equal(f16Bits(f16Value(h)), h, `bits ${h}`);
});

test('the Q4_K_M mix at SmolLM2\'s shapes is llama.cpp\'s: Q5_0 and Q8_0 where 576 and 960 are not whole 256-blocks', () => {
  for (const [key, layers] of [['135m', 30], ['360m', 32]]) {
    const types = Object.fromEntries(modelTensors(SHAPES[key], 'Q4_K_M').map((t) => [t.name, t.type]));
    // the tied embedding is quantized as output.weight: Q6_K, or Q8_0 when its rows are not 256-blocks
    assert.equal(types['token_embd.weight'], 'Q8_0');
    // use_more_bits(i, n): i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2
    const more = (i) => i < Math.floor(layers / 8) || i >= Math.floor((7 * layers) / 8) || (i - Math.floor(layers / 8)) % 3 === 2;
    for (let i = 0; i < layers; ++i) {
      for (const name of ['attn_q', 'attn_k', 'attn_output', 'ffn_gate', 'ffn_up']) assert.equal(types[`blk.${i}.${name}.weight`], 'Q5_0');
      assert.equal(types[`blk.${i}.attn_v.weight`], more(i) ? 'Q8_0' : 'Q5_0', `layer ${i} attn_v`);
      assert.equal(types[`blk.${i}.ffn_down.weight`], more(i) ? 'Q6_K' : 'Q4_K', `layer ${i} ffn_down`);
      assert.equal(types[`blk.${i}.attn_norm.weight`], 'F32');
    }
    // layer 3 of 30 is not a use_more_bits layer, layer 5 is ((5 - 3) % 3 == 2)
    if (key === '135m') assert.deepEqual([types['blk.3.attn_v.weight'], types['blk.5.attn_v.weight']], ['Q5_0', 'Q8_0']);
  }
  // Q4_0 and Q8_0 files: the tied embedding as output.weight (Q6_K → Q8_0 here), the rest the file's type
  const q4 = modelTensors(SHAPES['135m'], 'Q4_0');
  assert.equal(q4[0].type, 'Q8_0');
  assert.ok(q4.slice(1).every((t) => t.type === (t.norm ? 'F32' : 'Q4_0')));
  assert.ok(modelTensors(SHAPES['135m'], 'Q8_0').every((t) => t.type === (t.norm ? 'F32' : 'Q8_0')));
  assert.equal(modelTensors(TINY.k256, 'Q4_0')[0].type, 'Q6_K');
});

test('the vocabulary: the size asked (SmolLM2\'s 49 152 and Qwen2.5\'s 151 936), unique tokens, each ASCII once decoded, merges of tokens made earlier into tokens', () => {
  for (const size of [49152, 151936]) checkVocabulary(size);
  assert.throws(() => vocabulary(600000), /at most \d+ tokens/);
});

function checkVocabulary(size) {
  const vocab = vocabulary(size);
  assert.equal(vocab.tokens.length, size);
  assert.equal(new Set(vocab.tokens).size, size);
  assert.deepEqual(vocab.tokens.slice(0, 3), SPECIAL_TOKENS);
  assert.deepEqual(vocab.types.slice(0, 4), [3, 3, 3, 1]);
  // GPT-2's byte-level alphabet: 'Ġ' U+0120 is byte 0x20, 'Ċ' U+010A 0x0A, 'ĉ' U+0109 0x09
  const byteOf = (ch) => ({ '\u0120': 0x20, '\u010a': 0x0a, '\u0109': 0x09 }[ch] ?? ch.charCodeAt(0));
  for (const token of vocab.tokens.slice(3)) {
    for (const ch of token) assert.ok(byteOf(ch) < 0x80, `token ${JSON.stringify(token)} decodes to a non-ASCII byte`);
  }
  assert.equal(vocab.merges.length, size - 3 - 97);
  const index = new Map(vocab.tokens.map((t, i) => [t, i]));
  vocab.merges.forEach((merge, i) => {
    const [left, right] = merge.split(' ');
    assert.ok(index.get(left) < 100 + i && index.get(right) < 100 + i, `merge ${i} '${merge}' of tokens not made yet`);
    assert.equal(vocab.tokens[100 + i], left + right);
  });
  const prompt = promptText(vocab, 64);
  assert.equal(prompt.ids.length, 64);
  assert.equal(prompt.text.split(' ').length, 65);
}

test('a 151 936-token vocabulary (the 1.5b shape\'s) in a small file: read by loadCheckpoint, the prompt one token a word', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-vocab-'));
  try {
    const shape = { ...SHAPES['1.5b'], name: 'tiny-wide-vocab', hidden: 32, layers: 1, heads: 2, kvHeads: 1, ff: 64, context: 64 };
    const file = join(dir, 'vocab.gguf');
    writeModel(file, shape, 'Q8_0');
    const model = await lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(file)) });
    try {
      assert.equal(model.config.vocab, 151936);
      const prompt = promptText(vocabulary(151936), 32);
      assert.deepEqual(Array.from(model.tokenize(prompt.text).ids), prompt.ids);
      assert.ok(prompt.ids.every((id) => id < 151936));
    } finally {
      model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a seeded stream taken in chunks of any size gives the values taken whole; a file written in small chunks is the same bytes', () => {
  const whole = normalValues(1001, 12345, 0, 0.02);
  const stream = new NormalStream(12345, 0, 0.02);
  const parts = [1, 2, 7, 0, 100, 333, 558].map((n) => Array.from(stream.take(n)));
  assert.equal(firstBitDifference(Float32Array.from(parts.flat()), whole), -1);
  assert.notEqual(firstBitDifference(normalValues(1001, 12346, 0, 0.02), whole), -1);  // another seed, other values

  const dir = mkdtempSync(join(tmpdir(), 'gguf-chunks-'));
  try {
    for (const format of ['Q4_K_M', 'F16']) {
      const [a, b] = ['whole', 'chunked'].map((name) => join(dir, `${name}-${format}.gguf`));
      const wholeRun = writeModel(a, TINY.k256, format);
      // 700 values: two 256-rows a chunk, or one row when a row is wider (ffn_down's 512)
      const chunkedRun = writeModel(b, TINY.k256, format, { chunkValues: 700 });
      assert.equal(chunkedRun.fileBytes, wholeRun.fileBytes);
      assert.ok(Buffer.compare(readFileSync(a), readFileSync(b)) === 0, `${format}: the chunked file differs`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the 1.5b shape (Qwen2.5-1.5B\'s sizes): its Q4_K_M mix is real Q4_K and Q6_K, as llama.cpp writes it, about 1 GB for 1.54 B parameters', () => {
  const shape = SHAPES['1.5b'];
  assert.deepEqual([shape.hidden, shape.layers, shape.heads, shape.kvHeads, shape.ff, shape.vocab], [1536, 28, 12, 2, 8960, 151936]);
  const tensors = modelTensors(shape, 'Q4_K_M');
  const types = Object.fromEntries(tensors.map((t) => [t.name, t.type]));
  assert.equal(types['token_embd.weight'], 'Q6_K');  // tied: quantized as output.weight
  assert.equal(types['output.weight'], undefined);
  // use_more_bits(i, 28): i < 3, i >= 24, or (i - 3) % 3 == 2
  const more = (i) => i < 3 || i >= 24 || (i - 3) % 3 === 2;
  for (let i = 0; i < 28; ++i) {
    for (const name of ['attn_q', 'attn_k', 'attn_output', 'ffn_gate', 'ffn_up']) assert.equal(types[`blk.${i}.${name}.weight`], 'Q4_K', `layer ${i} ${name}`);
    assert.equal(types[`blk.${i}.attn_v.weight`], more(i) ? 'Q6_K' : 'Q4_K', `layer ${i} attn_v`);
    assert.equal(types[`blk.${i}.ffn_down.weight`], more(i) ? 'Q6_K' : 'Q4_K', `layer ${i} ffn_down`);
  }
  assert.deepEqual(tensors.find((t) => t.name === 'blk.0.attn_k.weight').dims, [1536, 256]);  // 2 KV heads of 128
  assert.deepEqual(tensors.find((t) => t.name === 'blk.0.ffn_down.weight').dims, [8960, 1536]);
  const count = (t) => t.dims.reduce((a, b) => a * b, 1);
  const parameters = tensors.reduce((n, t) => n + count(t), 0);
  assert.ok(parameters > 1.5e9 && parameters < 1.6e9, `${parameters} parameters`);
  const bytes = tensors.reduce((n, t) => n + tensorBytes(t.type, count(t)), 0);
  assert.ok(bytes > 0.9e9 && bytes < 1.1e9, `${bytes} bytes of tensors`);
  // only Q4_K_M is written for it (F32 would be 6 GB): refused before anything is written
  assert.throws(() => ensureModelFile(join(tmpdir(), 'gguf-never-written'), '1.5b', 'F32'), /written as Q4_K_M, not F32/);
});
