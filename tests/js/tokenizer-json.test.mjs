// tokenizer.json read by the core (lens.loadCheckpoint({ tokenizer })) against the Hub's own JS
// implementation, @huggingface/tokenizers 0.2.0, with its default add_special_tokens (the ids the
// model gets). No file is downloaded: BPE vocabularies are learned here from the repository's
// English text (cpp/attention/train/english_text.cpp) plus a few lines of other scripts, then
// written in the exact layout of each kind's real tokenizer.json: GPT-2, SmolLM2 (Digits +
// ByteLevel), Llama 3 (Split + ByteLevel, ignore_merges, a BOS), Qwen2 (NFC + Split), Llama 2
// (Prepend/Replace, byte fallback, fuse_unk), Metaspace ("first" without split, "always" with
// split and an unknown token), and the families of issue 31: GPT-NeoX/Pythia (NFC, runs of spaces
// as added tokens), Qwen3 (Qwen2's with its <think> and tool tokens), Gemma 2 and Gemma 3
// (Replace ' ' by '▁', Split(' '), byte fallback, <bos>; Gemma 3's 262 144-token vocabulary and
// the <image_soft_token> past it), OLMo 2 (cl100k's Split, Removed and inverted) and Phi-3 (Llama
// 2's with rstrip tokens). Each kind is compared (ids and token texts) on 1 300 seeded strings;
// GPT-2's real vocabulary in three layouts on 400 more; flipping any option the kinds rely on in
// the reference changes some ids, so the comparisons can fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer } from '@huggingface/tokenizers';

import { loadLens, mulberry32, writeSafetensors } from './support.mjs';
import { gpt2Config, gpt2Tensors, gpt2Tokenizer } from './checkpoint-support.mjs';
import { BYTE_CHAR, BYTE_LEVEL, CHAR_BYTE, GEMMA, GEMMA3_VOCAB, KINDS, QWEN2_PATTERN, SENTENCEPIECE, SPACE_MERGES,
  added, bpeModel, file, longPaste, splitThenBytes, strings, vocabOf } from './tokenizer-kinds.mjs';

const lens = await loadLens();

// ---- the comparison ------------------------------------------------------------------------------

/** A checkpoint (a tiny random GPT-2) whose vocabulary has the tokenizer's ids. */
async function load(json, modelVocab = null) {
  const reference = new Tokenizer(json, {});
  let largest = 0;
  for (const id of reference.get_vocab(true).values()) largest = Math.max(largest, id);
  const sizes = { layers: 1, d: 8, vocab: modelVocab ?? largest + 1, context: 16 };
  const model = await lens.loadCheckpoint({ weights: writeSafetensors(gpt2Tensors(sizes)), config: gpt2Config(sizes), tokenizer: json });
  return { reference, model };
}

/**
 * A reference token (as the vocabulary writes it, or as an added token was matched) as the text the
 * core shows for its id: an added token's content, else the vocabulary's form read as bytes.
 */
function tokenText(json, token, id) {
  const addedToken = json.added_tokens.find((t) => t.id === id);
  if (addedToken) return addedToken.content;
  let bytes;
  if (JSON.stringify(json.pre_tokenizer ?? {}).includes('ByteLevel')) {
    bytes = Uint8Array.from([...token], (c) => CHAR_BYTE.get(c));
  } else {
    const byte = json.model.byte_fallback && /^<0x([0-9A-F]{2})>$/.exec(token);
    bytes = byte ? Uint8Array.of(parseInt(byte[1], 16)) : new TextEncoder().encode(token.replaceAll('▁', ' '));
  }
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes); // a token may be U+FEFF itself
}

const SEEDS = { gpt2: 11, smollm2: 12, llama3: 13, qwen2: 14, llama2: 15, metaspace: 16, 'metaspace-unk': 17,
  pythia: 18, qwen3: 19, gemma2: 20, gemma3: 21, olmo2: 22, phi3: 23 };
// The model's vocabulary where it is not the tokenizer's: Gemma 3's text model stops before
// <image_soft_token>.
const MODEL_VOCAB = { gemma3: GEMMA3_VOCAB };
const counts = {};

for (const [kind, make] of Object.entries(KINDS)) {
  test(`${kind}: the core's ids equal @huggingface/tokenizers' on 1 300 strings`, async () => {
    const json = make();
    const modelVocab = MODEL_VOCAB[kind] ?? null;
    const { reference, model } = await load(json, modelVocab);
    try {
      const list = strings(SEEDS[kind]);
      assert.ok(list.length >= 1000);
      assert.ok(list.some((s) => s.length >= 5000), 'a long paste');
      let tokens = 0;
      let equal = 0;
      let refused = 0;
      for (const text of list) {
        const expected = reference.encode(text);
        const beyond = modelVocab === null ? undefined : expected.ids.find((id) => id >= modelVocab);
        if (beyond !== undefined) {
          // a token the model does not have: refused by name, and the module goes on
          const token = expected.tokens[expected.ids.indexOf(beyond)];
          assert.throws(() => model.tokenize(text), (error) => error.message.includes(`the text holds '${token}' ` +
            `(token ${beyond}), which the model's vocabulary of ${modelVocab} tokens does not have`));
          ++refused;
          ++equal;
          continue;
        }
        const ours = model.tokenize(text);
        assert.ok(ours.ids instanceof Int32Array);
        assert.deepEqual(Array.from(ours.ids), expected.ids, `${kind}: ids of ${JSON.stringify(text.slice(0, 300))}`);
        assert.deepEqual(ours.tokens, expected.tokens.map((t, i) => tokenText(json, t, expected.ids[i])),
          `${kind}: token texts of ${JSON.stringify(text.slice(0, 300))}`);
        tokens += expected.ids.length;
        ++equal;
      }
      counts[kind] = { strings: list.length, equal, tokens, ...(modelVocab === null ? {} : { refused }) };
      if (modelVocab !== null) assert.ok(refused > 0, 'some strings hold a token past the model');
      assert.ok(tokens > 10000, `${tokens} tokens compared`);
    } finally {
      model.dispose();
    }
  });
}

test('GPT-2\'s real vocabulary (50 257 tokens) in the GPT-2, Llama 3 and Qwen2 layouts', async () => {
  const { vocab, merges } = gpt2Tokenizer();
  const pairs = merges.split('\n').filter((line) => line && !line.startsWith('#version')).map((line) => line.split(' '));
  const n = Object.keys(vocab).length;
  const layouts = {
    gpt2: file({ ...KINDS.gpt2(), added_tokens: [added(n - 1, '<|endoftext|>', { normalized: true })],
      model: { ...KINDS.gpt2().model, vocab, merges: pairs.map((p) => p.join(' ')) } }),
    llama3: file({ ...KINDS.llama3(), added_tokens: [added(n, '<|begin_of_text|>'), added(n + 1, '<|eot_id|>')],
      model: bpeModel(vocab, pairs, { ignore_merges: true }) }),
    qwen2: file({ ...KINDS.qwen2(), added_tokens: [added(n, '<|im_start|>'), added(n + 1, '<|im_end|>')],
      model: bpeModel(vocab, pairs) }),
  };
  for (const [layout, json] of Object.entries(layouts)) {
    const started = performance.now();
    const { reference, model } = await load(json);
    const loaded = performance.now() - started;
    try {
      const list = strings(SEEDS[layout] + 100).slice(0, 400);
      list.push(longPaste(mulberry32(5)));
      for (const text of list) {
        assert.deepEqual(Array.from(model.tokenize(text).ids), reference.encode(text).ids, `${layout}: ids of ${JSON.stringify(text.slice(0, 300))}`);
      }
      console.log(`# GPT-2's vocabulary as ${layout}: ${list.length} strings equal; reference + core load ${loaded.toFixed(0)} ms`);
    } finally {
      model.dispose();
    }
  }
});

test('each option the kinds rely on changes ids somewhere: the comparisons can fail', async () => {
  // The reference with one option flipped disagrees with the core (on the real file) on some of
  // the strings: so the strings exercise ignore_merges, NFC, the BOS, Metaspace's "first", byte
  // fallback, fuse_unk, Digits, lstrip and the Split pattern, and those of the families below.
  const flips = {
    llama3: [(j) => { j.model.ignore_merges = false; }, (j) => { j.post_processor = null; },
      (j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = QWEN2_PATTERN; }],
    qwen2: [(j) => { j.normalizer = null; }, (j) => { j.added_tokens[3].normalized = false; }],
    smollm2: [(j) => { j.pre_tokenizer.pretokenizers.shift(); }, (j) => { j.added_tokens[3].lstrip = false; }],
    metaspace: [(j) => { j.pre_tokenizer.prepend_scheme = 'always'; }, (j) => { j.model.byte_fallback = false; }],
    'metaspace-unk': [(j) => { j.model.fuse_unk = false; }],
    llama2: [(j) => { j.added_tokens[3].normalized = false; }],
    // the families of issue 31: NFC, the runs of spaces, the prefix space; Qwen3's <think>; Gemma's
    // normalizer, byte fallback, <bos> and "\n"; OLMo 2's inverted Split and its pattern; Phi-3's
    // rstrip and <s>
    pythia: [(j) => { j.normalizer = null; }, (j) => { j.added_tokens.splice(2); },
      (j) => { j.pre_tokenizer = { ...j.pre_tokenizer, add_prefix_space: true }; }],
    qwen3: [(j) => { j.added_tokens = j.added_tokens.filter((t) => !t.content.includes('think>')); },
      (j) => { j.normalizer = null; }],
    gemma2: [(j) => { j.normalizer = null; }, (j) => { j.model.byte_fallback = false; }, (j) => { j.post_processor = null; },
      (j) => { j.added_tokens = j.added_tokens.filter((t) => t.content !== '\n'); }],
    olmo2: [(j) => { j.pre_tokenizer.pretokenizers[0].invert = false; },
      (j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = QWEN2_PATTERN; }],
    phi3: [(j) => { for (const t of j.added_tokens) t.rstrip = false; }, (j) => { j.post_processor = null; }],
  };
  for (const [kind, changes] of Object.entries(flips)) {
    const { model } = await load(KINDS[kind]());
    try {
      for (const change of changes) {
        const json = KINDS[kind]();
        change(json);
        const flipped = new Tokenizer(json, {});
        const differ = strings(SEEDS[kind]).filter((text) => {
          const ids = flipped.encode(text).ids;
          return JSON.stringify(ids) !== JSON.stringify(Array.from(model.tokenize(text).ids));
        }).length;
        assert.ok(differ > 0, `${kind}: ${change} changes no ids`);
        console.log(`# ${kind}: ${String(change).replace(/\s+/g, ' ')} changes the ids of ${differ} strings`);
      }
    } finally {
      model.dispose();
    }
  }
});

test('token texts: a space for Ġ and ▁, a byte for <0xNN>, <0xNN> for part of a character', async () => {
  const { model: llama2 } = await load(KINDS.llama2());
  const { model: llama3 } = await load(KINDS.llama3());
  try {
    const sp = vocabOf(SENTENCEPIECE.tokens);
    assert.deepEqual(llama2.tokenTexts([1, 2, sp['<0x0A>'], sp['<0x41>'], sp['<0xE4>'], sp['▁the']]), ['<s>', '</s>', '\n', 'A', '<0xE4>', ' the']);
    assert.deepEqual(Array.from(llama2.tokenize('the\n').ids), [1, sp['▁the'], sp['<0x0A>']]);
    assert.deepEqual(llama2.tokenize('the\n').tokens, ['<s>', ' the', '\n']);
    const bl = vocabOf(BYTE_LEVEL.tokens);
    const begin = SPACE_MERGES.tokens.length + 4;
    assert.deepEqual(llama3.tokenTexts([bl['Ġthe'], bl['Ċ'], bl[BYTE_CHAR[0xe4]], begin]), [' the', '\n', '<0xE4>', '<|begin_of_text|>']);
    assert.deepEqual(llama3.tokenize('').tokens, ['<|begin_of_text|>']);
  } finally {
    llama2.dispose();
    llama3.dispose();
  }
});

test('tokenizer.json kinds the core does not read are refused, naming the kind and what is supported', async () => {
  const sizes = { layers: 1, d: 8, vocab: 2000, context: 16 };
  const weights = writeSafetensors(gpt2Tensors(sizes));
  const config = gpt2Config(sizes);
  const before = lens.memory().allocatedBytes;
  const refused = async (tokenizer, pattern) => {
    await assert.rejects(lens.loadCheckpoint({ weights, config, tokenizer }), (error) => {
      assert.match(error.message, pattern);
      return true;
    });
  };
  const llama3 = KINDS.llama3();
  await refused({ ...llama3, model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { '[UNK]': 0 } } },
    /tokenizer.json's model.type 'WordPiece' is not supported; supported: BPE \(byte-level as GPT-2, GPT-NeoX\/Pythia, Llama 3, Qwen2\/Qwen3, OLMo 2 and SmolLM2 ship it, or SentencePiece-style as Llama 2, TinyLlama, Mistral, Phi-3 and Gemma\)/);
  await refused({ ...llama3, model: { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0]] } }, /model.type 'Unigram' is not supported/);
  await refused({ ...llama3, normalizer: { type: 'NFKC' } }, /normalizer type 'NFKC' is not supported; supported: NFC, Prepend, Replace of a string, and a Sequence of these/);
  await refused({ ...llama3, normalizer: { type: 'BertNormalizer', lowercase: true } }, /normalizer type 'BertNormalizer' is not supported/);
  await refused({ ...llama3, pre_tokenizer: { type: 'Whitespace' } }, /pre_tokenizer type 'Whitespace' is not supported; supported: ByteLevel, Split \(Llama 3's or Qwen2's pattern, or a string\), Digits, Metaspace/);
  await refused({ ...llama3, pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'Contiguous', invert: false } },
    /pre_tokenizer.behavior 'Contiguous' with invert false is not supported; supported for a String: 'Isolated' or 'MergedWithPrevious', with invert false/);
  const olmo2 = KINDS.olmo2();
  olmo2.pre_tokenizer.pretokenizers[0].invert = false;
  await refused(olmo2, /pre_tokenizer.pretokenizers\[0\].behavior 'Removed' with invert false is not supported; supported for a Regex: 'Isolated' with invert false, 'Removed' with invert true/);
  await refused({ ...llama3, pre_tokenizer: splitThenBytes('\\p{L}+|\\s+', true) },
    /pre_tokenizer.pretokenizers\[0\].pattern.Regex '\\p\{L\}\+\|\\s\+' is not supported; supported: Llama 3's pattern/);
  await refused({ ...llama3, post_processor: { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] } },
    /post_processor type 'BertProcessing' is not supported; supported: TemplateProcessing, ByteLevel/);
  await refused({ ...llama3, model: { ...llama3.model, vocab: [] } }, /tokenizer.json's model.vocab must be an object, got an array/);
  await refused({ ...llama3, model: { ...llama3.model, merges: [['Ġ', 'nonsense']] } }, /merges\[0\] 'Ġ nonsense' joins tokens that are not in the vocabulary/);
  await refused({ ...llama3, added_tokens: [{ id: 'x', content: '<|x|>' }] }, /added_tokens\[0\].id must be a token id/);
  await refused({ model: { type: 'BPE', vocab: { a: 0, b: 2 }, merges: [] } }, /the tokenizer's vocab has no token with id 1/);
  await refused({ ...KINDS.llama2(), model: { ...KINDS.llama2().model, unk_token: '<oops>' } }, /unk_token '<oops>' is not a token of the vocabulary/);
  const small = { ...sizes, vocab: 300 };
  await assert.rejects(lens.loadCheckpoint({ weights: writeSafetensors(gpt2Tensors(small)), config: gpt2Config(small), tokenizer: llama3 }),
    /the tokenizer has \d+ tokens but the model's vocabulary has 300/);
  assert.equal(lens.memory().allocatedBytes, before, 'a refused tokenizer frees what it allocated');
});

test('Gemma 3: nothing limits a 262 144-token vocabulary; the model\'s vocabulary limit holds', async () => {
  // The 262 144-row model of the comparison above loads (kMaxCheckpointVocab); one row more is
  // refused by the model's own limit, and the tokenizer is not what refuses it.
  const json = KINDS.gemma3();
  const sizes = { layers: 1, d: 8, vocab: GEMMA3_VOCAB + 1, context: 16 };
  await assert.rejects(lens.loadCheckpoint({ weights: writeSafetensors(gpt2Tensors(sizes)), config: gpt2Config(sizes), tokenizer: json }),
    /vocab must be between 2 and 262144, got 262145/);
  const { model } = await load(json, GEMMA3_VOCAB);
  try {
    assert.equal(model.config.vocab, GEMMA3_VOCAB);
    const id = vocabOf(GEMMA.tokens);
    assert.deepEqual(Array.from(model.tokenize('<start_of_turn>').ids), [id['<bos>'], id['<start_of_turn>']]);
    assert.deepEqual(model.tokenTexts([GEMMA3_VOCAB - 1, GEMMA3_VOCAB]), [`[filler${GEMMA3_VOCAB - GEMMA.tokens.length - 3}]`, '<image_soft_token>']);
    assert.throws(() => model.tokenize('a <image_soft_token>'), /the text holds '<image_soft_token>' \(token 262144\)/);
    assert.deepEqual(Array.from(model.tokenize('').ids), [id['<bos>']]);
  } finally {
    model.dispose();
  }
});

test('BOS and EOS: the ids the model gets for an empty text, as each post-processor adds them', async () => {
  // Pythia, Qwen3 and OLMo 2 add nothing; Gemma adds <bos> (id 2), Phi-3 <s> (id 1); none adds an
  // EOS. The reference agrees, with its default add_special_tokens.
  const expected = { pythia: [], qwen3: [], gemma2: [2], olmo2: [], phi3: [1] };
  for (const [kind, ids] of Object.entries(expected)) {
    const { reference, model } = await load(KINDS[kind]());
    try {
      assert.deepEqual(reference.encode('').ids, ids, kind);
      assert.deepEqual(Array.from(model.tokenize('').ids), ids, kind);
      const hello = reference.encode('Hello world').ids;
      assert.deepEqual(Array.from(model.tokenize('Hello world').ids), hello, kind);
      assert.deepEqual(hello.slice(0, ids.length), ids, kind);
    } finally {
      model.dispose();
    }
  }
});

test('summary: strings compared per kind', () => {
  for (const kind of Object.keys(KINDS)) assert.ok(counts[kind]?.equal === counts[kind]?.strings, kind);
  console.log(`# tokenizer.json kinds vs @huggingface/tokenizers 0.2.0: ${JSON.stringify(counts)}`);
});
