// A GGUF file's own tokenizer (tokenizer.ggml.*, byte-level BPE) read by lens.loadCheckpoint({
// weights }) with no tokenizer given, against @huggingface/tokenizers on the equivalent
// tokenizer.json: the kinds of tests/js/tokenizer-kinds.mjs (GPT-2, SmolLM2, Llama 3, Qwen2) written
// into a GGUF file as llama.cpp's converter writes a tokenizer (tokens by id, merges as 'a b',
// token types 1 normal / 3 control / 4 user-defined, tokenizer.ggml.pre, BOS and add_bos_token),
// beside a tiny random llama of that vocabulary. GGUF does not carry an added token's lstrip or
// rstrip: the equivalent tokenizer.json is the kind's without them. SentencePiece GGUF tokenizers
// and unknown pre-tokenizers are refused by name (tokenize says so; the model loads).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer } from '@huggingface/tokenizers';

import { lcgFloats, loadLens } from './support.mjs';
import { KINDS, strings } from './tokenizer-kinds.mjs';

const lens = await loadLens();

// ---- a small GGUF writer (v3, alignment 32) ------------------------------------------------------

const STRING = 8;
const U32 = 4;
const BOOL = 7;
const I32 = 5;
const ARRAY = 9;

class Bytes {
  parts = [];
  size = 0;
  push(bytes) {
    this.parts.push(bytes);
    this.size += bytes.length;
  }
  u32(value) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, value, true);
    this.push(b);
  }
  u64(value) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(value), true);
    this.push(b);
  }
  string(text) {
    const b = new TextEncoder().encode(text);
    this.u64(b.length);
    this.push(b);
  }
  pad(alignment) {
    this.push(new Uint8Array((alignment - (this.size % alignment)) % alignment));
  }
  concat() {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

function value(out, type, v) {
  if (type === STRING) out.string(v);
  else if (type === U32) out.u32(v);
  else if (type === I32) out.u32(v >>> 0);
  else if (type === BOOL) out.push(Uint8Array.of(v ? 1 : 0));
  else throw new Error(`type ${type}`);
}

/** metadata: [[key, type, value]] (type [ARRAY, element] for arrays); tensors: [[name, shape, Float32Array]]. */
function writeGguf(metadata, tensors) {
  const out = new Bytes();
  out.push(new TextEncoder().encode('GGUF'));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(metadata.length);
  for (const [key, type, v] of metadata) {
    out.string(key);
    if (Array.isArray(type)) {
      out.u32(ARRAY);
      out.u32(type[1]);
      out.u64(v.length);
      for (const item of v) value(out, type[1], item);
    } else {
      out.u32(type);
      value(out, type, v);
    }
  }
  let offset = 0;
  for (const [name, shape, data] of tensors) {
    out.string(name);
    out.u32(shape.length);
    for (const dim of [...shape].reverse()) out.u64(dim); // ne[0] first
    out.u32(0); // F32
    out.u64(offset);
    offset += Math.ceil(data.byteLength / 32) * 32;
  }
  out.pad(32);
  for (const [, , data] of tensors) {
    out.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    out.pad(32);
  }
  return out.concat();
}

/** A tiny random llama (1 layer, d 8) of `vocab` tokens, tied, with `tokenizer` metadata. */
function llamaGguf(vocab, tokenizer) {
  let seed = 1;
  const t = (name, shape) => [name, shape, Float32Array.from(lcgFloats(shape.reduce((a, b) => a * b, 1), seed++), (v) => v * 0.1)];
  return writeGguf([
    ['general.architecture', STRING, 'llama'],
    ['llama.block_count', U32, 1], ['llama.context_length', U32, 64], ['llama.embedding_length', U32, 8],
    ['llama.feed_forward_length', U32, 16], ['llama.attention.head_count', U32, 2],
    ['llama.attention.head_count_kv', U32, 2],
    ...tokenizer,
  ], [
    t('token_embd.weight', [vocab, 8]), t('blk.0.attn_norm.weight', [8]), t('blk.0.attn_q.weight', [8, 8]),
    t('blk.0.attn_k.weight', [8, 8]), t('blk.0.attn_v.weight', [8, 8]), t('blk.0.attn_output.weight', [8, 8]),
    t('blk.0.ffn_norm.weight', [8]), t('blk.0.ffn_gate.weight', [16, 8]), t('blk.0.ffn_up.weight', [16, 8]),
    t('blk.0.ffn_down.weight', [8, 16]), t('output_norm.weight', [8]),
  ]);
}

/**
 * A tokenizer.json as llama.cpp's converter writes it into GGUF metadata (the gpt2 model): every id's
 * token (the vocabulary's, or an added token's content), its type, the merges as 'a b', the
 * pre-tokenizer's name, BOS when the post-processor adds one.
 */
function tokenizerMetadata(json, pre) {
  const tokens = [];
  const types = [];
  for (const [token, id] of Object.entries(json.model.vocab)) {
    tokens[id] = token;
    types[id] = 1;
  }
  for (const a of json.added_tokens) {
    tokens[a.id] = a.content;
    types[a.id] = a.special ? 3 : 4;
  }
  for (let id = 0; id < tokens.length; ++id) assert.ok(tokens[id] !== undefined, `id ${id} has a token`);
  const merges = json.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
  const metadata = [
    ['tokenizer.ggml.model', STRING, 'gpt2'], ['tokenizer.ggml.pre', STRING, pre],
    ['tokenizer.ggml.tokens', [ARRAY, STRING], tokens], ['tokenizer.ggml.token_type', [ARRAY, I32], types],
    ['tokenizer.ggml.merges', [ARRAY, STRING], merges],
  ];
  const template = JSON.stringify(json.post_processor ?? {}).match(/"SpecialToken":\{"id":"([^"]+)"/);
  if (template) {
    metadata.push(['tokenizer.ggml.bos_token_id', U32, tokens.indexOf(template[1])]);
    metadata.push(['tokenizer.ggml.add_bos_token', BOOL, true]);
  }
  return { metadata, vocab: tokens.length };
}

// The kind's tokenizer.json as GGUF can hold it: added tokens without lstrip or rstrip.
function equivalent(json) {
  return { ...json, added_tokens: json.added_tokens.map((a) => ({ ...a, lstrip: false, rstrip: false })) };
}

const PRE = { gpt2: 'gpt-2', smollm2: 'smollm', llama3: 'llama-bpe', qwen2: 'qwen2' };
const SEEDS = { gpt2: 31, smollm2: 32, llama3: 33, qwen2: 34 };

for (const [kind, pre] of Object.entries(PRE)) {
  test(`${kind} (tokenizer.ggml.pre '${pre}'): the GGUF file's tokenizer gives @huggingface/tokenizers' ids`, async () => {
    const json = equivalent(KINDS[kind]());
    const reference = new Tokenizer(json, {});
    const { metadata, vocab } = tokenizerMetadata(json, pre);
    const m = await lens.loadCheckpoint({ weights: llamaGguf(vocab, metadata) });
    try {
      assert.ok(m.hasTokenizer);
      let tokens = 0;
      const list = strings(SEEDS[kind]).slice(0, 600);
      for (const text of list) {
        const expected = reference.encode(text);
        assert.deepEqual(Array.from(m.tokenize(text).ids), expected.ids, `${kind}: ids of ${JSON.stringify(text.slice(0, 200))}`);
        tokens += expected.ids.length;
      }
      assert.ok(tokens > 5000, `${tokens} tokens compared`);
    } finally {
      m.dispose();
    }
  });
}

test('the pre-tokenizer\'s name matters: another one\'s split gives other ids for some strings', async () => {
  for (const [kind, wrong] of [['smollm2', 'gpt-2'], ['llama3', 'qwen2'], ['qwen2', 'llama-bpe'], ['gpt2', 'smollm']]) {
    const json = equivalent(KINDS[kind]());
    const reference = new Tokenizer(json, {});
    const { metadata, vocab } = tokenizerMetadata(json, wrong);
    const m = await lens.loadCheckpoint({ weights: llamaGguf(vocab, metadata) });
    try {
      const differ = strings(SEEDS[kind]).slice(0, 600)
        .filter((text) => JSON.stringify(Array.from(m.tokenize(text).ids)) !== JSON.stringify(reference.encode(text).ids));
      assert.ok(differ.length > 0, `${kind} read as '${wrong}': no string differs`);
    } finally {
      m.dispose();
    }
  }
});

test('a SentencePiece GGUF tokenizer or an unknown pre-tokenizer: the model loads, tokenize says why', async () => {
  const json = KINDS.gpt2();
  const { metadata, vocab } = tokenizerMetadata(json, 'gpt-2');
  const cases = [
    [metadata.map((e) => (e[0] === 'tokenizer.ggml.model' ? [e[0], STRING, 'llama'] : e)),
      /this GGUF file's tokenizer \(tokenizer.ggml.model 'llama', SentencePiece\) is not read yet; supported: gpt2/],
    [metadata.map((e) => (e[0] === 'tokenizer.ggml.pre' ? [e[0], STRING, 'deepseek-coder'] : e)),
      /this GGUF file's pre-tokenizer \(tokenizer.ggml.pre 'deepseek-coder'\) is not read yet; supported: gpt-2, smollm, llama-bpe, qwen2/],
    [[], /this GGUF file has no tokenizer \(no tokenizer.ggml.model\): pass loadCheckpoint its tokenizer.json/],
  ];
  for (const [tokenizer, message] of cases) {
    const m = await lens.loadCheckpoint({ weights: llamaGguf(vocab, tokenizer) });
    try {
      assert.equal(m.hasTokenizer, false);
      assert.throws(() => m.tokenize('hi'), message);
    } finally {
      m.dispose();
    }
  }
  // a tokenizer given with the GGUF file is used instead of its own
  const m = await lens.loadCheckpoint({ weights: llamaGguf(vocab, cases[0][0]), tokenizer: json });
  assert.deepEqual(Array.from(m.tokenize('hello world').ids), new Tokenizer(json, {}).encode('hello world').ids);
  m.dispose();
});
