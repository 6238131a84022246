// Writes the malformed .safetensors corpus: tests/data/malformed/*.safetensors, each one defect
// away from a valid weights file, and tests/data/malformed/expected.json (file -> a substring of
// the error message it must give), plus the valid seeds the fuzzer also starts from
// (tests/fuzz/seeds/); and the same for GPT-2 checkpoints (tests/data/malformed-gpt2/,
// tests/fuzz/seeds-gpt2/, at the end). Deterministic: running it again rewrites the same bytes.
// Usage: node scripts/data/make-malformed-corpus.mjs
//
// Every file is meant for a layer with dModel 4, 2 heads and biases: in_proj_weight [12, 4],
// in_proj_bias [12], out_proj.weight [4, 4], out_proj.bias [4], all F32. Files whose name starts
// with "layer-" parse as .safetensors and are refused by the layer (missing, extra, misshapen or
// non-finite tensors); the others are refused by the reader whatever the layer.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { concatArrays } from '../lib/bytes.mjs';

const root = new URL('../../', import.meta.url);
const outDir = fileURLToPath(new URL('tests/data/malformed/', root));
const seedDir = fileURLToPath(new URL('tests/fuzz/seeds/', root));

// ---- building blocks ------------------------------------------------------------------------

const utf8 = (text) => new TextEncoder().encode(text);

const concat = (...parts) => concatArrays(parts);

function u64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true);
  return out;
}

/** A file: the 8-byte little-endian header length, the header bytes as given, the data. */
function file(header, data = new Uint8Array(0), length = undefined) {
  const headerBytes = typeof header === 'string' ? utf8(header) : header;
  return concat(u64(length ?? headerBytes.length), headerBytes, data);
}

/** One tensor entry as JSON text. */
const entry = (dtype, shape, begin, end) =>
  `{"dtype":${JSON.stringify(dtype)},"shape":${JSON.stringify(shape)},"data_offsets":[${begin},${end}]}`;

/** A header from [name, entry text] pairs, in order (duplicates allowed). */
const header = (pairs) => `{${pairs.map(([name, text]) => `${JSON.stringify(name)}:${text}`).join(',')}}`;

const BYTES = { F32: 4, F64: 8, U8: 1 };
const count = (shape) => shape.reduce((a, b) => a * b, 1);

/** Tensors [{name, dtype, shape, values?}] laid out one after the other: header pairs and data. */
function layout(tensors) {
  const pairs = [];
  const parts = [];
  let offset = 0;
  for (const t of tensors) {
    const size = count(t.shape) * BYTES[t.dtype];
    pairs.push([t.name, entry(t.dtype, t.shape, offset, offset + size)]);
    const bytes = new Uint8Array(size);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < count(t.shape); ++i) {
      const v = t.values?.[i] ?? ((i * 7) % 11 - 5) / 8;
      if (t.dtype === 'F32') view.setFloat32(i * 4, v, true);
      else if (t.dtype === 'F64') view.setFloat64(i * 8, v, true);
      else view.setUint8(i, i & 255);
    }
    parts.push(bytes);
    offset += size;
  }
  return { pairs, data: concat(...parts) };
}

// The layer's state_dict: dModel 4, 2 heads, biases.
const STATE_DICT = [
  { name: 'in_proj_weight', dtype: 'F32', shape: [12, 4] },
  { name: 'in_proj_bias', dtype: 'F32', shape: [12] },
  { name: 'out_proj.weight', dtype: 'F32', shape: [4, 4] },
  { name: 'out_proj.bias', dtype: 'F32', shape: [4] },
];
const valid = layout(STATE_DICT);
const validHeader = header(valid.pairs);
const validFile = file(validHeader, valid.data);

/** The state_dict with some tensors changed (by name) or added. */
function variant(changes = {}, extra = []) {
  return layout([...STATE_DICT.map((t) => ({ ...t, ...changes[t.name] })).filter((t) => !t.drop), ...extra]);
}

/** The valid header with one entry's text replaced (data unchanged). */
function withEntry(name, text) {
  return file(header(valid.pairs.map(([n, e]) => [n, n === name ? text : e])), valid.data);
}

const W = 'in_proj_weight';

// ---- the corpus: [file name, bytes, substring of the expected message] ------------------------

const cases = [
  // Truncation and header lengths that lie.
  ['empty.safetensors', new Uint8Array(0), 'file is 0 bytes long, too short for the 8-byte header length'],
  ['length-field-cut.safetensors', validFile.slice(0, 5), 'file is 5 bytes long, too short for the 8-byte header length'],
  ['truncated-in-header.safetensors', validFile.slice(0, 40),
    `header length says ${utf8(validHeader).length} bytes but the file has only 32 after the length field`],
  ['truncated-in-data.safetensors', validFile.slice(0, validFile.length - 1),
    "tensor 'out_proj.bias' has data_offsets [304, 320] past the end of the data buffer (319 bytes)"],
  ['length-max.safetensors', file(validHeader, valid.data, 0xffffffffffffffffn),
    'header length says 18446744073709551615 bytes but the file has only'],
  ['length-2-pow-56.safetensors', file(validHeader, valid.data, 1n << 56n),
    'header length says 72057594037927936 bytes but the file has only'],
  ['length-zero.safetensors', file(validHeader, valid.data, 0),
    'invalid JSON header at byte 0: unexpected end of header, expected a value'],
  ['length-too-short.safetensors', file(validHeader, valid.data, 10),
    'invalid JSON header at byte 10: unterminated string'],
  ['length-too-long.safetensors', file(validHeader, valid.data, utf8(validHeader).length + 3),
    'unexpected content after the JSON value'],
  // Offsets.
  ['offsets-overlap.safetensors', withEntry('out_proj.weight', entry('F32', [4, 4], 200, 264)),
    "tensors 'in_proj_bias' [192, 240] and 'out_proj.weight' [200, 264] overlap"],
  ['offsets-same-range.safetensors', withEntry('out_proj.bias', entry('F32', [4], 0, 16)),
    "tensors 'in_proj_weight' [0, 192] and 'out_proj.bias' [0, 16] overlap"],
  ['offsets-past-end.safetensors', withEntry('out_proj.bias', entry('F32', [4], 320, 336)),
    "tensor 'out_proj.bias' has data_offsets [320, 336] past the end of the data buffer (320 bytes)"],
  ['offsets-reversed.safetensors', withEntry('out_proj.bias', entry('F32', [0], 316, 304)),
    "tensor 'out_proj.bias' has data_offsets [316, 304] with begin > end"],
  ['offsets-negative.safetensors', withEntry(W, entry('F32', [12, 4], -192, 0)),
    "tensor 'in_proj_weight' data_offsets begin is negative (-192)"],
  ['offsets-fraction.safetensors', withEntry(W, entry('F32', [12, 4], 0, 192.5)),
    "tensor 'in_proj_weight' data_offsets end must be an integer, found 192.5"],
  ['offsets-beyond-2-pow-53.safetensors', withEntry(W, entry('F32', [12, 4], 0, '9007199254740993')),
    "tensor 'in_proj_weight' data_offsets end is too large (9007199254740993)"],
  ['offsets-one-number.safetensors', withEntry(W, '{"dtype":"F32","shape":[12,4],"data_offsets":[192]}'),
    "tensor 'in_proj_weight' data_offsets must be an array of two integers [begin, end]"],
  ['offsets-span-mismatch.safetensors', withEntry('in_proj_bias', entry('F32', [12], 192, 236)),
    "tensor 'in_proj_bias' has shape [12] (12 F32 values = 48 bytes) but data_offsets span 44 bytes"],
  // Dtypes.
  ['dtype-f8.safetensors', withEntry(W, entry('F8_E4M3', [12, 4], 0, 192)),
    "tensor 'in_proj_weight' has unsupported dtype 'F8_E4M3' (supported: F32, F64, U8, BOOL, F16, BF16)"],
  ['dtype-bf16-span.safetensors', withEntry(W, entry('BF16', [12, 4], 0, 192)),
    "tensor 'in_proj_weight' has shape [12, 4] (48 BF16 values = 96 bytes) but data_offsets span 192 bytes"],
  ['dtype-lowercase.safetensors', withEntry(W, entry('f32', [12, 4], 0, 192)),
    "tensor 'in_proj_weight' has unsupported dtype 'f32' (supported: F32, F64, U8, BOOL, F16, BF16)"],
  ['dtype-number.safetensors', withEntry(W, '{"dtype":32,"shape":[12,4],"data_offsets":[0,192]}'),
    "tensor 'in_proj_weight' dtype must be a string, found a number"],
  // Shapes.
  // (Sizes that give the same message with a 64-bit size_t natively and a 32-bit one in wasm.)
  ['shape-product-overflows.safetensors', withEntry(W, entry('F32', [4294967295, 4294967295, 4294967295], 0, 192)),
    "tensor 'in_proj_weight' has shape [4294967295, 4294967295, 4294967295] whose size overflows"],
  ['shape-over-size-limit.safetensors', withEntry(W, entry('F32', [75000000, 4], 0, 192)),
    "tensor 'in_proj_weight' has shape [75000000, 4] (300000000 F32 values = 1200000000 bytes), more than the limit of 1073741824 bytes"],
  ['shape-entry-beyond-2-pow-53.safetensors', withEntry(W, '{"dtype":"F32","shape":[9007199254740993,4],"data_offsets":[0,192]}'),
    "tensor 'in_proj_weight' shape entry 0 is too large (9007199254740993)"],
  ['shape-negative.safetensors', withEntry(W, entry('F32', [-12, 4], 0, 192)),
    "tensor 'in_proj_weight' shape entry 0 is negative (-12)"],
  ['shape-rank-9.safetensors', withEntry(W, entry('F32', [12, 4, 1, 1, 1, 1, 1, 1, 1], 0, 192)),
    "tensor 'in_proj_weight' has rank 9, more than the limit of 8"],
  ['shape-string.safetensors', withEntry(W, '{"dtype":"F32","shape":"12x4","data_offsets":[0,192]}'),
    "tensor 'in_proj_weight' shape must be an array, found a string"],
  ['shape-string-entries.safetensors', withEntry(W, '{"dtype":"F32","shape":["12","4"],"data_offsets":[0,192]}'),
    "tensor 'in_proj_weight' shape entry 0 must be a non-negative integer, found a string"],
  // JSON.
  ['json-not-object.safetensors', file('[1, 2, 3]', valid.data), 'header must be a JSON object, found an array'],
  ['json-trailing-comma.safetensors', file(`${validHeader.slice(0, -1)},}`, valid.data), 'expected a string key'],
  ['json-unterminated-string.safetensors', file('{"in_proj_weight', valid.data), 'unterminated string'],
  ['json-missing-colon.safetensors', file('{"in_proj_weight" {}}', valid.data), "expected ':'"],
  ['json-deep-nesting.safetensors', file(`{"a":${'['.repeat(200)}${']'.repeat(200)}}`, valid.data),
    'nesting deeper than 64 levels'],
  ['json-bad-escape.safetensors', file('{"in_proj\\x41weight":1}', valid.data), "invalid escape '\\x'"],
  ['json-lone-surrogate.safetensors', file('{"\\udc00":1}', valid.data), 'unpaired low surrogate in \\u escape'],
  ['json-leading-zero.safetensors', withEntry(W, entry('F32', [12, 4], '00', 192)), 'leading zero in a number'],
  ['json-control-char.safetensors', file('{"in_proj\nweight":1}', valid.data), 'control character in a string'],
  ['json-nul-byte.safetensors', file('{"a":1}\u0000', valid.data), 'unexpected content after the JSON value'],
  ['json-bom.safetensors', file(`\ufeff${validHeader}`, valid.data), 'invalid JSON header at byte 0: unexpected character, expected a value'],
  ['json-garbage.safetensors', file('{"in_proj_weight": [1, 2 this is not JSON', valid.data), "expected ']'"],
  ['json-duplicate-tensor.safetensors', file(header([...valid.pairs, [W, entry('F32', [0], 0, 0)]]), valid.data),
    "duplicate tensor name 'in_proj_weight'"],
  ['json-duplicate-field.safetensors',
    withEntry(W, '{"dtype":"F32","dtype":"F64","shape":[12,4],"data_offsets":[0,192]}'),
    "tensor 'in_proj_weight' has a duplicate 'dtype' key"],
  ['json-missing-offsets.safetensors', withEntry(W, '{"dtype":"F32","shape":[12,4]}'),
    "tensor 'in_proj_weight' has no data_offsets"],
  ['json-entry-not-object.safetensors', withEntry(W, '[0, 192]'),
    "tensor 'in_proj_weight' must be an object with dtype, shape and data_offsets, found an array"],
  ['metadata-number.safetensors', file(header([['__metadata__', '{"heads":2}'], ...valid.pairs]), valid.data),
    "__metadata__ value for key 'heads' must be a string, found a number"],
  ['metadata-twice.safetensors', file(header([['__metadata__', '{}'], ...valid.pairs, ['__metadata__', '{}']]), valid.data),
    'header has more than one __metadata__'],
  ['name-too-long.safetensors', file(header([...valid.pairs, ['n'.repeat(5000), entry('U8', [0], 0, 0)]]), valid.data),
    'has a name of 5000 bytes, more than the limit of 1024 bytes'],
  // UTF-8.
  ['utf8-invalid-byte.safetensors', file(concat(utf8('{"in_proj_'), Uint8Array.of(0xff), utf8('":1}')), valid.data),
    'header is not valid UTF-8 (at header byte 10)'],
  ['utf8-overlong.safetensors', file(concat(utf8('{"'), Uint8Array.of(0xc0, 0xaf), utf8('":1}')), valid.data),
    'header is not valid UTF-8 (at header byte 2)'],
  ['utf8-surrogate.safetensors', file(concat(utf8('{"'), Uint8Array.of(0xed, 0xa0, 0x80), utf8('":1}')), valid.data),
    'header is not valid UTF-8 (at header byte 2)'],
  ['utf8-cut-sequence.safetensors', file(concat(utf8('{"a":1}'), Uint8Array.of(0xe2, 0x82)), valid.data),
    'header is not valid UTF-8 (at header byte 7)'],
  // Files that parse; the layer refuses them.
  ['layer-missing-tensor.safetensors', file(header(variant({ 'out_proj.bias': { drop: true } }).pairs), variant({ 'out_proj.bias': { drop: true } }).data),
    "the weights file has no tensor 'out_proj.bias'; this layer takes: in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias"],
  ['layer-no-tensors.safetensors', file('{"__metadata__":{"format":"pt"}}'),
    "the weights file has no tensor 'in_proj_weight'"],
  ['layer-extra-tensor.safetensors', file(header(variant({}, [{ name: 'encoder.weight', dtype: 'F32', shape: [2] }]).pairs),
    variant({}, [{ name: 'encoder.weight', dtype: 'F32', shape: [2] }]).data),
  "unexpected tensor 'encoder.weight' in the weights file; this layer (bias: true) takes exactly: in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias"],
  ['layer-hostile-name.safetensors', file(header(variant({}, [{ name: '<img src=x onerror=alert(1)>', dtype: 'U8', shape: [1] }]).pairs),
    variant({}, [{ name: '<img src=x onerror=alert(1)>', dtype: 'U8', shape: [1] }]).data),
  "unexpected tensor '<img src=x onerror=alert(1)>' in the weights file"],
  ['layer-transposed.safetensors', file(header(variant({ [W]: { shape: [4, 12] } }).pairs), variant({ [W]: { shape: [4, 12] } }).data),
    "tensor 'in_proj_weight' has shape [4, 12], expected [12, 4] for dModel 4 and 2 heads"],
  ['layer-wrong-dtype.safetensors', file(header(variant({ in_proj_bias: { dtype: 'F64' } }).pairs), variant({ in_proj_bias: { dtype: 'F64' } }).data),
    "tensor 'in_proj_bias' is F64, expected F32"],
  ['layer-nan-weight.safetensors', file(validHeader, variant({ [W]: { values: [0, 0, 0, 0, 0, NaN] } }).data),
    'in_proj_weight[5] is NaN: values must be finite'],
  ['layer-infinite-bias.safetensors', file(validHeader, variant({ 'out_proj.bias': { values: [Infinity] } }).data),
    'out_proj.bias[0] is infinite: values must be finite'],
];

// Valid files the fuzzer starts from (and the tests load, to show the corpus is one defect away).
const seeds = [
  ['valid-d4-h2.safetensors', validFile],
  ['valid-d4-metadata.safetensors', file(header([['__metadata__', '{"format":"pt","heads":"2"}'], ...valid.pairs]), valid.data)],
  ['valid-d6-h3-nobias.safetensors', (() => {
    const t = layout([{ name: W, dtype: 'F32', shape: [18, 6] }, { name: 'out_proj.weight', dtype: 'F32', shape: [6, 6] }]);
    return file(header(t.pairs), t.data);
  })()],
];

// ---- write ------------------------------------------------------------------------------------

function replaceDir(dir, entries) {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) if (name.endsWith('.safetensors')) rmSync(dir + name);
  for (const [name, bytes] of entries) writeFileSync(dir + name, bytes);
}

const names = new Set(cases.map(([name]) => name));
if (names.size !== cases.length) throw new Error('duplicate file names in the corpus');
replaceDir(outDir, cases);
const expected = Object.fromEntries(cases.map(([name, , message]) => [name, message]));
writeFileSync(`${outDir}expected.json`, `${JSON.stringify(expected, null, 2)}\n`);
replaceDir(seedDir, seeds);
console.log(`wrote ${cases.length} malformed files and expected.json to tests/data/malformed/, ` +
  `${seeds.length} seeds to tests/fuzz/seeds/`);

// ---- GPT-2 checkpoints (lens.loadCheckpoint) ---------------------------------------------------
// tests/data/malformed-gpt2/: files one defect away from a Hugging Face GPT-2 checkpoint for
// tests/data/malformed-gpt2/config.json (2 layers, 2 heads, n_embd 8, vocab 16, 8 positions), with
// expected.json (file -> a substring of the message), and the valid checkpoints they were cut from
// in tests/fuzz/seeds-gpt2/ (F32 bare names; F16 with the transformer. prefix, lm_head and mask
// buffers; BF16).

const gpt2Dir = fileURLToPath(new URL('tests/data/malformed-gpt2/', root));
const gpt2SeedDir = fileURLToPath(new URL('tests/fuzz/seeds-gpt2/', root));
const GPT2 = { layers: 2, heads: 2, d: 8, vocab: 16, context: 8 };
const HALF_BYTES = { F16: 2, BF16: 2 };

// Bits of a float16 / bfloat16 for the corpus' values (multiples of 1/8 below 1, ±Infinity).
function f16Bits(v) {
  if (v === 0) return 0;
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 0x7e00 : v > 0 ? 0x7c00 : 0xfc00;
  const sign = v < 0 ? 0x8000 : 0;
  const e = Math.floor(Math.log2(Math.abs(v)));
  return sign | ((e + 15) << 10) | Math.round((Math.abs(v) / 2 ** e - 1) * 1024);
}
function bf16Bits(v) {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, v, true);
  return view.getUint32(0, true) >>> 16;
}

/** GPT-2 tensors [{name, dtype, shape, values?, bytes?}] laid out like layout(), F16/BF16 too. */
function gpt2Layout(tensors) {
  const pairs = [];
  const parts = [];
  let offset = 0;
  for (const t of tensors) {
    const width = HALF_BYTES[t.dtype] ?? BYTES[t.dtype];
    const size = t.bytes ?? count(t.shape) * width;
    pairs.push([t.name, entry(t.dtype, t.shape, offset, offset + size)]);
    const bytes = new Uint8Array(size);
    const view = new DataView(bytes.buffer);
    for (let i = 0; (i + 1) * width <= size; ++i) {
      const v = t.values?.[i] ?? ((i * 7) % 11 - 5) / 8;
      if (t.dtype === 'F32') view.setFloat32(i * 4, v, true);
      else if (t.dtype === 'F16') view.setUint16(i * 2, f16Bits(v), true);
      else if (t.dtype === 'BF16') view.setUint16(i * 2, bf16Bits(v), true);
      else view.setUint8(i, i & 255);
    }
    parts.push(bytes);
    offset += size;
  }
  return file(header(tensors.meta ? [['__metadata__', tensors.meta], ...pairs] : pairs), concat(...parts));
}

/**
 * The tensors of a valid tiny GPT-2: options { dtype, prefix, lmHead, buffers, layers, d, vocab },
 * then `edit(list)` may change them (the list of {name, dtype, shape, values?, bytes?}).
 */
function gpt2Tensors({ dtype = 'F32', prefix = '', lmHead = false, buffers = false, layers = GPT2.layers,
  d = GPT2.d, vocab = GPT2.vocab } = {}, edit = (list) => list) {
  const t = (name, shape) => ({ name: prefix + name, dtype, shape });
  const list = [t('wte.weight', [vocab, d]), t('wpe.weight', [GPT2.context, d])];
  for (let l = 0; l < layers; ++l) {
    const p = `h.${l}.`;
    list.push(t(`${p}ln_1.weight`, [d]), t(`${p}ln_1.bias`, [d]));
    if (buffers) {
      list.push({ name: `${prefix}${p}attn.bias`, dtype: 'F32', shape: [1, 1, GPT2.context, GPT2.context] },
        { name: `${prefix}${p}attn.masked_bias`, dtype: 'F32', shape: [], values: [-1e4] });
    }
    list.push(t(`${p}attn.c_attn.weight`, [d, 3 * d]), t(`${p}attn.c_attn.bias`, [3 * d]),
      t(`${p}attn.c_proj.weight`, [d, d]), t(`${p}attn.c_proj.bias`, [d]),
      t(`${p}ln_2.weight`, [d]), t(`${p}ln_2.bias`, [d]),
      t(`${p}mlp.c_fc.weight`, [d, 4 * d]), t(`${p}mlp.c_fc.bias`, [4 * d]),
      t(`${p}mlp.c_proj.weight`, [4 * d, d]), t(`${p}mlp.c_proj.bias`, [d]));
  }
  list.push(t('ln_f.weight', [d]), t('ln_f.bias', [d]));
  if (lmHead) list.push({ name: 'lm_head.weight', dtype, shape: [vocab, d] });
  return gpt2Layout(edit(list));
}

const rename = (from, to) => (list) => list.map((t) => (t.name === from ? { ...t, name: to } : t));
const change = (name, fields) => (list) => list.map((t) => (t.name === name ? { ...t, ...fields } : t));
const drop = (name) => (list) => list.filter((t) => t.name !== name);
const SUPPORTED = 'supported: the GPT-2 family';

const gpt2Cases = [
  ['bert-names.safetensors', gpt2Tensors({}, rename('wte.weight', 'bert.embeddings.word_embeddings.weight')),
    `this looks like a BERT checkpoint (tensor 'bert.embeddings.word_embeddings.weight'); ${SUPPORTED}`],
  ['llama-names.safetensors', gpt2Tensors({}, (list) => [
    { name: 'model.embed_tokens.weight', dtype: 'F32', shape: [16, 8] },
    { name: 'model.layers.0.self_attn.q_proj.weight', dtype: 'F32', shape: [8, 8] }]),
  `this looks like a Llama checkpoint (tensor 'model.embed_tokens.weight'); ${SUPPORTED}`],
  ['neox-names.safetensors', gpt2Tensors({}, rename('wte.weight', 'gpt_neox.embed_in.weight')),
    'this looks like a GPT-NeoX checkpoint'],
  ['unknown-tensor.safetensors', gpt2Tensors({}, (list) => [...list, { name: 'h.0.attn.rotary.inv_freq', dtype: 'F32', shape: [4] }]),
    `the checkpoint's tensor 'h.0.attn.rotary.inv_freq' [4] is not a GPT-2 tensor; ${SUPPORTED}`],
  ['config-n-embd.safetensors', gpt2Tensors({ d: 16 }),
    "the checkpoint's tensor 'wte.weight' has shape [16, 16], config.json (n_embd 8, vocab_size 16, n_positions 8) needs [16, 8]"],
  ['config-vocab.safetensors', gpt2Tensors({ vocab: 20 }),
    "the checkpoint's tensor 'wte.weight' has shape [20, 8], config.json (n_embd 8, vocab_size 16, n_positions 8) needs [16, 8]"],
  ['config-n-layer.safetensors', gpt2Tensors({ layers: 3 }),
    'config.json says n_layer 2 but the checkpoint has 3 layers (h.0 … h.2)'],
  ['conv1d-not-transposed.safetensors', gpt2Tensors({ prefix: 'transformer.' }, change('transformer.h.1.attn.c_attn.weight', { shape: [24, 8] })),
    "the checkpoint's tensor 'transformer.h.1.attn.c_attn.weight' has shape [24, 8], config.json (n_embd 8, vocab_size 16, n_positions 8) needs [8, 24]"],
  ['missing-ln-f-bias.safetensors', gpt2Tensors({}, drop('ln_f.bias')),
    "the checkpoint has no tensor for 'ln_f.bias' [8] (GPT-2 name: ln_f.bias)"],
  ['missing-layer-tensor.safetensors', gpt2Tensors({ prefix: 'transformer.' }, drop('transformer.h.1.mlp.c_proj.bias')),
    "the checkpoint has no tensor for 'layers.1.mlp.proj.bias' [8] (GPT-2 name: h.1.mlp.c_proj.bias)"],
  ['lm-head-untied.safetensors', gpt2Tensors({ lmHead: true }, change('lm_head.weight', { values: [0, 0.5] })),
    'lm_head.weight differs from wte.weight (at value 0): an untied output layer is not supported'],
  ['lm-head-shape.safetensors', gpt2Tensors({ lmHead: true }, change('lm_head.weight', { shape: [16, 4] })),
    "the checkpoint's tensor 'lm_head.weight' has shape [16, 4]"],
  ['both-prefixes.safetensors', gpt2Tensors({}, (list) => [...list, { name: 'transformer.wte.weight', dtype: 'F32', shape: [16, 8] }]),
    "the checkpoint has both 'wte.weight' and 'transformer.wte.weight'"],
  ['f16-odd-span.safetensors', gpt2Tensors({ dtype: 'F16' }, change('wpe.weight', { bytes: 127 })),
    "safetensors: tensor 'wpe.weight' has shape [8, 8] (64 F16 values = 128 bytes) but data_offsets span 127 bytes"],
  ['u8-weight.safetensors', gpt2Tensors({}, change('h.0.ln_1.weight', { dtype: 'U8' })),
    "the checkpoint's tensor 'h.0.ln_1.weight' is U8; supported: F32, F16, BF16 (and F64)"],
  ['nan-weight.safetensors', gpt2Tensors({}, change('h.1.mlp.c_fc.bias', { values: [0, 0, NaN] })),
    "tensor 'h.1.mlp.c_fc.bias' holds a non-finite value (NaN or infinity)"],
  ['huge-weight.safetensors', gpt2Tensors({}, change('h.0.attn.c_attn.weight', { values: [0, 0, 0, 1e20] })),
    "tensor 'h.0.attn.c_attn.weight' holds 1e+20; supported: |value| <= 1e+05"],
  ['f16-infinity.safetensors', gpt2Tensors({ dtype: 'F16' }, change('ln_f.weight', { values: [Infinity] })),
    "tensor 'ln_f.weight' holds a non-finite value (NaN or infinity)"],
  ['truncated.safetensors', gpt2Tensors().subarray(0, gpt2Tensors().length - 10),
    "tensor 'ln_f.bias' has data_offsets"],
  ['no-tensors.safetensors', file('{}        '),
    `the checkpoint has no tensors; ${SUPPORTED}`],
];

const gpt2Seeds = [
  ['valid-f32.safetensors', gpt2Tensors()],
  ['valid-f16-prefix-lmhead-buffers.safetensors', gpt2Tensors({ dtype: 'F16', prefix: 'transformer.', lmHead: true, buffers: true })],
  ['valid-bf16.safetensors', gpt2Tensors({ dtype: 'BF16' })],
];

if (new Set(gpt2Cases.map(([name]) => name)).size !== gpt2Cases.length) throw new Error('duplicate GPT-2 corpus names');
replaceDir(gpt2Dir, gpt2Cases);
writeFileSync(`${gpt2Dir}expected.json`,
  `${JSON.stringify(Object.fromEntries(gpt2Cases.map(([name, , message]) => [name, message])), null, 2)}\n`);
writeFileSync(`${gpt2Dir}config.json`, `${JSON.stringify({
  model_type: 'gpt2', n_layer: GPT2.layers, n_head: GPT2.heads, n_embd: GPT2.d, n_positions: GPT2.context,
  vocab_size: GPT2.vocab, n_inner: null, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new',
}, null, 2)}\n`);
replaceDir(gpt2SeedDir, gpt2Seeds);
console.log(`wrote ${gpt2Cases.length} malformed GPT-2 checkpoints to tests/data/malformed-gpt2/, ` +
  `${gpt2Seeds.length} seeds to tests/fuzz/seeds-gpt2/`);
