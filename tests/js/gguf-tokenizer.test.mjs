// A GGUF file's own tokenizer (tokenizer.ggml.*) read by lens.loadCheckpoint({ weights }) with no
// tokenizer given, against @huggingface/tokenizers on the equivalent tokenizer.json.
//
// Byte-level BPE (tokenizer.ggml.model 'gpt2'): the kinds of tests/js/tokenizer-kinds.mjs (GPT-2,
// SmolLM2, Llama 3, Qwen2) written into a GGUF file as llama.cpp's converter writes a tokenizer
// (tokens by id, merges as 'a b', token types 1 normal / 3 control / 4 user-defined,
// tokenizer.ggml.pre, BOS and add_bos_token), beside a tiny random llama of that vocabulary. GGUF
// does not carry an added token's lstrip or rstrip: the equivalent tokenizer.json is the kind's
// without them.
//
// SentencePiece (tokenizer.ggml.model 'llama': Llama 2, TinyLlama, Mistral, Phi-3): a SentencePiece
// vocabulary (tokenizer-kinds' SENTENCEPIECE: <unk> <s> </s>, the 256 byte tokens, ▁-pieces and
// characters, plus user-defined tokens) with scores and token types, no merges, as llama.cpp's
// converter writes it; the equivalent tokenizer.json written here as transformers' LlamaConverter
// writes it (its merges generated from the scores by generate_merges, transcribed below, not by
// the code under test), in llama.cpp's default layout (space prefix, BOS) and without the prefix
// and with the EOS. Ids equal on 1 300 seeded strings each, and the ids decode back to the text.
// Gemma's layout (general.architecture gemma*: <pad> <eos> <bos> <unk>, "\t" in place of <0x09>, no
// space prefix, a Split pre-tokenizer) likewise, in a tiny Gemma 2 file, against the tokenizer.json
// transformers' GemmaConverter writes (transcribed below). No real vocabulary: no file is downloaded.
//
// Unknown tokenizer models and pre-tokenizers are refused by name (tokenize says so; the model
// loads), as is a SentencePiece vocabulary with only some of the 256 byte tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer } from '@huggingface/tokenizers';

import { lcgFloats, loadLens } from './support.mjs';
import { KINDS, SENTENCEPIECE, added, bpeModel, file, strings, vocabOf } from './tokenizer-kinds.mjs';

const lens = await loadLens();

// ---- a small GGUF writer (v3, alignment 32) ------------------------------------------------------

const STRING = 8;
const U32 = 4;
const F32 = 6;
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
  else if (type === F32) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    out.push(b);
  }
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

/** A maker of a tiny model's tensors: t(name, shape) is [name, shape, seeded values in ±0.1], the seed counting up from `seed`. */
function randomTensors(seed) {
  return (name, shape) => [name, shape, Float32Array.from(lcgFloats(shape.reduce((a, b) => a * b, 1), seed++), (v) => v * 0.1)];
}

/** A tiny random llama (1 layer, d 8) of `vocab` tokens, tied, with `tokenizer` metadata. */
function llamaGguf(vocab, tokenizer) {
  const t = randomTensors(1);
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

test('an unknown tokenizer model or pre-tokenizer: the model loads, tokenize says why', async () => {
  const json = KINDS.gpt2();
  const { metadata, vocab } = tokenizerMetadata(json, 'gpt-2');
  const cases = [
    [metadata.map((e) => (e[0] === 'tokenizer.ggml.model' ? [e[0], STRING, 'bert'] : e)),
      /this GGUF file's tokenizer \(tokenizer.ggml.model 'bert'\) is not read yet; supported: gpt2 \(byte-level BPE\), llama \(SentencePiece BPE\)/],
    [metadata.map((e) => (e[0] === 'tokenizer.ggml.model' ? [e[0], STRING, 't5'] : e)),
      /this GGUF file's tokenizer \(tokenizer.ggml.model 't5'\) is not read yet; supported: gpt2/],
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

// ---- SentencePiece (tokenizer.ggml.model 'llama') --------------------------------------------------

const USER_DEFINED = ['<mask>', 'lens', '▁▁'];

/**
 * A SentencePiece BPE vocabulary as llama.cpp's converter writes it: the pieces by id, their scores
 * (float32; control, byte and user-defined pieces 0, a merged piece minus its merge's rank, in
 * tens sharing a score so ties are ordered by the rule, then the characters below them) and
 * their types (2 unknown, 3 control, 6 byte, 4 user-defined, 1 normal).
 */
function sentencePieceVocabulary() {
  const tokens = [...SENTENCEPIECE.tokens, ...USER_DEFINED.filter((t) => !SENTENCEPIECE.tokens.includes(t))];
  const rank = new Map();
  SENTENCEPIECE.merges.forEach(([a, b], i) => { if (!rank.has(a + b)) rank.set(a + b, i); });
  const merged = SENTENCEPIECE.merges.length;
  let character = 0;
  const types = [];
  const scores = tokens.map((token, id) => {
    if (id === 0) types.push(2);
    else if (id < 3) types.push(3);
    else if (/^<0x[0-9A-F]{2}>$/.test(token)) types.push(6);
    else if (USER_DEFINED.includes(token)) types.push(4);
    else types.push(1);
    if (types[id] !== 1) return 0;
    if (rank.has(token)) return Math.fround(-1 - Math.floor(rank.get(token) / 10));
    return Math.fround(-1 - merged - character++);
  });
  return { tokens, scores, types };
}

/**
 * transformers' generate_merges(vocab, vocab_scores) (convert_slow_tokenizer.py), transcribed: for
 * each piece in id order, every split into two pieces of the vocabulary (at a character), sorted by
 * (left id, right id); then all of them sorted by (score, len(left), len(right)), highest first,
 * stably (Python's sorted with reverse=True keeps equal keys in order; so does Array#sort).
 */
function generateMerges(tokens, scores) {
  const vocab = new Map(tokens.map((t, i) => [t, i]));
  const merges = [];
  tokens.forEach((piece, id) => {
    const chars = [...piece];
    const local = [];
    for (let i = 1; i < chars.length; ++i) {
      const left = chars.slice(0, i).join('');
      const right = chars.slice(i).join('');
      if (vocab.has(left) && vocab.has(right)) local.push([left, right, scores[id], i, chars.length - i]);
    }
    local.sort((x, y) => vocab.get(x[0]) - vocab.get(y[0]) || vocab.get(x[1]) - vocab.get(y[1]));
    merges.push(...local);
  });
  merges.sort((x, y) => y[2] - x[2] || y[3] - x[3] || y[4] - x[4]);
  return merges.map(([left, right]) => [left, right]);
}

/**
 * The tokenizer.json transformers' LlamaConverter writes for the vocabulary (with
 * LlamaTokenizerFast's post-processor): normalizer Prepend('▁') when add_prefix_space, then
 * Replace(' ', '▁'); no pre-tokenizer; BPE with byte fallback, fuse_unk and <unk>; ids 0–2 scored
 * 0; the unknown, control, BOS and EOS tokens special added tokens, user-defined ones added tokens
 * not special, none normalized; the BOS before the text and the EOS after it when added.
 */
function llamaConverterJson({ tokens, scores, types }, { prefix, bos, eos }) {
  const converterScores = scores.map((s, id) => (id < 3 ? 0 : s));
  const template = [];
  if (bos) template.push({ SpecialToken: { id: '<s>', type_id: 0 } });
  template.push({ Sequence: { id: 'A', type_id: 0 } });
  if (eos) template.push({ SpecialToken: { id: '</s>', type_id: 0 } });
  const special = {};
  if (bos) special['<s>'] = { id: '<s>', ids: [1], tokens: ['<s>'] };
  if (eos) special['</s>'] = { id: '</s>', ids: [2], tokens: ['</s>'] };
  const decoders = [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }];
  if (prefix) decoders.push({ type: 'Strip', content: ' ', start: 1, stop: 0 });
  return file({
    added_tokens: tokens.flatMap((t, id) => (id < 3 || types[id] === 2 || types[id] === 3
      ? [added(id, t, { special: true, normalized: false })]
      : types[id] === 4 ? [added(id, t, { special: false, normalized: false })] : [])),
    normalizer: { type: 'Sequence', normalizers: [...(prefix ? [{ type: 'Prepend', prepend: '▁' }] : []),
      { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
    pre_tokenizer: null,
    post_processor: bos || eos ? { type: 'TemplateProcessing', single: template, pair: [], special_tokens: special } : null,
    decoder: { type: 'Sequence', decoders },
    model: bpeModel(vocabOf(tokens), generateMerges(tokens, converterScores), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true }),
  });
}

/** The vocabulary as GGUF metadata; `options` the optional keys (undefined: left out, llama.cpp's default). */
function sentencePieceMetadata({ tokens, scores, types }, options = {}) {
  const metadata = [
    ['tokenizer.ggml.model', STRING, 'llama'],
    ['tokenizer.ggml.tokens', [ARRAY, STRING], tokens], ['tokenizer.ggml.scores', [ARRAY, F32], scores],
    ['tokenizer.ggml.token_type', [ARRAY, I32], types],
    ['tokenizer.ggml.unknown_token_id', U32, 0], ['tokenizer.ggml.bos_token_id', U32, 1], ['tokenizer.ggml.eos_token_id', U32, 2],
  ];
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) metadata.push([`tokenizer.ggml.${key}`, BOOL, value]);
  }
  return metadata;
}

/** The bytes of a token as tokenTexts shows it: '<0xNN>' for a byte of part of a character, else its UTF-8. */
function textBytes(text) {
  const bytes = [];
  for (const part of text.split(/(<0x[0-9A-F]{2}>)/)) {
    const byte = /^<0x([0-9A-F]{2})>$/.exec(part);
    if (byte) bytes.push(parseInt(byte[1], 16));
    else bytes.push(...new TextEncoder().encode(part));
  }
  return bytes;
}

const LAYOUTS = {
  'llama.cpp\'s defaults (space prefix, BOS)': [{}, { prefix: true, bos: true, eos: false }, 41],
  'add_space_prefix false, add_eos_token true, add_bos_token false': [
    { add_space_prefix: false, add_eos_token: true, add_bos_token: false }, { prefix: false, bos: false, eos: true }, 42],
};

// The added tokens' contents (unknown, control, user-defined) and the user-defined ones' ids.
const ADDED = sentencePieceVocabulary().tokens.filter((t, id) => ![1, 6].includes(sentencePieceVocabulary().types[id]));
const ADDED_IDS = new Set(sentencePieceVocabulary().types.flatMap((type, id) => (type === 4 ? [id] : [])));

for (const [name, [options, layout, seed]] of Object.entries(LAYOUTS)) {
  test(`a SentencePiece GGUF tokenizer, ${name}: @huggingface/tokenizers' ids on LlamaConverter's tokenizer.json, and back`, async () => {
    const vocabulary = sentencePieceVocabulary();
    const json = llamaConverterJson(vocabulary, layout);
    assert.ok(json.model.merges.length > 500, `${json.model.merges.length} merges`);
    const reference = new Tokenizer(json, {});
    const m = await lens.loadCheckpoint({ weights: llamaGguf(vocabulary.tokens.length, sentencePieceMetadata(vocabulary, options)) });
    try {
      assert.ok(m.hasTokenizer);
      let tokens = 0;
      let roundTrips = 0;
      let byteFallbacks = 0;
      const list = strings(seed);
      for (const text of list) {
        const expected = reference.encode(text).ids;
        const ids = Array.from(m.tokenize(text).ids);
        assert.deepEqual(ids, expected, `ids of ${JSON.stringify(text.slice(0, 200))}`);
        tokens += ids.length;
        if (ids.some((id) => vocabulary.types[id] === 6)) ++byteFallbacks;
        // back to the text: the tokens' bytes (the core's) and the reference's decoder, BOS and EOS
        // left out, the prefix's space taken off; for text without an added token's content and
        // ids without an added token (the core shows one as its content: '▁▁', not two spaces)
        // ('▁' itself reads as a space: no round trip)
        if (ADDED.some((t) => text.includes(t)) || ids.some((id) => ADDED_IDS.has(id)) || text.includes('▁')) continue;
        const utf8 = new TextDecoder('utf-8', { ignoreBOM: true }); // a text may start with U+FEFF
        const wellFormed = utf8.decode(new TextEncoder().encode(text));
        const body = ids.filter((id) => id > 2);
        const bytes = m.tokenTexts(body).flatMap(textBytes);
        let ours = utf8.decode(Uint8Array.from(bytes));
        if (layout.prefix && ours.startsWith(' ')) ours = ours.slice(1);
        assert.equal(ours, wellFormed, `the core's tokens of ${JSON.stringify(text.slice(0, 200))}`);
        assert.equal(reference.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false }), wellFormed, `decoded ${JSON.stringify(text.slice(0, 200))}`);
        ++roundTrips;
      }
      assert.ok(tokens > 20000, `${tokens} tokens compared`);
      assert.ok(roundTrips > 800, `${roundTrips} round trips`);
      assert.ok(byteFallbacks > 50, `${byteFallbacks} strings need byte fallback`);
      console.log(`# ${name}: ${list.length} strings, ${tokens} tokens equal, ${roundTrips} round trips, ${byteFallbacks} with byte fallback`);
    } finally {
      m.dispose();
    }
  });
}

// ---- Gemma's SentencePiece layout (general.architecture gemma2) ---------------------------------

/** A tiny random Gemma 2 (1 layer, d 8, head_dim 4) of `vocab` tokens, tied, with `tokenizer` metadata. */
function gemmaGguf(vocab, tokenizer) {
  const t = randomTensors(7);
  return writeGguf([
    ['general.architecture', STRING, 'gemma2'],
    ['gemma2.block_count', U32, 1], ['gemma2.context_length', U32, 64], ['gemma2.embedding_length', U32, 8],
    ['gemma2.feed_forward_length', U32, 16], ['gemma2.attention.head_count', U32, 2],
    ['gemma2.attention.head_count_kv', U32, 2], ['gemma2.attention.key_length', U32, 4],
    ['gemma2.attention.value_length', U32, 4], ['gemma2.attention.layer_norm_rms_epsilon', F32, 1e-6],
    ['gemma2.attention.sliding_window', U32, 32], ['gemma2.attn_logit_softcapping', F32, 50],
    ['gemma2.final_logit_softcapping', F32, 30],
    ...tokenizer,
  ], [
    t('token_embd.weight', [vocab, 8]), t('blk.0.attn_norm.weight', [8]), t('blk.0.attn_q.weight', [8, 8]),
    t('blk.0.attn_k.weight', [8, 8]), t('blk.0.attn_v.weight', [8, 8]), t('blk.0.attn_output.weight', [8, 8]),
    t('blk.0.attn_post_norm.weight', [8]), t('blk.0.ffn_norm.weight', [8]), t('blk.0.ffn_gate.weight', [16, 8]),
    t('blk.0.ffn_up.weight', [16, 8]), t('blk.0.ffn_down.weight', [8, 16]), t('blk.0.ffn_post_norm.weight', [8]),
    t('output_norm.weight', [8]),
  ]);
}

/**
 * The SentencePiece vocabulary in Gemma's order as llama.cpp's converter writes a Gemma file: <pad>
 * <eos> <bos> (control) and <unk> (unknown) first, then the byte pieces (<0x09> among them), the
 * merged pieces and characters but "\t" (as the older Gemma vocabularies, whose tab GemmaConverter
 * puts in <0x09>'s place), and the user-defined ones; scores as sentencePieceVocabulary's.
 */
function gemmaVocabulary() {
  const { tokens: llama, scores: llamaScores, types: llamaTypes } = sentencePieceVocabulary();
  const tokens = ['<pad>', '<eos>', '<bos>', '<unk>'];
  const scores = [0, 0, 0, 0];
  const types = [3, 3, 3, 2];
  llama.forEach((token, id) => {
    if (id < 3 || token === '\t') return; // the older Gemma vocabularies' missing tab
    tokens.push(token);
    scores.push(llamaScores[id]);
    types.push(llamaTypes[id]);
  });
  return { tokens, scores, types };
}

/**
 * The tokenizer.json transformers' GemmaConverter writes (with GemmaTokenizerFast's BOS): the
 * vocabulary with "\t" in place of <0x09> when it has no "\t" (GemmaSentencePieceExtractor's merges
 * see it so too), ids 0–2 scored 0; normalizer Replace(' ', '▁') alone; pre-tokenizer Split(' ',
 * merged_with_previous); BPE with byte fallback, fuse_unk and <unk> (id 3); <pad> <eos> <bos> <unk>
 * special added tokens, user-defined ones added tokens not special, none normalized; <bos> before
 * the text; decoder Replace, ByteFallback, Fuse (no Strip).
 */
function gemmaConverterJson({ tokens, scores, types }) {
  const pieces = tokens.includes('\t') ? tokens : tokens.map((t) => (t === '<0x09>' ? '\t' : t));
  const converterScores = scores.map((s, id) => (id < 3 ? 0 : s));
  return file({
    added_tokens: pieces.flatMap((t, id) => (types[id] === 2 || types[id] === 3
      ? [added(id, t, { special: true, normalized: false })]
      : types[id] === 4 ? [added(id, t, { special: false, normalized: false })] : [])),
    normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
    pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<bos>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [], special_tokens: { '<bos>': { id: '<bos>', ids: [2], tokens: ['<bos>'] } } },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: bpeModel(vocabOf(pieces), generateMerges(pieces, converterScores), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true }),
  });
}

test('a Gemma GGUF file\'s SentencePiece tokenizer: @huggingface/tokenizers\' ids on GemmaConverter\'s tokenizer.json', async () => {
  const vocabulary = gemmaVocabulary();
  assert.ok(vocabulary.tokens.includes('<0x09>') && !vocabulary.tokens.includes('\t'));
  const json = gemmaConverterJson(vocabulary);
  const reference = new Tokenizer(json, {});
  const metadata = [
    ['tokenizer.ggml.model', STRING, 'llama'],
    ['tokenizer.ggml.tokens', [ARRAY, STRING], vocabulary.tokens], ['tokenizer.ggml.scores', [ARRAY, F32], vocabulary.scores],
    ['tokenizer.ggml.token_type', [ARRAY, I32], vocabulary.types],
    ['tokenizer.ggml.unknown_token_id', U32, 3], ['tokenizer.ggml.bos_token_id', U32, 2], ['tokenizer.ggml.eos_token_id', U32, 1],
    ['tokenizer.ggml.padding_token_id', U32, 0], ['tokenizer.ggml.add_space_prefix', BOOL, false],
  ];
  const m = await lens.loadCheckpoint({ weights: gemmaGguf(vocabulary.tokens.length, metadata) });
  try {
    assert.equal(m.family, 'gemma2');
    assert.ok(m.hasTokenizer);
    let tokens = 0;
    let tabs = 0;
    const list = [...strings(44), 'a\tb', '\t\tindented', 'tab\t at the end\t'];
    for (const text of list) {
      const expected = reference.encode(text).ids;
      const ids = Array.from(m.tokenize(text).ids);
      assert.deepEqual(ids, expected, `ids of ${JSON.stringify(text.slice(0, 200))}`);
      assert.equal(ids[0], 2, 'the BOS first');
      tokens += ids.length;
      if (ids.includes(vocabulary.tokens.indexOf('<0x09>'))) ++tabs;
    }
    assert.ok(tokens > 20000, `${tokens} tokens compared`);
    assert.ok(tabs >= 3, `${tabs} strings hold a tab`);
    console.log(`# Gemma layout: ${list.length} strings, ${tokens} tokens equal, ${tabs} with a tab`);
    // the comparison can fail: Llama's layout (a space prefix) on the same file's vocabulary differs
    const llamaLayout = structuredClone(json);
    llamaLayout.normalizer = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, json.normalizer] };
    const other = new Tokenizer(llamaLayout, {});
    assert.ok(list.some((text) => JSON.stringify(other.encode(text).ids) !== JSON.stringify(Array.from(m.tokenize(text).ids))));
  } finally {
    m.dispose();
  }
});

// (The order of merges of equal scores — the longer left piece first — decides no id of these
// strings; tests/cpp/test_gguf_tokenizer.cpp checks it on merges worked out by hand.)
test('the SentencePiece comparison can fail: another merge order or layout gives other ids for some strings', async () => {
  const vocabulary = sentencePieceVocabulary();
  const m = await lens.loadCheckpoint({ weights: llamaGguf(vocabulary.tokens.length, sentencePieceMetadata(vocabulary)) });
  try {
    const list = strings(43).slice(0, 600);
    const right = llamaConverterJson(vocabulary, { prefix: true, bos: true, eos: false });
    const flips = {
      'merges in reverse': (j) => { j.model.merges.reverse(); },
      'no space prefix': (j) => { j.normalizer.normalizers.shift(); },
      'no byte fallback': (j) => { j.model.byte_fallback = false; },
      'no BOS': (j) => { j.post_processor = null; },
    };
    for (const [flip, change] of Object.entries(flips)) {
      const json = structuredClone(right);
      change(json);
      const reference = new Tokenizer(json, {});
      const differ = list.filter((text) => JSON.stringify(Array.from(m.tokenize(text).ids)) !== JSON.stringify(reference.encode(text).ids));
      assert.ok(differ.length > 0, `${flip}: no string differs`);
    }
  } finally {
    m.dispose();
  }
});

test('a SentencePiece GGUF vocabulary with only some byte tokens: the model loads, tokenize says why; malformed scores are refused', async () => {
  const vocabulary = sentencePieceVocabulary();
  const partial = { ...vocabulary, tokens: vocabulary.tokens.map((t) => (t === '<0x80>' ? 'x80' : t)) };
  const m = await lens.loadCheckpoint({ weights: llamaGguf(vocabulary.tokens.length, sentencePieceMetadata(partial)) });
  try {
    assert.equal(m.hasTokenizer, false);
    assert.throws(() => m.tokenize('hi'), /SentencePiece vocabulary has byte tokens for byte fallback but not 1 of them \(<0x80>\)/);
  } finally {
    m.dispose();
  }
  const n = vocabulary.tokens.length;
  const withScores = (scores) => sentencePieceMetadata({ ...vocabulary, scores });
  for (const [metadata, message] of [
    [sentencePieceMetadata(vocabulary).filter((e) => e[0] !== 'tokenizer.ggml.scores'), /GGUF: tokenizer.ggml.scores is missing/],
    [withScores(vocabulary.scores.slice(1)), new RegExp(`GGUF: tokenizer.ggml.scores has ${n - 1} entries for ${n} tokens`)],
    [withScores(vocabulary.scores.map((s, id) => (id === 300 ? NaN : s))), /GGUF: tokenizer.ggml.scores\[300\] is not a finite number/],
  ]) {
    await assert.rejects(lens.loadCheckpoint({ weights: llamaGguf(n, metadata) }), message);
  }
  // the module works afterwards
  const again = await lens.loadCheckpoint({ weights: llamaGguf(n, sentencePieceMetadata(vocabulary)) });
  assert.deepEqual(Array.from(again.tokenize('ab').ids), new Tokenizer(llamaConverterJson(vocabulary, { prefix: true, bos: true }), {}).encode('ab').ids);
  again.dispose();
});
